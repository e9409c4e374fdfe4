// train_dcgan.cc: `dlbench train --model dcgan` — samples/dcgan's generator and discriminator
// (dcgan_models.hpp, the functions the sample calls) trained by its custom step (both Adams
// updating from one forward pass) on Fashion-MNIST, beside its PyTorch twin
// (torch_dcgan.py) with --compare-torch.
//
// Both sides: codes of 64 drawn every step, batch --batch (128), Adam(2e-4, beta_1 0.5,
// eps 1e-7) twice, Keras' initializers, Dropout 0.3, images pixel/127.5 - 1, the same
// threads. Batches: the training set in epoch_order(seed, 0), full batches only.
//
// What is timed (wall clock, steady_clock): --warmup-steps untimed steps (the first traces and
// compiles), then --steps timed TrainStep::run calls, each with its host-side batch gather:
//   ms_per_step   the median step
// The twin runs once per --torch-modes entry; `ratio.ms_per_step` is the best twin's median
// over dlrt's (above 1: dlrt's step is that much faster).
#include <dlrt/nn.hpp>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "bench.hpp"
#include "common/mnist_images.hpp"
#include "dcgan/dcgan_models.hpp"
#include "flops.hpp"
#include "torch_run.hpp"

namespace dlbench {

namespace nn = dlrt::nn;

json run_train_dcgan(const TrainOptions& options) {
  TrainOptions o = options;
  if (o.batch == 0) o.batch = 128;
  if (o.steps < 1) throw std::runtime_error("--steps must be >= 1");
  if (o.torch_modes.empty()) o.torch_modes = {"eager", "channels_last", "compile"};
  json doc;
  doc["mode"] = "train";
  doc["model"] = "dcgan";
  if (o.compare_torch) o.python = torch_python(o);
  const std::filesystem::path script =
      o.compare_torch ? check_torch(o, "dlbench_torch_dcgan.py") : std::filesystem::path();
  doc["load_average_before"] = load_average();
  dlrt::Context ctx = make_context(o.threads, o.plugin_options);
  const dlrt::DeviceInfo info = ctx.device(find_device(ctx, o.device));
  doc["device"] = device_json(info);
  doc["threads"] = o.threads;
  doc["batch"] = o.batch;

  const nn::Array x = samples::mnist_images(
      samples::mnist_file(o.data, "train-images-idx3-ubyte"), 0, 1.f / 127.5f, -1.f);
  const int64_t batches = x.rows() / o.batch;
  if (batches < 1) throw std::runtime_error("--batch is more than the training set");
  const std::vector<int32_t> order = nn::epoch_order(o.seed, 0, x.rows(), true);

  const int64_t noise = 64;
  auto gen = dcgan::make_generator(ctx, noise);
  auto disc = dcgan::make_discriminator(ctx);
  nn::CompileConfig config;
  config.seed = o.seed;
  gen->compile(config);
  disc->compile(config);
  nn::StepOptions so;
  so.device = info.name;
  so.seed = o.seed;
  so.use_capture = o.capture;
  nn::BinaryCrossentropy bce(/*from_logits=*/true);
  nn::Adam d_opt(2e-4, 0.5), g_opt(2e-4, 0.5);
  nn::TrainStep step(ctx, [&](nn::Tape& t) -> nn::StepMetrics {
    dlrt::Value real = t.input("x");
    dlrt::Value fake = (*gen)(t.random_normal({real.dims()[0], noise}));
    dlrt::Value real_logits = (*disc)(real), fake_logits = (*disc)(fake);
    dlrt::Value d_loss = t.op("add", {t.loss(bce, t.ones_like(real_logits), real_logits),
                                      t.loss(bce, t.zeros_like(fake_logits), fake_logits)});
    dlrt::Value g_loss = t.loss(bce, t.ones_like(fake_logits), fake_logits);
    t.minimize(d_loss, d_opt, disc->trainable_variables(), "d_optimizer");
    t.minimize(g_loss, g_opt, gen->trainable_variables(), "g_optimizer");
    return {{"d_loss", d_loss}, {"g_loss", g_loss}};
  }, so);
  auto batch_at = [&](int64_t s) {
    return samples::gather_rows(x, order, (s % batches) * o.batch, o.batch);
  };

  const double t0 = now_us();
  int64_t s = 0;
  for (; s < std::max<int64_t>(1, o.warmup_steps); ++s) step.run({{"x", batch_at(s)}});
  doc["compile_and_warmup_seconds"] = (now_us() - t0) * 1e-6;
  std::vector<double> step_us;
  nn::Logs last;
  for (int64_t k = 0; k < o.steps; ++k, ++s) {
    const double a = now_us();
    last = step.run({{"x", batch_at(s)}});
    step_us.push_back(now_us() - a);
  }
  const double dlrt_ms = stats_of(step_us).median_us * 1e-3;
  doc["steps"] = o.steps;
  doc["warmup_steps"] = o.warmup_steps;
  doc["ms_per_step"] = dlrt_ms;
  doc["d_loss"] = last.at(0).second;  // of the last step
  doc["g_loss"] = last.at(1).second;
  doc["load_average_after"] = load_average();

  // What train_rounds.cc reads (as for every model): dlrt's step, its FLOP, the anchors'.
  doc["step_seconds"] = dlrt_ms * 1e-3;
  doc["step_seconds_source"] = "median of the timed steps (ms_per_step)";
  doc["flop_per_step"] = static_cast<double>(o.batch) * dcgan_train_flop_per_image();
  doc["flop_count"] = "convolutions and dense layers, the least work of both gradients (tools/dlbench/flops.hpp)";

  if (o.compare_torch) {
    json twins = json::object(), anchors = json::object();
    for (const std::string& mode : o.torch_modes) {
      doc["load_average_before_torch_" + mode] = load_average();
      std::ostringstream cmd;
      cmd << quoted(o.python) << " " << quoted(script.string()) << " --data " << quoted(o.data)
          << " --threads " << o.threads << " --steps " << o.steps << " --warmup-steps "
          << o.warmup_steps << " --batch " << o.batch << " --seed " << o.seed
          << (mode == "compile" ? " --compile" : "")
          << (mode == "channels_last" ? " --channels-last" : "");
      json t = run_twin_mode(cmd.str(), "torch_dcgan.py", mode);
      anchors[mode] = t.contains("unavailable")
                          ? json{{"unavailable", t.at("unavailable")}}
                          : json{{"step_seconds", t.at("ms_per_step").get<double>() * 1e-3}};
      twins[mode] = std::move(t);
    }
    doc["torch"] = twins;
    doc["anchors"] = anchors;
    const std::string best_mode = best_anchor(anchors);
    if (!best_mode.empty())
      doc["ratio"] = {{"ms_per_step", twins[best_mode].at("ms_per_step").get<double>() / dlrt_ms},
                      {"against", best_mode}};
  }
  return doc;
}

}  // namespace dlbench
