// train.cc: `dlbench train` — whole epochs of a model through the Keras-style layer
// (dlrt/nn.hpp), and optionally the same run in PyTorch (torch_reference.py) for the ratio the
// speed targets are stated in. --model picks the network:
//   cnn       the reference workload (docs/design.md section 9), built exactly as
//             samples/mnist_cnn builds it; Adam(1e-3), batch 64 by default
//   resnet20  samples/resnet's ResNet-20 (samples/resnet/resnet20.hpp, the same function the
//             sample calls), a functional model with batch norm; Adam(1e-3), batch 128 by
//             default, as the sample
// The PyTorch twin gets the same --model, batch, epochs, limit, threads and warm-up steps, and
// runs once per --torch-modes entry: eager (NCHW), channels_last and compile (torch.compile of
// the NCHW model), all three by default; `torch` is the fastest run (PyTorch's best
// configuration, which the ratio is against), `torch_runs` holds every run and `anchors` each
// mode's step time, or why it could not run (an old torch without torch.compile, say).
//
// What is timed, and how (wall clock on the host, steady_clock):
//   compile_seconds   model.compile() (the layer plan), then the first fit's set-up: the graph,
//                     the training step's executable (placement, buffers, kernels) and the
//                     upload of the training set; then evaluate's executables (full and last
//                     partial batch), compiled by evaluating a slice of the test set.
//   warm-up           --warmup-steps training steps, not timed (a fit stopped from a callback).
//   epochs            every epoch from on_epoch_begin to on_epoch_end (fit has no validation
//                     data here, so nothing else runs between them); ms_per_step is the median
//                     of the gaps between consecutive on_train_batch_end calls.
//   val_seconds       model.evaluate over the whole test set, batch 64, executables warm.
// Not timed: kernels_per_step (kernel launches of one uncaptured step), step_runs and
// captured_replays (steps that replayed a captured graph: one launch each, CUDA Graphs) of the
// training step's executable, from dlrt_executable_run_stats, over the warm-up and the epochs.
// The warm-up steps train the model too (as torch_reference.py's do), so the final figures
// are those of N epochs plus K steps.
#include <dlrt/nn.hpp>
#include <dlrt/nn/plan.hpp>  // model.plan()

#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "bench.hpp"
#include "torch_run.hpp"
#include "resnet/resnet20.hpp"

