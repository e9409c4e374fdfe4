// train_text.cc: `dlbench train --model char_transformer` — samples/char_transformer's GPT
// (models.hpp's gpt(), the function the sample calls) trained on byte windows of a text corpus
// (Debian's fortunes by default), beside its PyTorch twin (torch_char_transformer.py) with
// --compare-torch.
//
// Both sides: V = 256, T = --context (128), d 128, 4 heads, 4 blocks, batch --batch (32),
// Keras' initializers, AdamW(1e-3, weight decay 0.004, eps 1e-7) with global clipnorm 1 at a
// constant rate, windows at seeded uniform offsets of the training part (the corpus less its
// last 10%), the same threads.
//
// What is timed (wall clock, steady_clock): --warmup-steps untimed steps (a fit stopped from a
// callback; they train too), then --steps timed steps in one fit without validation:
//   tokens_per_second = steps * batch * T / that fit's epoch time
//   ms_per_step       median gap between on_train_batch_end calls
// Then, untimed: val_loss over --val-windows consecutive windows from the start of the
// validation part, in nats and bits per character; the twin reports the same windows, so
// "loss after the same number of steps" compares like with like. The twin runs once per
// --torch-modes entry (eager, compile); `ratio.tokens_per_second` is dlrt's over the best.
#include <dlrt/nn.hpp>
#include <dlrt/nn/plan.hpp>  // model.plan()

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "bench.hpp"
#include "char_transformer/models.hpp"
#include "flops.hpp"
#include "torch_run.hpp"

