// samples/dcgan: a DCGAN (Radford et al. 2016) on Fashion-MNIST, in the shape of TensorFlow's
// DCGAN tutorial, trained with a custom step (nn::TrainStep, train_step.hpp): two models, two
// losses, two Adam optimizers in one compiled step.
//
//   generator      z (64) -> Dense(7*7*128) -> BatchNormalization -> LeakyReLU(0.2)
//                  -> Reshape(7,7,128) -> Conv2DTranspose(64,4,s2,same,no bias) -> BN
//                  -> LeakyReLU(0.2) -> Conv2DTranspose(1,4,s2,same,tanh)   images in [-1, 1]
//   discriminator  x (28,28,1) -> Conv2D(64,4,s2,same) -> LeakyReLU(0.2) -> Dropout(0.3)
//                  -> Conv2D(128,4,s2,same) -> LeakyReLU(0.2) -> Dropout(0.3) -> Flatten
//                  -> Dense(1) logit
//   step           fake = G(z), z ~ N(0, I) drawn anew every step
//                  d_loss = BCE(D(x), 1) + BCE(D(fake), 0);  g_loss = BCE(D(fake), 1)
//                  Adam(2e-4, beta_1 0.5) on D's weights by d_loss, another on G's by g_loss,
//                  both from the same forward pass (the tutorial's two tapes), batch 128.
// Real images are pixel/127.5 - 1. The training set is shuffled every epoch and the last
// partial batch dropped. After every epoch it writes dcgan_epoch_<e>.png, the generator's
// images for a fixed batch of 64 codes (inference mode: BatchNormalization's moving
// statistics), and with --checkpoint the whole step (both models, both optimizers, the run
// count) to one safetensors file; --resume continues from it exactly.
//
// --classifier CK.safetensors (a checkpoint of samples/mnist_cnn trained on Fashion-MNIST)
// labels 1,000 generated images at the end and prints how many it labels with confidence
// >= 0.5 and over how many classes they spread: a check that the samples look like clothing.
//
//   dcgan                                    10 epochs on the best device
//   dcgan --limit 2048 --epochs 2            a quick run
//   dcgan --checkpoint gan.st --resume       continue a stopped run
// Errors print one line and exit 1.
#include <dlrt/dlrt.hpp>
#include <dlrt/nn.hpp>

#include <CLI/CLI.hpp>

#include "common/auto_device.hpp"
#include "common/mnist_images.hpp"
#include "dcgan/dcgan_models.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace nn = dlrt::nn;
namespace fs = std::filesystem;

using dcgan::make_discriminator;
using dcgan::make_generator;

namespace {

struct Flags {
  std::string data = "/usr/share/datasets/fashion-mnist";
  int64_t epochs = 10;
  int64_t batch = 128;
  int64_t noise = 64;
  std::string device = "auto";
  int64_t limit = 0;
  int threads = -1;
  uint64_t seed = 42;
  double learning_rate = 2e-4;
  std::string out_dir = ".";
  std::string checkpoint;
  bool resume = false;
  std::string classifier;
  double expect_confident = -1;  // exit 1 when the classified fraction is below it (tests)
};

// samples/mnist_cnn's network, to load its checkpoint (--classifier).
std::unique_ptr<nn::Sequential> make_classifier(const dlrt::Context& ctx) {
  return std::make_unique<nn::Sequential>(
      ctx, std::initializer_list<nn::LayerRef>{
               nn::Input({28, 28, 1}), nn::Conv2D(32, {3, 3}, "relu"), nn::MaxPool2D({2, 2}),
               nn::Conv2D(64, {3, 3}, "relu"), nn::MaxPool2D({2, 2}),
               nn::Conv2D(64, {3, 3}, "relu"), nn::Flatten(), nn::Dense(64, "relu"),
               nn::Dense(10)});
}

// Host-side N(0, I) codes (n, noise) from `seed`.
nn::Array codes(int64_t n, int64_t noise, uint64_t seed) {
  std::mt19937 gen(static_cast<uint32_t>(seed));
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n * noise));
  for (float& c : v) c = normal(gen);
  return nn::Array::of<float>({n, noise}, v);
}

