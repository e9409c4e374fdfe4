// train_vae.cc: `dlbench train --model vae` — samples/vae's convolutional VAE (vae_model.hpp,
// the functions the sample calls) trained by its custom step (nn::TrainStep) on Fashion-MNIST,
// beside its PyTorch twin (torch_vae.py) with --compare-torch.
//
// Both sides: latent 16, batch --batch (128), Adam(1e-3, eps 1e-7), Keras' initializers,
// x = pixel/255, one N(0, I) sample of z per image and step, the same threads. Batches are the
// training set in epoch_order(seed, 0) (the twin: its own seeded permutation), full batches
// only.
//
// What is timed (wall clock, steady_clock): --warmup-steps untimed steps (the first traces and
// compiles the step; they train too), then --steps timed steps, each TrainStep::run including
// the host-side batch gather and the feed copy, as the twin's step includes its batch slice:
//   ms_per_step         the median step
//   steps_per_second    steps / the timed steps' total
// The twin runs once per --torch-modes entry (eager, channels_last, compile); `ratio` is
// dlrt's steps per second over the best of them.
#include <dlrt/nn.hpp>
#include <dlrt/nn/plan.hpp>  // model.plan()

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "bench.hpp"
#include "flops.hpp"
#include "torch_run.hpp"
#include "common/mnist_images.hpp"
#include "vae/vae_model.hpp"

namespace dlbench {
namespace {

namespace nn = dlrt::nn;
namespace fs = std::filesystem;

json run_twin(const TrainOptions& o, const fs::path& script, const std::string& mode) {
  std::ostringstream cmd;
  cmd << quoted(o.python) << " " << quoted(script.string()) << " --data " << quoted(o.data)
      << " --threads " << o.threads << " --steps " << o.steps << " --warmup-steps "
      << o.warmup_steps << " --batch " << o.batch << " --seed " << o.seed
      << (mode == "compile" ? " --compile" : "") << (mode == "channels_last" ? " --channels-last" : "");
  return run_twin_mode(cmd.str(), "torch_vae.py", mode);
}

}  // namespace

json run_train_vae(const TrainOptions& options) {
  TrainOptions o = options;
  if (o.batch == 0) o.batch = 128;
  if (o.torch_modes.empty()) o.torch_modes = {"eager", "channels_last", "compile"};
  if (o.steps < 1) throw std::runtime_error("--steps must be >= 1");
  json doc;
  doc["mode"] = "train";
  doc["model"] = "vae";
  if (o.compare_torch) o.python = torch_python(o);
  const fs::path script = o.compare_torch ? check_torch(o, "dlbench_torch_vae.py") : fs::path();
  doc["load_average_before"] = load_average();
  dlrt::Context ctx = make_context(o.threads, o.plugin_options);
  const dlrt::DeviceInfo info = ctx.device(find_device(ctx, o.device));
  doc["device"] = device_json(info);
  doc["threads"] = o.threads;
  doc["batch"] = o.batch;

  const nn::Array x = samples::mnist_images(
      samples::mnist_file(o.data, "train-images-idx3-ubyte"), 0, 1.f / 255.f, 0.f);
  const int64_t total = o.warmup_steps + o.steps;
  if (total * o.batch > x.rows())
    throw std::runtime_error("--warmup-steps + --steps of --batch need " +
                             std::to_string(total * o.batch) + " images; the set has " +
                             std::to_string(x.rows()));
  const std::vector<int32_t> order = nn::epoch_order(o.seed, 0, x.rows(), true);

  vae::Vae m = vae::make_vae(ctx, 16);
  nn::CompileConfig config;
  config.seed = o.seed;
  m.encoder->compile(config);
  m.decoder->compile(config);
  int64_t params = 0;
  for (nn::Model* model : {m.encoder.get(), m.decoder.get()})
    for (const auto& v : model->plan().state) {
      int64_t k = 1;
      for (int64_t d : v.dims) k *= d;
      params += k;
    }
  doc["parameters"] = params;
  nn::StepOptions so;
  so.device = info.name;
  so.seed = o.seed;
  so.use_capture = o.capture;
  nn::Adam adam(1e-3);
  nn::TrainStep step(ctx, [&](nn::Tape& t) -> nn::StepMetrics {
    dlrt::Value loss = t.mean(vae::neg_elbo_per_image(t, m, t.input("x"), true));
    std::vector<nn::Variable> vars = m.encoder->trainable_variables();
    for (const nn::Variable& v : m.decoder->trainable_variables()) vars.push_back(v);
    t.minimize(loss, adam, vars);
    return {{"loss", loss}};
  }, so);

  auto batch_at = [&](int64_t s) { return samples::gather_rows(x, order, s * o.batch, o.batch); };

  const double t0 = now_us();
  int64_t s = 0;
  for (; s < std::max<int64_t>(1, o.warmup_steps); ++s) step.run({{"x", batch_at(s)}});
  doc["compile_and_warmup_seconds"] = (now_us() - t0) * 1e-6;
  std::vector<double> step_us;
  double loss_sum = 0;
  const double t1 = now_us();
  for (int64_t k = 0; k < o.steps; ++k, ++s) {
    const double a = now_us();
    loss_sum += step.run({{"x", batch_at(s % (x.rows() / o.batch))}})[0].second;
    step_us.push_back(now_us() - a);
  }
  const double seconds = (now_us() - t1) * 1e-6;
  doc["steps"] = o.steps;
  doc["warmup_steps"] = o.warmup_steps;
  doc["train_seconds"] = seconds;
  doc["steps_per_second"] = static_cast<double>(o.steps) / seconds;
  doc["ms_per_step"] = stats_of(step_us).median_us * 1e-3;
  doc["loss"] = loss_sum / static_cast<double>(o.steps);  // negative ELBO, nats per image
  doc["load_average_after"] = load_average();

  // What train_rounds.cc reads (as for every model): dlrt's step, its FLOP, the anchors'.
  doc["step_seconds"] = seconds / static_cast<double>(o.steps);
  doc["step_seconds_source"] = "train_seconds / steps";
  doc["flop_per_step"] = static_cast<double>(o.batch) * vae_train_flop_per_image();
  doc["flop_count"] = "convolutions and dense layers, forward and both gradients (tools/dlbench/flops.hpp)";

  if (o.compare_torch) {
    json twins = json::object(), anchors = json::object();
    for (const std::string& mode : o.torch_modes) {
      doc["load_average_before_torch_" + mode] = load_average();
      json t = run_twin(o, script, mode);
      anchors[mode] = t.contains("unavailable")
                          ? json{{"unavailable", t.at("unavailable")}}
                          : json{{"step_seconds", 1.0 / t.at("steps_per_second").get<double>()}};
      twins[mode] = std::move(t);
    }
    doc["torch"] = twins;
    doc["anchors"] = anchors;
    // dlrt over torch's best: above 1 means dlrt takes more steps per second (target 1.5).
    const std::string best_mode = best_anchor(anchors);
    if (!best_mode.empty())
      doc["ratio"] = {{"steps_per_second", doc["steps_per_second"].get<double>() /
                                               twins[best_mode].at("steps_per_second").get<double>()},
                      {"against", best_mode}};
  }
  return doc;
}

}  // namespace dlbench
