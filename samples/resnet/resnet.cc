// samples/resnet: a ResNet-20-style network (He et al. 2015, section 4.2: 6n+2 layers with
// n = 3) on Fashion-MNIST (or any folder in MNIST's layout), written with dlrt::nn's
// functional API (nn::Input, layer calls on symbolic tensors, nn::Model).
//
//   stem Conv2D(16)-BN-ReLU -> 3 stages x 3 basic blocks (16/32/64 filters, stride 2 and a
//   1x1 projection shortcut at the start of stages 2 and 3) -> GlobalAveragePooling2D ->
//   Dense(10) logits                                          (resnet20.hpp has the details)
// 273,754 parameters (1,568 of them BatchNormalization's moving statistics). Training:
// Adam(1e-3) (Keras' CIFAR-10 ResNet example's optimizer; the README says why not SGD) with
// the rate on a cosine decay to 0 over the whole run (--schedule; Keras' CosineDecay), sparse
// categorical cross-entropy from logits (the softmax is in the loss, as PyTorch's
// CrossEntropyLoss: the same model as Keras' Dense(10, activation="softmax") + crossentropy
// without the log(p + 1e-7) of the probability form, losses.hpp), batch 128.
//
// It prints the device it trains on, the summary (Keras' functional table), Keras' progress
// per epoch (validated on the test set) and, last, "test_accuracy: X".
//
//   resnet                                   10 epochs on the best device
//   resnet --limit 512 --epochs 1            a quick run
//   resnet --threads 2                       the cpu plugin's thread count
//   resnet --checkpoint ck.safetensors       save after every epoch; add --resume to go on
//   resnet --device CPU:0 --log-device-placement --csv-log log.csv --trace step.json
//   resnet --dtype-policy mixed_bfloat16     Keras' mixed precision (batch norm stays f32)
// mnist_cnn's --strategy/--devices/--logical-cpus/--log-all-ranks are left out on purpose:
// under a distribution strategy BatchNormalization does not move its moving statistics
// (batch_norm.hpp), so evaluation would use the initial ones.
// Errors (bad flags, missing or malformed data, an unknown device) print one line and exit 1.
#include <dlrt/dlrt.hpp>
#include <dlrt/nn.hpp>

#include <CLI/CLI.hpp>

#include "common/auto_device.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "resnet20.hpp"

namespace nn = dlrt::nn;
namespace fs = std::filesystem;

namespace {

struct Flags {
  std::string data = "/usr/share/datasets/fashion-mnist";
  int64_t epochs = 10;
  int64_t batch = 128;
  std::string device = "auto";
  int64_t limit = 0;
  int64_t test_limit = 0;
  int threads = -1;  // -1: leave the cpu plugin's setting (DLRT_PLUGIN_OPTIONS) alone
  uint64_t seed = 42;
  double learning_rate = 1e-3;
  std::string schedule = "cosine";
  int64_t decay_epochs = 0;  // 0: --epochs
  double bn_momentum = 0.99;
  bool log_placement = false;
  std::string checkpoint;
  bool resume = false;
  std::string csv_log;
  std::string trace;
  std::string dtype_policy = "float32";  // Keras' mixed precision (nn/mixed_precision.hpp)
  double expect_accuracy = -1;
};

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
  if (f.threads >= 0) options.plugin_options("cpu:threads=" + std::to_string(f.threads));
  dlrt::Context ctx(options);
  const std::string device = samples::pick_device(ctx, f.device);

  // --limit is applied by the reader: the rest of the training files is never read.
  nn::Array x_train = load(data_file(f.data, "train-images-idx3-ubyte"), true, f.limit);
  nn::Array y_train = load(data_file(f.data, "train-labels-idx1-ubyte"), false, f.limit);
  nn::Array x_test = load(data_file(f.data, "t10k-images-idx3-ubyte"), true, f.test_limit);
  nn::Array y_test = load(data_file(f.data, "t10k-labels-idx1-ubyte"), false, f.test_limit);
  std::cout << "Data: " << f.data << ": " << x_train.rows() << " training and " << x_test.rows()
            << " test images of " << nn::dims_string(x_train.sample_shape()) << "\n";
  std::cout << "Device: " << device << "\n";

