// samples/mnist_cnn: the reference workload (docs/design.md section 9) — the classic Keras MNIST
// CNN on Fashion-MNIST (or any folder in MNIST's layout), trained with dlrt::nn.
//
//   Conv2D(32,3x3,relu) -> MaxPool2 -> Conv2D(64,3x3,relu) -> MaxPool2 -> Conv2D(64,3x3,relu)
//   -> Flatten -> Dense(64,relu) -> Dense(10); 93,322 parameters; Adam(1e-3); sparse
//   categorical cross-entropy from logits; batch 64.
//
// It prints the summary, Keras' progress per epoch (validated on the test set) and, last,
// "test_accuracy: X". The training set is uploaded to the device once; each step feeds only
// the batch's indices (dlrt/nn/session.hpp).
//
//   mnist_cnn                                  5 epochs on the best device
//   mnist_cnn --limit 2048 --epochs 1          a quick run
//   mnist_cnn --checkpoint ck.safetensors      save after every epoch; add --resume to go on
//   mnist_cnn --device CPU:0 --log-device-placement --csv-log log.csv --trace step.json
//   mnist_cnn --strategy mirrored --logical-cpus 2         data parallel on one host
//   mpirun -np 2 mnist_cnn --strategy multi-worker        data parallel over processes
// With a strategy, --batch is the global batch (split evenly over every replica) and, in a
// multi-worker job, only rank 0 prints, writes checkpoints and CSV logs (--log-all-ranks
// makes every rank print); every rank must be given the same flags.
// Errors (bad flags, missing or malformed data, an unknown device) print one line and exit 1.
#include <dlrt/dlrt.hpp>
#include <dlrt/nn.hpp>

#include <CLI/CLI.hpp>

#include "common/auto_device.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace nn = dlrt::nn;
namespace fs = std::filesystem;

