// bench.hpp: what dlbench's modes share: the reference workload's numbers (docs/design.md section 9),
// timing statistics, and the JSON that says which device and machine a figure came from.
//
// What it is not: a profiler. Every figure is wall-clock time around whole calls on the host,
// taken as the median of several samples because the machines it runs on are shared; the
// load average before and after is printed with the figures so a reader can judge them.
#pragma once

#include <dlrt/dlrt.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace dlbench {

using json = nlohmann::json;

// ---- the reference workload (docs/design.md section 9) -------------------------------------------------
// Conv2D(32,3x3,relu) -> MaxPool2 -> Conv2D(64,3x3,relu) -> MaxPool2 -> Conv2D(64,3x3,relu)
// -> Flatten -> Dense(64,relu) -> Dense(10), NHWC, batch 64, 28x28x1 images, Adam(1e-3).
namespace workload {
constexpr int64_t kBatch = 64;
constexpr int64_t kTrainSamples = 60000;
constexpr int64_t kTestSamples = 10000;
constexpr int64_t kParams = 93322;  // 320 + 18,496 + 36,928 + 36,928 + 650

// Multiply-adds x 2 of each layer's forward pass, per sample.
constexpr double kConv1 = 2.0 * 26 * 26 * 32 * (3 * 3 * 1);
constexpr double kConv2 = 2.0 * 11 * 11 * 64 * (3 * 3 * 32);
constexpr double kConv3 = 2.0 * 3 * 3 * 64 * (3 * 3 * 64);
constexpr double kDense1 = 2.0 * 576 * 64;
constexpr double kDense2 = 2.0 * 64 * 10;
constexpr double kForwardPerSample = kConv1 + kConv2 + kConv3 + kDense1 + kDense2;  // ~5.59 MFLOP
// Backward: a filter gradient and a data gradient per layer (each as costly as the forward
// pass), except the first conv's data gradient (the image needs none).
constexpr double kTrainPerSample = 3 * kForwardPerSample - kConv1;  // ~16.4 MFLOP
}  // namespace workload

// ---- timing --------------------------------------------------------------------------------

inline double now_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

struct Stats {
  double median_us = 0, min_us = 0, mean_us = 0;
  size_t samples = 0;
};

Stats stats_of(std::vector<double> samples_us);

// ---- context and device ----------------------------------------------------------------

// A context whose cpu plugin uses `threads` threads (0: the plugin's default, every core), with
// `plugin_options` (DLRT_PLUGIN_OPTIONS' syntax, e.g. "cpu:winograd=0"; "" = none) besides.
dlrt::Context make_context(int threads, const std::string& plugin_options);

// The device matching `spec`, and its description as JSON: name, model, platform, cores,
// threads (the cpu plugin's attribute, when present), peak_gflops.
size_t find_device(const dlrt::Context& ctx, const std::string& spec);
json device_json(const dlrt::DeviceInfo& d);

// The CPU a figure came from (machine.cc): /proc/cpuinfo's model name, vendor, family, model
// and stepping numbers, and which of the instruction-set flags kernels dispatch on it has
// (isa_flags) and lacks (isa_flags_absent); {"unavailable": why} where it cannot be read.
json cpu_json();

// /proc/loadavg's three averages (1, 5, 15 minutes); an empty array where it is unreadable.
json load_average();

// ---- the modes (ops.cc, train.cc) ---------------------------------------------------------

struct OpsOptions {
  std::string device = "CPU:0";
  int repeat = 20;
  int threads = 0;
  std::string filter;          // run only cases whose name contains this ("" = all)
  std::string plugin_options;  // more plugin options, e.g. "cpu:winograd=0"
};
// Returns the JSON document `dlbench ops` prints; throws dlrt::Error or std::runtime_error.
json run_ops(const OpsOptions& options);

struct TrainOptions {
  std::string device = "CPU:0";
  int64_t epochs = 1;
  int64_t warmup_steps = 20;
  int64_t limit = 0;          // train on the first N images only (0: all 60,000)
  std::string model = "cnn";  // cnn (the reference workload), resnet20 (samples/resnet) or
                              // char_transformer (samples/char_transformer, train_text.cc)
  int64_t batch = 0;          // 0: the model's own, 64 for cnn and 128 for resnet20
  int threads = 0;            // cpu plugin threads and torch.set_num_threads (0: every core)
  uint64_t seed = 42;
  // cnn, resnet20: "f32", or "bf16"/"f16" for Keras' mixed_bfloat16/mixed_float16 policy
  // (nn/mixed_precision.hpp); the PyTorch twin then runs under autocast to the same dtype.
  std::string precision = "f32";
  bool compare_torch = false;
  bool capture = true;         // false: the step runs kernel by kernel, never a captured graph
  std::string plugin_options;  // more plugin options, e.g. "cpu:winograd=0"
  std::string data = "/usr/share/datasets/fashion-mnist";
  std::string python = "/usr/bin/python3";  // runs torch_reference.py for --compare-torch
  std::string torch_venv;       // a venv for torch: made (pip install torch) when it lacks it
  std::string torch_index_url;  // pip's --index-url for that install (empty: PyPI)
  // char_transformer only: timed steps, the window length, validation windows.
  int64_t steps = 100;
  int64_t context = 128;
  int64_t val_windows = 64;
  // The twin's modes ("eager", "channels_last", "compile": torch.compile), each run once per
  // round; empty: every mode that applies to the model (channels_last needs convolutions).
  std::vector<std::string> torch_modes;
};
// Returns the JSON document `dlbench train` prints (train.cc); throws dlrt::Error or
// std::runtime_error (missing data, device or torch, with what to do about it).
json run_train(const TrainOptions& options);
// `--precision f32,bf16 [--rounds R]` (train_side_by_side.cc): run_train once per precision
// per round, alternating, with the per-precision medians and the ratios to the first.
json run_train_side_by_side(const TrainOptions& options, const std::vector<std::string>& precisions,
                            int64_t rounds);
// `--rounds R` (R >= 2, train_rounds.cc): R rounds, each run_train (dlrt, then every PyTorch
// mode back to back), with per-round step times and anchor/dlrt ratios, their min and median,
// the best anchor's median ratio, the floor against the best measured peak, and the CPU.
json run_train_rounds(const TrainOptions& options, int64_t rounds);
// --model char_transformer (train_text.cc); run_train hands it over.
json run_train_text(const TrainOptions& options);
// --model vae (train_vae.cc): samples/vae's custom step; --steps timed steps.
json run_train_vae(const TrainOptions& options);
// --model dcgan (train_dcgan.cc): samples/dcgan's two-optimizer custom step.
json run_train_dcgan(const TrainOptions& options);

struct InferOptions {
  std::string model;                   // the .onnx file
  std::string device = "CPU:0";        // a device spec (the session's device scope)
  std::vector<int64_t> batches = {1, 64};
  int threads = 0;                     // cpu plugin threads and onnxruntime's (0: every core)
  int warmup = 5;                      // untimed runs per batch size
  int64_t min_runs = 10, max_runs = 10000;
  double min_seconds = 2.0;            // timed runs go on until min_runs and min_seconds
  uint64_t seed = 42;                  // the random inputs
  bool compare_ort = false;
  std::string python = "/usr/bin/python3";
  std::string ort_venv;                // a venv for onnxruntime: made (pip) when it lacks it
  std::string work_dir;                // --compare-ort's models and .npy files ("" = a temp dir)
  std::string plugin_options;
};
// Returns the JSON document `dlbench infer` prints (infer.cc).
json run_infer(const InferOptions& options);

}  // namespace dlbench