  nn::Input in(x_train.sample_shape());
  nn::Model model(ctx, in, resnet::resnet20(in, 10, f.bn_momentum), "resnet20");
  nn::CompileConfig config;
  config.device = device;
  config.seed = f.seed;
  config.log_device_placement = f.log_placement;
  config.dtype_policy = f.dtype_policy;
  // The cosine spans the whole run (--epochs, or --decay-epochs when a run is cut in parts),
  // and is a function of the step count, so a resumed run continues the same curve.
  const int64_t steps_per_epoch = (x_train.rows() + f.batch - 1) / f.batch;
  const int64_t decay_epochs = f.decay_epochs > 0 ? f.decay_epochs : f.epochs;
  const nn::LearningRate rate =
      f.schedule == "cosine"
          ? nn::LearningRate(nn::CosineDecay(f.learning_rate, steps_per_epoch * decay_epochs))
          : nn::LearningRate(f.learning_rate);
  model.compile(nn::Adam(rate), nn::SparseCategoricalCrossentropy(/*from_logits=*/true),
                {"accuracy"}, config);
  model.summary(std::cout);

  nn::FitOptions fit;
  fit.epochs = f.epochs;
  fit.batch_size = f.batch;
  fit.validation_x = &x_test;
  fit.validation_y = &y_test;
  fit.trace.path = f.trace;
  bool resumed = false;
  if (f.resume && fs::exists(f.checkpoint)) {
    model.load_weights(f.checkpoint);
    fit.initial_epoch = std::min(model.epoch(), f.epochs);
    resumed = true;
    std::cout << "Resumed from " << f.checkpoint << " after epoch " << model.epoch() << " (seed "
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
  std::printf("test_loss: %.4f\ntest_accuracy: %.4f\n", test[0].second, test[1].second);
  if (f.expect_accuracy >= 0 && test[1].second < f.expect_accuracy) {
    std::fprintf(stderr, "resnet: test_accuracy %.4f is below --expect-accuracy %.4f\n",
                 test[1].second, f.expect_accuracy);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{"Train a ResNet-20-style network on an MNIST-format data set (Fashion-MNIST)"};
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
  app.add_option("--test-limit", f.test_limit, "validate and test on the first N test images only")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--threads", f.threads,
                 "cpu plugin threads (0: every core; default: DLRT_PLUGIN_OPTIONS or every core)")
      ->check(CLI::Range(0, 4096));
  app.add_option("--learning-rate", f.learning_rate,
                 "Adam's learning rate (with --schedule cosine: its starting value)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--schedule", f.schedule,
                 "learning-rate schedule: cosine (decay to 0 over --epochs, Keras' CosineDecay) "
                 "or constant")
      ->check(CLI::IsMember({"cosine", "constant"}))
      ->capture_default_str();
  app.add_option("--decay-epochs", f.decay_epochs,
                 "epochs the cosine decays over (default: --epochs; give the whole run's "
                 "length when a run is split by --checkpoint/--resume into shorter ones)")
      ->check(CLI::Range(int64_t{1}, int64_t{100000}));
  app.add_option("--bn-momentum", f.bn_momentum,
                 "every BatchNormalization's momentum (Keras' default; a run of a few steps "
                 "needs less, e.g. 0.9, for its moving statistics to follow the data)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--seed", f.seed, "seed of the initial weights and the shuffles")
      ->capture_default_str();
  app.add_flag("--log-device-placement", f.log_placement, "print where every op runs");
  app.add_option("--checkpoint", f.checkpoint,
                 "save weights, moving statistics and optimizer state here "
                 "(safetensors) after every epoch");
  app.add_flag("--resume", f.resume, "continue from --checkpoint when it exists");
  app.add_option("--csv-log", f.csv_log, "write Keras' CSVLogger file here");
  app.add_option("--trace", f.trace, "write a Chrome trace (Perfetto) of training steps 10-29");
  app.add_option("--dtype-policy", f.dtype_policy,
                 "Keras' dtype policy: float32, mixed_bfloat16 or mixed_float16 (16-bit "
                 "compute, f32 weights and batch norm; docs/nn.md \"Mixed precision\")")
      ->check(CLI::IsMember({"float32", "mixed_bfloat16", "mixed_float16"}))
      ->capture_default_str();
  app.add_option("--expect-accuracy", f.expect_accuracy,
                 "exit 1 when the final test accuracy is below this (for tests)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  if (f.resume && f.checkpoint.empty()) {
    std::fprintf(stderr, "resnet: error: --resume needs --checkpoint PATH\n");
    return 1;
  }
  try {
    return run(f);
  } catch (const dlrt::Error& e) {
    std::fprintf(stderr, "resnet: error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "resnet: error: %s\n", e.what());
  }
  return 1;
}