namespace dlbench {
namespace {

namespace nn = dlrt::nn;
namespace fs = std::filesystem;

// "<dir>/<name>", or "<dir>/<name>.gz" when only that exists (MNIST's file layout).
std::string data_file(const std::string& dir, const std::string& name) {
  for (const std::string& n : {name, name + ".gz"})
    if (fs::exists(fs::path(dir) / n)) return (fs::path(dir) / n).string();
  throw std::runtime_error("--data " + dir + ": no " + name + " or " + name +
                           ".gz there (expected MNIST's file layout)");
}

// Images (N,H,W) u8 -> (N,H,W,1); labels (N) u8.
nn::Array load(const std::string& path, bool images) {
  dlrt::IdxArray a = dlrt::read_idx(path);
  std::vector<int64_t> dims = a.dims();
  if (a.dtype() != DLRT_U8 || dims.size() != (images ? 3u : 1u))
    throw std::runtime_error(path + ": holds " + dlrt::dtype_name(a.dtype()) + " of rank " +
                             std::to_string(dims.size()) + "; expected u8 " +
                             (images ? "images (N, H, W)" : "labels (N)"));
  if (images) dims.push_back(1);
  const auto* p = static_cast<const uint8_t*>(a.data());
  return nn::Array(DLRT_U8, dims, std::vector<uint8_t>(p, p + a.bytes()));
}

// Training FLOP per sample from the layers' shapes: a layer call with a "kernel" (Conv2D,
// Dense) does 2 x (output elements) x (kernel elements per output channel) in its forward
// pass, and as much again for each of its two gradients (filter and data) — except that a
// call on the model's input needs no data gradient (the images take none). Pooling,
// normalization, activations, the loss and Adam are left out, as in docs/design.md's 16.4
// MFLOP. Walks the compiled plan, so it counts a functional model's every node.
double train_flop_per_sample(const nn::Model& model) {
  const nn::detail::Plan& plan = model.plan();
  std::vector<nn::Shape> slots = plan.inputs;  // slot shapes: the inputs, then node outputs
  double total = 0;
  for (const nn::detail::PlanNode& node : plan.nodes) {
    const nn::Layer& layer = *plan.layers[node.layer];
    std::vector<nn::Shape> in;
    bool on_input = true;
    for (size_t s : node.inputs) {
      in.push_back(slots[s]);
      on_input &= s < plan.inputs.size();
    }
    const nn::Shape out = layer.output_shape_multi(in);
    for (const nn::ParamSpec& p : layer.params_multi(in)) {
      if (p.name != "kernel" || p.dims.empty()) continue;
      double outs = 1, kernel = 1;
      for (int64_t d : out) outs *= static_cast<double>(d);
      for (int64_t d : p.dims) kernel *= static_cast<double>(d);
      const double fwd = 2.0 * outs * kernel / static_cast<double>(p.dims.back());
      total += (on_input ? 2.0 : 3.0) * fwd;
    }
    slots.push_back(out);
  }
  return total;
}

// One run of the twin in --torch-modes' `mode`: eager (NCHW), channels_last, or compile
// (torch.compile of the NCHW model); a mode that fails comes back as {"unavailable": why}.
json run_torch(const TrainOptions& o, const fs::path& script, int64_t warmup,
               const std::string& mode) {
  const std::string cmd =
      quoted(o.python) + " " + quoted(script.string()) + " --data " + quoted(o.data) +
      " --threads " + std::to_string(o.threads) + " --epochs " + std::to_string(o.epochs) +
      " --batch " + std::to_string(o.batch) + " --warmup-steps " + std::to_string(warmup) +
      " --limit " + std::to_string(o.limit) + " --model " + o.model + " --precision " +
      o.precision + " --memory-format " + (mode == "channels_last" ? "channels_last" : "contiguous") +
      (mode == "compile" ? " --compile" : "");
  return run_twin_mode(cmd, "torch_reference.py", mode);
}

// The network of --model, compiled the same way for both: Adam(1e-3), sparse categorical
// cross-entropy from logits, accuracy.
std::unique_ptr<nn::Model> make_model(const dlrt::Context& ctx, const std::string& kind,
                                      const nn::Shape& sample) {
  if (kind == "cnn")  // the reference workload, as samples/mnist_cnn builds it
    return std::make_unique<nn::Sequential>(
        ctx,
        std::initializer_list<nn::LayerRef>{nn::Input(sample), nn::Conv2D(32, {3, 3}, "relu"),
                                            nn::MaxPool2D({2, 2}), nn::Conv2D(64, {3, 3}, "relu"),
                                            nn::MaxPool2D({2, 2}), nn::Conv2D(64, {3, 3}, "relu"),
                                            nn::Flatten(), nn::Dense(64, "relu"), nn::Dense(10)});
  if (kind == "resnet20") {  // samples/resnet's network
    nn::Input in(sample);
    return std::make_unique<nn::Model>(ctx, in, resnet::resnet20(in, 10), "resnet20");
  }
  throw std::runtime_error("--model " + kind + ": unknown; expected cnn or resnet20");
}

}  // namespace

json run_train(const TrainOptions& options) {
  if (options.precision != "f32" && options.model != "cnn" && options.model != "resnet20")
    throw std::runtime_error("--precision " + options.precision + ": only --model cnn and " +
                             "resnet20 take a 16-bit policy yet, got --model " + options.model);
  if (options.model == "char_transformer") return run_train_text(options);
  if (options.model == "vae") return run_train_vae(options);
  if (options.model == "dcgan") return run_train_dcgan(options);
  TrainOptions o = options;
  if (o.model != "cnn" && o.model != "resnet20")
    throw std::runtime_error("--model " + o.model +
                             ": unknown; expected cnn, resnet20 or char_transformer");
  if (o.batch == 0) o.batch = o.model == "resnet20" ? 128 : workload::kBatch;
  json doc;
  doc["mode"] = "train";
  doc["model"] = o.model;
  // The twin's modes (--torch-modes): eager (NCHW), channels_last, compile; all three by
  // default.
  if (o.torch_modes.empty()) o.torch_modes = {"eager", "channels_last", "compile"};
  if (o.compare_torch) o.python = torch_python(o);
  const fs::path torch_script =
      o.compare_torch ? check_torch(o, "dlbench_torch_reference.py") : fs::path();
  doc["load_average_before"] = load_average();
  dlrt::Context ctx = make_context(o.threads, o.plugin_options);
  const dlrt::DeviceInfo info = ctx.device(find_device(ctx, o.device));
  doc["device"] = device_json(info);
  doc["threads"] = o.threads;
  doc["capture"] = o.capture;
  doc["epochs"] = o.epochs;
  doc["batch"] = o.batch;

  nn::Array x_train = load(data_file(o.data, "train-images-idx3-ubyte"), true);
  nn::Array y_train = load(data_file(o.data, "train-labels-idx1-ubyte"), false);
  const nn::Array x_test = load(data_file(o.data, "t10k-images-idx3-ubyte"), true);
  const nn::Array y_test = load(data_file(o.data, "t10k-labels-idx1-ubyte"), false);
  if (o.limit > 0 && o.limit < x_train.rows()) {
    x_train = x_train.head(o.limit);
    y_train = y_train.head(o.limit);
  }
  const int64_t n = x_train.rows(), batch = std::min<int64_t>(o.batch, n);
  const int64_t steps = (n + batch - 1) / batch;
  const int64_t warmup = std::min<int64_t>(o.warmup_steps, steps);
  doc["data"] = o.data;
  doc["train_samples"] = n;
  doc["test_samples"] = x_test.rows();
  doc["steps_per_epoch"] = steps;
  doc["warmup_steps"] = warmup;

  const double t0 = now_us();
  std::unique_ptr<nn::Model> owned = make_model(ctx, o.model, x_train.sample_shape());
  nn::Model& model = *owned;
  nn::CompileConfig config;
  config.device = info.name;
  config.seed = o.seed;
  config.use_capture = o.capture;
  config.dtype_policy = o.precision == "bf16"  ? "mixed_bfloat16"
                        : o.precision == "f16" ? "mixed_float16"
                                               : "float32";
  doc["precision"] = o.precision;
  doc["dtype_policy"] = config.dtype_policy;
  model.compile(nn::Adam(1e-3), nn::SparseCategoricalCrossentropy(/*from_logits=*/true),
                {"accuracy"}, config);
  const double plan_us = now_us() - t0;
  // Trainable parameters, from the plan (93,322 for cnn; 272,186 for resnet20, whose
  // 1,568 moving statistics are counted apart).
  int64_t params = 0, fixed = 0;
  for (const auto& v : model.plan().state) {
    if (v.owner >= 0 || v.name.rfind("optimizer/", 0) == 0) continue;  // optimizer state
    int64_t k = 1;
    for (int64_t d : v.dims) k *= d;
    (v.trainable ? params : fixed) += k;
  }
  doc["non_trainable_parameters"] = fixed;
  doc["parameters"] = params;

  nn::FitOptions fit;
  fit.epochs = 1;
  fit.batch_size = batch;
  fit.progress.verbose = 0;  // stdout carries the JSON only
  // Warm-up fit: its set-up (graph, step executable, upload) is the compile time.
  auto warm = std::make_shared<Timer>(warmup > 0 ? warmup : 1);
  fit.callbacks = {warm};
  double setup_us = 0;
  {
    const double t = now_us();
    try {
      model.fit(x_train, y_train, fit);
    } catch (const WarmupDone&) {
    }
    setup_us = warm->train_begin - t;
  }
  // evaluate's executables (one per batch size: the full one and the last partial one).
  const double te = now_us();
  const int64_t nt = x_test.rows(), vb = std::min<int64_t>(o.batch, nt);
  model.evaluate(x_test.head(std::min(nt, vb + nt % vb)), y_test.head(std::min(nt, vb + nt % vb)),
                 o.batch);
  const double eval_compile_us = now_us() - te;
  doc["compile_seconds"] = (plan_us + setup_us + eval_compile_us) * 1e-6;
  doc["compile_parts_seconds"] = {{"plan", plan_us * 1e-6},
                                  {"train_step_and_upload", setup_us * 1e-6},
                                  {"evaluate", eval_compile_us * 1e-6}};

  // The timed epochs.
  auto timer = std::make_shared<Timer>(0);
  fit.epochs = o.epochs;
  fit.callbacks = {timer};
  const double tf = now_us();
  const nn::History h = model.fit(x_train, y_train, fit);
  doc["upload_seconds"] = (timer->train_begin - tf) * 1e-6;  // set-up of a fit already compiled
  const dlrt_run_stats step_stats = model.train_executable().run_stats();
  doc["kernels_per_step"] = step_stats.kernels;
  doc["step_runs"] = step_stats.runs;
  doc["captured_replays"] = step_stats.captured_replays;
  const double tv = now_us();
  const nn::Logs val = model.evaluate(x_test, y_test, o.batch);
  const double val_us = now_us() - tv;

  const double epoch_s = stats_of(timer->epoch_us).median_us * 1e-6;
  const double flop_sample = train_flop_per_sample(model);
  json epochs = json::array();
  for (double us : timer->epoch_us) epochs.push_back(us * 1e-6);
  doc["epoch_seconds"] = epochs;
  doc["train_seconds_per_epoch"] = epoch_s;
  doc["val_seconds"] = val_us * 1e-6;
  doc["ms_per_step"] = stats_of(timer->step_us).median_us * 1e-3;
  doc["ms_per_step_source"] = "median of the gaps between on_train_batch_end callbacks";
  doc["samples_per_second"] = static_cast<double>(n) / epoch_s;
  doc["flop_per_sample"] = flop_sample;
  doc["flop_per_epoch"] = flop_sample * static_cast<double>(n);
  const double gflops = flop_sample * static_cast<double>(n) / epoch_s * 1e-9;
  doc["achieved_gflops"] = gflops;
  doc["peak_gflops"] = info.peak_gflops;
  // The arithmetic floor of an epoch (its FLOP at peak) over the measured epoch time.
  doc["floor_fraction"] = info.peak_gflops > 0 ? gflops / info.peak_gflops : 0.0;
  doc["loss"] = h.last("loss");
  doc["accuracy"] = h.last("accuracy");
  doc["val_loss"] = val[0].second;
  doc["val_accuracy"] = val[1].second;
  doc["load_average_after"] = load_average();

  // What train_rounds.cc reads from every model's run: dlrt's step time, the step's FLOP and
  // each anchor's step time. Here the mean step of an epoch (the last batch may be partial,
  // for both frameworks alike).
  doc["step_seconds"] = epoch_s / static_cast<double>(steps);
  doc["step_seconds_source"] = "train_seconds_per_epoch / steps_per_epoch";
  doc["flop_per_step"] = flop_sample * static_cast<double>(n) / static_cast<double>(steps);

  if (o.compare_torch) {
    doc["load_average_before_torch"] = load_average();
    json runs = json::array(), anchors = json::object();
    for (const std::string& mode : o.torch_modes) {
      json r = run_torch(o, torch_script, warmup, mode);
      anchors[mode] = r.contains("unavailable")
                          ? json{{"unavailable", r.at("unavailable")}}
                          : json{{"step_seconds", r.at("train_seconds_per_epoch").get<double>() /
                                                      static_cast<double>(steps)}};
      runs.push_back(std::move(r));
    }
    doc["anchors"] = anchors;
    doc["torch_runs"] = runs;
    doc["load_average_after_torch"] = load_average();
    const std::string best = best_anchor(anchors);
    if (!best.empty()) {
      for (const json& r : runs)
        if (r.at("mode") == best) doc["torch"] = r;
      const json& t = doc["torch"];
      // dlrt / torch: below 1 means dlrt is faster; the target is epoch <= 1/3.
      doc["ratio"] = {{"epoch", epoch_s / t.at("train_seconds_per_epoch").get<double>()},
                      {"validation", val_us * 1e-6 / t.at("val_seconds").get<double>()},
                      {"against", best}};
    }
  }
  return doc;
}

}  // namespace dlbench