namespace {

struct Flags {
  std::string data = "/usr/share/datasets/fashion-mnist";
  int64_t epochs = 5;
  int64_t batch = 64;
  std::string device = "auto";
  int64_t limit = 0;
  uint64_t seed = 42;
  bool log_placement = false;
  std::string checkpoint;
  bool resume = false;
  std::string csv_log;
  std::string save_onnx;
  std::string trace;
  double expect_accuracy = -1;
  std::string strategy = "none";
  std::string devices;
  bool log_all_ranks = false;
  int logical_cpus = 1;
  std::string dtype_policy = "float32";  // Keras' mixed precision (nn/mixed_precision.hpp)
};

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size() && !list.empty()) {
    const size_t comma = list.find(',', start);
    const std::string item = list.substr(start, comma == std::string::npos ? comma : comma - start);
    if (item.empty())
      throw dlrt::Error(DLRT_INVALID_ARGUMENT, "--devices '" + list +
                                                   "': an empty entry; "
                                                   "expected device specs separated by commas");
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::unique_ptr<nn::DistributionStrategy> make_strategy(const dlrt::Context& ctx, const Flags& f) {
  if (f.strategy == "mirrored")
    return std::make_unique<nn::MirroredStrategy>(ctx, split_list(f.devices));
  if (f.strategy == "multi-worker")
    return std::make_unique<nn::MultiWorkerMirroredStrategy>(ctx, split_list(f.devices));
  return nullptr;
}

// "<dir>/<name>", or "<dir>/<name>.gz" when only that exists.
std::string data_file(const std::string& dir, const std::string& name) {
  const fs::path plain = fs::path(dir) / name;
  if (fs::exists(plain)) return plain.string();
  const fs::path gz = fs::path(dir) / (name + ".gz");
  if (fs::exists(gz)) return gz.string();
  throw dlrt::Error(DLRT_NOT_FOUND, "--data " + dir + ": no " + name + " or " + name +
                                        ".gz there (expected MNIST's file layout)");
}

// Images (N,H,W) u8 -> (N,H,W,1); labels (N) u8. max_rows > 0: only the first max_rows
// samples are read from the file (--limit), so a huge file costs only what is used.
nn::Array load(const std::string& path, bool images, int64_t max_rows = 0) {
  dlrt::IdxArray a = dlrt::read_idx(path, static_cast<uint64_t>(max_rows));
  std::vector<int64_t> dims = a.dims();
  if (a.dtype() != DLRT_U8 || dims.size() != (images ? 3u : 1u))
    throw dlrt::Error(DLRT_INVALID_ARGUMENT, path + ": holds " + dlrt::dtype_name(a.dtype()) +
                                                 " of rank " + std::to_string(dims.size()) +
                                                 "; expected u8 " +
                                                 (images ? "images (N, H, W)" : "labels (N)"));
  if (images) dims.push_back(1);
  const auto* p = static_cast<const uint8_t*>(a.data());
  return nn::Array(DLRT_U8, dims, std::vector<uint8_t>(p, p + a.bytes()));
}

int run(const Flags& f) {
  dlrt::ContextOptions options;
  if (f.logical_cpus > 1) options.logical_devices("CPU:0", f.logical_cpus);
  dlrt::Context ctx(options);
  std::unique_ptr<nn::DistributionStrategy> strategy = make_strategy(ctx, f);
  const std::string device = strategy ? "" : samples::pick_device(ctx, f.device);
  // Rank 0 speaks for a multi-worker job; the others only on request (and for errors).
  const bool speaks = !strategy || strategy->is_chief() || f.log_all_ranks;
  std::ostringstream muted;
  std::ostream& out = speaks ? std::cout : muted;

  // --limit is applied by the reader: the rest of the training files is never read.
  nn::Array x_train = load(data_file(f.data, "train-images-idx3-ubyte"), true, f.limit);
  nn::Array y_train = load(data_file(f.data, "train-labels-idx1-ubyte"), false, f.limit);
  nn::Array x_test = load(data_file(f.data, "t10k-images-idx3-ubyte"), true);
  nn::Array y_test = load(data_file(f.data, "t10k-labels-idx1-ubyte"), false);
  out << "Data: " << f.data << ": " << x_train.rows() << " training and " << x_test.rows()
      << " test images of " << nn::dims_string(x_train.sample_shape()) << "\n";
  if (strategy) {
    out << "Strategy: " << f.strategy << ", worker " << strategy->rank() << " of "
        << strategy->num_workers() << ", " << strategy->num_replicas_in_sync()
        << " replicas in sync; local devices:";
    for (const std::string& d : strategy->devices()) out << " " << d;
    out << "\n";
  } else {
    out << "Device: " << device << "\n";
  }

  nn::Sequential model(
      ctx, {nn::Input(x_train.sample_shape()), nn::Conv2D(32, {3, 3}, "relu"),
            nn::MaxPool2D({2, 2}), nn::Conv2D(64, {3, 3}, "relu"), nn::MaxPool2D({2, 2}),
            nn::Conv2D(64, {3, 3}, "relu"), nn::Flatten(), nn::Dense(64, "relu"), nn::Dense(10)});
  nn::CompileConfig config;
  config.device = device;
  config.seed = f.seed;
  config.log_device_placement = f.log_placement;
  config.dtype_policy = f.dtype_policy;
  {
    std::optional<nn::StrategyScope> scope;  // Keras: `with strategy.scope():`
    if (strategy) scope.emplace(*strategy);
    model.compile(nn::Adam(1e-3), nn::SparseCategoricalCrossentropy(/*from_logits=*/true),
                  {"accuracy"}, config);
  }
  model.summary(out);

  nn::FitOptions fit;
  fit.epochs = f.epochs;
  fit.batch_size = f.batch;
  fit.validation_x = &x_test;
  fit.validation_y = &y_test;
  fit.trace.path = f.trace;
  fit.all_ranks_progress = f.log_all_ranks;
  bool resumed = false;
  if (f.resume && fs::exists(f.checkpoint)) {
    model.load_weights(f.checkpoint);
    fit.initial_epoch = std::min(model.epoch(), f.epochs);
    resumed = true;
    out << "Resumed from " << f.checkpoint << " after epoch " << model.epoch() << " (seed "
        << model.seed() << ")\n";
  }
  if (!f.checkpoint.empty())
    fit.callbacks.push_back(std::make_shared<nn::ModelCheckpoint>(f.checkpoint));
  if (!f.csv_log.empty())
    fit.callbacks.push_back(std::make_shared<nn::CSVLogger>(f.csv_log, ',', /*append=*/resumed));
  model.fit(x_train, y_train, fit);
  if (device == "auto")
    std::cerr << "--device auto: " << model.train_executable().auto_device() << "\n";

  const nn::Logs test = model.evaluate(x_test, y_test, f.batch);
  if (speaks) std::printf("test_loss: %.4f\ntest_accuracy: %.4f\n", test[0].second, test[1].second);
  if (!f.save_onnx.empty() && (!strategy || strategy->is_chief())) {
    // u8 images in, logits out: what a host program feeds (dlrun, onnxruntime, InferenceSession).
    model.save_onnx(f.save_onnx, DLRT_U8);
    std::printf("saved ONNX model: %s\n", f.save_onnx.c_str());
  }
  if (f.expect_accuracy >= 0 && test[1].second < f.expect_accuracy) {
    std::fprintf(stderr, "mnist_cnn: test_accuracy %.4f is below --expect-accuracy %.4f\n",
                 test[1].second, f.expect_accuracy);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{"Train the reference CNN (docs/design.md section 9) on an MNIST-format data set"};
  app.add_option("--data", f.data,
                 "folder with train-images-idx3-ubyte(.gz), "
                 "train-labels-idx1-ubyte(.gz), t10k-...")
      ->capture_default_str();
  app.add_option("--epochs", f.epochs, "epochs to train")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--batch", f.batch, "batch size")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--device", f.device,
                 "device spec (CPU:0, /GPU:0, ...) or auto: a GPU if "
                 "there is one, else the CPU")
      ->capture_default_str();
  app.add_option("--limit", f.limit, "train on the first N training images only")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--seed", f.seed, "seed of the initial weights and the shuffles")
      ->capture_default_str();
  app.add_flag("--log-device-placement", f.log_placement, "print where every op runs");
  app.add_option("--dtype-policy", f.dtype_policy,
                 "Keras' dtype policy: float32, mixed_bfloat16 or mixed_float16 (16-bit "
                 "compute, f32 weights; docs/nn.md \"Mixed precision\")")
      ->check(CLI::IsMember({"float32", "mixed_bfloat16", "mixed_float16"}))
      ->capture_default_str();
  app.add_option("--checkpoint", f.checkpoint,
                 "save weights and optimizer state here "
                 "(safetensors) after every epoch");
  app.add_flag("--resume", f.resume, "continue from --checkpoint when it exists");
  app.add_option("--csv-log", f.csv_log, "write Keras' CSVLogger file here");
  app.add_option("--save-onnx", f.save_onnx,
                 "after training, write the model as ONNX (u8 images (N,28,28,1) in, logits out)");
  app.add_option("--trace", f.trace, "write a Chrome trace (Perfetto) of training steps 10-29");
  app.add_option("--strategy", f.strategy,
                 "none, mirrored (the local devices of --devices) or "
                 "multi-worker (every process of an mpirun job)")
      ->check(CLI::IsMember({"none", "mirrored", "multi-worker"}))
      ->capture_default_str();
  app.add_option("--devices", f.devices,
                 "with --strategy: the local replicas' devices, "
                 "comma-separated (default: every GPU, else every CPU logical device)");
  app.add_option("--logical-cpus", f.logical_cpus,
                 "split CPU:0 into N logical devices "
                 "(CPU:0..N-1), as tf.config.set_logical_device_configuration")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_flag("--log-all-ranks", f.log_all_ranks, "multi-worker: every rank prints, not just 0");
  app.add_option("--expect-accuracy", f.expect_accuracy,
                 "exit 1 when the final test accuracy is below this (for tests)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  if (f.resume && f.checkpoint.empty()) {
    std::fprintf(stderr, "mnist_cnn: error: --resume needs --checkpoint PATH\n");
    return 1;
  }
  if (!f.devices.empty() && f.strategy == "none") {
    std::fprintf(stderr,
                 "mnist_cnn: error: --devices needs --strategy mirrored|multi-worker "
                 "(one device: --device)\n");
    return 1;
  }
  if (f.strategy != "none" && f.device != "auto") {
    std::fprintf(stderr,
                 "mnist_cnn: error: --device %s with --strategy %s: a strategy places "
                 "its replicas on --devices\n",
                 f.device.c_str(), f.strategy.c_str());
    return 1;
  }
  try {
    return run(f);
  } catch (const dlrt::Error& e) {
    std::fprintf(stderr, "mnist_cnn: error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mnist_cnn: error: %s\n", e.what());
  }
  return 1;
}