int run(const Flags& f) {
  dlrt::ContextOptions options;
  if (f.threads >= 0) options.plugin_options("cpu:threads=" + std::to_string(f.threads));
  dlrt::Context ctx(options);
  const std::string device = samples::pick_device(ctx, f.device);
  // pixel/127.5 - 1: the generator's tanh range.
  const nn::Array x_train = samples::mnist_images(
      samples::mnist_file(f.data, "train-images-idx3-ubyte"), f.limit, 1.f / 127.5f, -1.f);
  if (x_train.rows() < f.batch)
    throw dlrt::Error(DLRT_INVALID_ARGUMENT,
                      "--batch " + std::to_string(f.batch) + " is more than the " +
                          std::to_string(x_train.rows()) + " training images");
  std::cout << "Data: " << f.data << ": " << x_train.rows()
            << " training images of (28, 28, 1)\nDevice: " << device << "\n";

  std::unique_ptr<nn::Model> gen = make_generator(ctx, f.noise), disc = make_discriminator(ctx);
  nn::CompileConfig config;
  config.seed = f.seed;
  gen->compile(config);
  disc->compile(config);
  gen->summary(std::cout);
  disc->summary(std::cout);

  nn::StepOptions step_options;
  step_options.device = device;
  step_options.seed = f.seed;
  nn::BinaryCrossentropy bce(/*from_logits=*/true);
  nn::Adam d_opt(f.learning_rate, 0.5), g_opt(f.learning_rate, 0.5);
  nn::TrainStep step(ctx, [&](nn::Tape& t) -> nn::StepMetrics {
    dlrt::Value real = t.input("x");
    dlrt::Value fake = (*gen)(t.random_normal({real.dims()[0], f.noise}));
    dlrt::Value real_logits = (*disc)(real), fake_logits = (*disc)(fake);
    dlrt::Value d_loss = t.op("add", {t.loss(bce, t.ones_like(real_logits), real_logits),
                                      t.loss(bce, t.zeros_like(fake_logits), fake_logits)});
    dlrt::Value g_loss = t.loss(bce, t.ones_like(fake_logits), fake_logits);
    t.minimize(d_loss, d_opt, disc->trainable_variables(), "d_optimizer");
    t.minimize(g_loss, g_opt, gen->trainable_variables(), "g_optimizer");
    return {{"d_loss", d_loss}, {"g_loss", g_loss}};
  }, step_options);

  const int64_t steps = x_train.rows() / f.batch;
  int64_t initial_epoch = 0;
  if (f.resume && fs::exists(f.checkpoint)) {
    step.load(f.checkpoint);
    initial_epoch = std::min<int64_t>(static_cast<int64_t>(step.runs()) / steps, f.epochs);
    std::cout << "Resumed from " << f.checkpoint << " after epoch " << initial_epoch << "\n";
  }
  const nn::Array z_fixed = codes(64, f.noise, f.seed + 7);
  fs::create_directories(f.out_dir);
  nn::ProgressOptions progress;
  nn::ImageGridOptions grid;
  grid.lo = -1.f;  // tanh's range onto 0..255
  for (int64_t epoch = initial_epoch; epoch < f.epochs; ++epoch) {
    nn::Progbar::epoch_header(progress, epoch, f.epochs);
    nn::Progbar bar(steps, progress);
    const std::vector<int32_t> order = nn::epoch_order(f.seed, epoch, x_train.rows(), true);
    double d_sum = 0, g_sum = 0;
    nn::Logs logs;
    for (int64_t s = 0; s < steps; ++s) {
      const nn::Array xb = samples::gather_rows(x_train, order, s * f.batch, f.batch);
      const nn::Logs r = step.run({{"x", xb}});
      d_sum += r[0].second;
      g_sum += r[1].second;
      const double n = static_cast<double>(s + 1);
      logs = {{"d_loss", d_sum / n}, {"g_loss", g_sum / n}};
      bar.update(s + 1, logs);
    }
    bar.finish(logs);
    if (!f.checkpoint.empty()) step.save(f.checkpoint);
    const std::string png =
        (fs::path(f.out_dir) / ("dcgan_epoch_" + std::to_string(epoch + 1) + ".png")).string();
    nn::save_image_grid(png, gen->predict(z_fixed, 64), 8, grid);
    std::cout << "Wrote " << png << "\n";
  }

  if (!f.classifier.empty()) {
    // 1,000 generated images, mapped back to [0, 1] as mnist_cnn trained on pixel/255.
    std::unique_ptr<nn::Sequential> cls = make_classifier(ctx);
    cls->compile(nn::Adam(1e-3), nn::SparseCategoricalCrossentropy(true));
    cls->load_weights(f.classifier);
    const nn::Array images = gen->predict(codes(1000, f.noise, f.seed + 11), 100);
    std::vector<float> unit(images.bytes().size() / sizeof(float));
    const auto* p = reinterpret_cast<const float*>(images.data());
    for (size_t i = 0; i < unit.size(); ++i) unit[i] = (p[i] + 1.f) / 2.f;
    const nn::Array logits = cls->predict(nn::Array::of<float>(images.dims(), unit), 100);
    const auto* l = reinterpret_cast<const float*>(logits.data());
    int confident = 0;
    std::set<int> classes;
    std::vector<int> counts(10, 0);
    for (int i = 0; i < 1000; ++i) {
      const float* row = l + i * 10;
      const float top = *std::max_element(row, row + 10);
      double z = 0;
      for (int k = 0; k < 10; ++k) z += std::exp(static_cast<double>(row[k] - top));
      const int label = static_cast<int>(std::max_element(row, row + 10) - row);
      if (1.0 / z >= 0.5) {  // softmax of the top class
        ++confident;
        classes.insert(label);
        ++counts[static_cast<size_t>(label)];
      }
    }
    std::printf("classified: %d of 1000 generated images with confidence >= 0.5, over %zu of 10 "
                "classes (per class:",
                confident, classes.size());
    for (int c : counts) std::printf(" %d", c);
    std::printf(")\n");
    if (f.expect_confident >= 0 && confident < f.expect_confident * 1000) {
      std::fprintf(stderr, "dcgan: %d confident labels is below --expect-confident %.2f\n",
                   confident, f.expect_confident);
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{"Train a DCGAN on an MNIST-format data set (Fashion-MNIST)"};
  app.add_option("--data", f.data, "folder with train-images-idx3-ubyte(.gz)")
      ->capture_default_str();
  app.add_option("--epochs", f.epochs, "epochs to train")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--batch", f.batch, "batch size")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--noise", f.noise, "the generator's code dimensions")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--device", f.device,
                 "device spec (CPU:0, /GPU:0, ...) or auto: a GPU if there is one, else the CPU")
      ->capture_default_str();
  app.add_option("--limit", f.limit, "train on the first N training images only")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--threads", f.threads, "cpu plugin threads (0: every core)")
      ->check(CLI::Range(0, 4096));
  app.add_option("--learning-rate", f.learning_rate, "both Adams' learning rate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--seed", f.seed, "seed of the weights, shuffles, noise and the fixed codes")
      ->capture_default_str();
  app.add_option("--out-dir", f.out_dir, "folder for dcgan_epoch_<e>.png")
      ->capture_default_str();
  app.add_option("--checkpoint", f.checkpoint,
                 "save both models and both optimizers here after every epoch");
  app.add_flag("--resume", f.resume, "continue from --checkpoint when it exists");
  app.add_option("--classifier", f.classifier,
                 "a samples/mnist_cnn checkpoint that labels 1,000 generated images at the end");
  app.add_option("--expect-confident", f.expect_confident,
                 "exit 1 when fewer than this fraction are labelled with confidence >= 0.5");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  if (f.resume && f.checkpoint.empty()) {
    std::fprintf(stderr, "dcgan: error: --resume needs --checkpoint PATH\n");
    return 1;
  }
  try {
    return run(f);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dcgan: error: %s\n", e.what());
  }
  return 1;
}