namespace dlbench {
namespace {

namespace nn = dlrt::nn;
namespace ct = char_transformer;

json run_twin(const TrainOptions& o, const std::filesystem::path& script, const std::string& mode) {
  const bool compile = mode == "compile";
  std::ostringstream cmd;
  cmd << quoted(o.python) << " " << quoted(script.string()) << " --data " << quoted(o.data)
      << " --threads " << o.threads << " --steps " << o.steps << " --warmup-steps "
      << o.warmup_steps << " --batch " << o.batch << " --context " << o.context
      << " --seed " << o.seed << " --val-windows " << o.val_windows
      << (compile ? " --compile" : "");
  return run_twin_mode(cmd.str(), "torch_char_transformer.py", mode);
}

}  // namespace

json run_train_text(const TrainOptions& options) {
  TrainOptions o = options;
  if (o.batch == 0) o.batch = 32;
  if (o.data == TrainOptions().data) o.data = "/usr/share/games/fortunes";
  if (o.steps < 1) throw std::runtime_error("--steps must be >= 1");
  json doc;
  doc["mode"] = "train";
  doc["model"] = o.model;
  if (o.compare_torch) o.python = torch_python(o);
  const std::filesystem::path script =
      o.compare_torch ? check_torch(o, "dlbench_torch_char_transformer.py") : std::filesystem::path();
  doc["load_average_before"] = load_average();
  dlrt::Context ctx = make_context(o.threads, o.plugin_options);
  const dlrt::DeviceInfo info = ctx.device(find_device(ctx, o.device));
  doc["device"] = device_json(info);
  doc["threads"] = o.threads;
  doc["batch"] = o.batch;
  doc["context"] = o.context;

  const nn::TextCorpus corpus = nn::TextCorpus::read(o.data);
  auto [train, val] = corpus.split(0.1);
  const int64_t T = o.context;
  const nn::TextWindows warm_w = train.windows(T, std::max<int64_t>(1, o.warmup_steps) * o.batch, o.seed);
  const nn::TextWindows timed_w = train.windows(T, o.steps * o.batch, o.seed + 1);
  const nn::TextWindows vw = val.sequential_windows(T);
  const nn::Array val_x = vw.x.head(std::min(o.val_windows, vw.x.rows()));
  const nn::Array val_y = vw.y.head(std::min(o.val_windows, vw.y.rows()));
  doc["data"] = o.data;
  doc["train_bytes"] = train.size();
  doc["val_windows"] = val_x.rows();

  ct::ModelConfig net;
  net.context = T;
  nn::Input in({T});
  nn::Model model(ctx, in, ct::gpt(in, net), "char_transformer");
  nn::CompileConfig config;
  config.device = info.name;
  config.seed = o.seed;
  config.use_capture = o.capture;
  nn::AdamW opt(1e-3, 0.004, 0.9, 0.999, 1e-7);
  opt.set_global_clipnorm(1.0);
  const double t0 = now_us();
  model.compile(opt, nn::SparseCategoricalCrossentropy(/*from_logits=*/true), {}, config);
  int64_t params = 0;
  for (const auto& v : model.plan().state) {
    if (v.owner >= 0 || v.name.rfind("optimizer/", 0) == 0 || !v.trainable) continue;
    int64_t k = 1;
    for (int64_t d : v.dims) k *= d;
    params += k;
  }
  doc["parameters"] = params;

  nn::FitOptions fit;
  fit.epochs = 1;
  fit.batch_size = o.batch;
  fit.shuffle = false;
  fit.progress.verbose = 0;  // stdout carries the JSON only
  auto warm = std::make_shared<Timer>(std::max<int64_t>(1, o.warmup_steps));
  fit.callbacks = {warm};
  try {
    model.fit(warm_w.x, warm_w.y, fit);
  } catch (const WarmupDone&) {
  }
  doc["compile_seconds"] = (warm->train_begin - t0) * 1e-6;

  auto timer = std::make_shared<Timer>(0);
  fit.callbacks = {timer};
  const nn::History h = model.fit(timed_w.x, timed_w.y, fit);
  const double epoch_s = timer->epoch_us.at(0) * 1e-6;
  const double tokens = static_cast<double>(o.steps * o.batch * T);
  doc["steps"] = o.steps;
  doc["warmup_steps"] = o.warmup_steps;
  doc["train_seconds"] = epoch_s;
  doc["tokens_per_second"] = tokens / epoch_s;
  doc["ms_per_step"] = stats_of(timer->step_us).median_us * 1e-3;
  doc["loss"] = h.last("loss");  // the timed steps' mean training loss (nats per byte)
  const nn::Logs v = model.evaluate(val_x, val_y, o.batch);
  doc["val_loss"] = v.at(0).second;
  doc["val_bits_per_char"] = v.at(0).second / std::log(2.0);
  doc["load_average_after"] = load_average();

  // What train_rounds.cc reads (as for every model): dlrt's step, its FLOP, the anchors'.
  const double window = static_cast<double>(o.batch * T);
  doc["step_seconds"] = epoch_s / static_cast<double>(o.steps);
  doc["step_seconds_source"] = "train_seconds / steps";
  doc["flop_per_step"] = static_cast<double>(o.batch) *
                         char_transformer_train_flop_per_window(T, net.d_model, net.layers,
                                                                ct::kVocabulary);
  doc["flop_count"] = "matmuls only, forward 2*m*n*k each, backward twice (tools/dlbench/flops.hpp)";

  if (o.compare_torch) {
    if (o.torch_modes.empty()) o.torch_modes = {"eager", "compile"};
    json twins = json::object(), anchors = json::object();
    for (const std::string& mode : o.torch_modes) {
      if (mode == "channels_last") {  // a memory format of 4-d tensors: nothing to convolve
        anchors[mode] = {{"unavailable", "channels_last does not apply: the model has no "
                                         "convolutions (expected eager or compile)"}};
        continue;
      }
      doc["load_average_before_torch_" + mode] = load_average();
      json t = run_twin(o, script, mode);
      anchors[mode] = t.contains("unavailable")
                          ? json{{"unavailable", t.at("unavailable")}}
                          : json{{"step_seconds", window / t.at("tokens_per_second").get<double>()}};
      twins[mode] = std::move(t);
    }
    doc["torch"] = twins;
    doc["anchors"] = anchors;
    const std::string best_mode = best_anchor(anchors);
    if (!best_mode.empty()) {
      const json& b = twins[best_mode];
      // dlrt over torch's best: above 1 means dlrt trains more tokens per second; the
      // target is >= 1.5. val_loss: dlrt's relative excess, target <= 0.02.
      doc["ratio"] = {{"tokens_per_second",
                       (tokens / epoch_s) / b.at("tokens_per_second").get<double>()},
                      {"against", best_mode},
                      {"val_loss_excess", v.at(0).second / b.at("val_loss").get<double>() - 1}};
    }
  }
  return doc;
}

}  // namespace dlbench
