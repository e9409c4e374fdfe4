// samples/vae: a convolutional variational autoencoder (Kingma & Welling 2014) on
// Fashion-MNIST, trained with a custom step (nn::TrainStep, train_step.hpp): two models
// (encoder, decoder), the reparameterisation trick, and a loss fit cannot express.
//
//   encoder  x (28,28,1) -> Conv2D(32,3,s2,same,relu) -> Conv2D(64,3,s2,same,relu) -> Flatten
//            -> Dense(latent) = mean, Dense(latent) = log_var       (two outputs)
//   decoder  z (latent) -> Dense(7*7*32,relu) -> Reshape(7,7,32)
//            -> Conv2DTranspose(64,3,s2,same,relu) -> Conv2DTranspose(32,3,s2,same,relu)
//            -> Conv2DTranspose(1,3,s1,same) = logits (28,28,1)
//   step     z = mean + exp(log_var / 2) * eps, eps ~ N(0, I) drawn anew every step
//            loss = mean over the batch of [ sum over pixels of BCE(logits, x) + KL(q || N(0,I)) ]
//            which is the negative ELBO in nats per image (Bernoulli likelihood on x = pixel/255),
//            minimised by Adam(1e-3) over both models' weights, batch 128.
// The training set is shuffled every epoch (nn::epoch_order) and its last partial batch is
// dropped (tf.data's drop_remainder: the step is compiled for one batch size). After every
// epoch it prints the test set's negative ELBO (one sample of z per image, as the training
// loss) and writes two PNG grids (nn::save_image_grid): reconstructions (rows of 8 test
// images, each row followed by its reconstruction) and samples of the decoder from a fixed
// batch of N(0, I) codes.
//
//   vae                               10 epochs on the best device, PNGs in the working folder
//   vae --limit 1024 --epochs 2       a quick run
//   vae --out-dir pics --threads 2 --seed 1 --device CPU:0
// It ends with "test_neg_elbo: X" (nats per image). Errors print one line and exit 1.
#include <dlrt/dlrt.hpp>
#include <dlrt/nn.hpp>

#include <CLI/CLI.hpp>

#include "common/auto_device.hpp"
#include "common/mnist_images.hpp"
#include "vae/vae_model.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace nn = dlrt::nn;
namespace fs = std::filesystem;

using vae::make_vae;
using vae::neg_elbo_per_image;
using vae::Vae;

namespace {

struct Flags {
  std::string data = "/usr/share/datasets/fashion-mnist";
  int64_t epochs = 10;
  int64_t batch = 128;
  int64_t latent = 16;
  std::string device = "auto";
  int64_t limit = 0;
  int64_t test_limit = 0;
  int threads = -1;
  uint64_t seed = 42;
  double learning_rate = 1e-3;
  std::string out_dir = ".";
  double expect_neg_elbo = -1;  // exit 1 when the final test value is above it (tests)
};

std::vector<float> sigmoid(const nn::Array& logits) {
  std::vector<float> out(logits.bytes().size() / sizeof(float));
  const auto* p = reinterpret_cast<const float*>(logits.data());
  for (size_t i = 0; i < out.size(); ++i) out[i] = 1.f / (1.f + std::exp(-p[i]));
  return out;
}

int run(const Flags& f) {
  dlrt::ContextOptions options;
  if (f.threads >= 0) options.plugin_options("cpu:threads=" + std::to_string(f.threads));
  dlrt::Context ctx(options);
  const std::string device = samples::pick_device(ctx, f.device);
  // x = pixel/255: the Bernoulli likelihood's targets.
  const nn::Array x_train = samples::mnist_images(
      samples::mnist_file(f.data, "train-images-idx3-ubyte"), f.limit, 1.f / 255.f, 0.f);
  const nn::Array x_test = samples::mnist_images(
      samples::mnist_file(f.data, "t10k-images-idx3-ubyte"), f.test_limit, 1.f / 255.f, 0.f);
  if (x_train.rows() < f.batch)
    throw dlrt::Error(DLRT_INVALID_ARGUMENT, "--batch " + std::to_string(f.batch) +
                                                 " is more than the " +
                                                 std::to_string(x_train.rows()) +
                                                 " training images (the last partial batch "
                                                 "is dropped)");
  std::cout << "Data: " << f.data << ": " << x_train.rows() << " training and " << x_test.rows()
            << " test images of (28, 28, 1)\nDevice: " << device << "\n";

  Vae m = make_vae(ctx, f.latent);
  nn::CompileConfig config;  // no optimizer: the step has its own
  config.seed = f.seed;
  m.encoder->compile(config);
  m.decoder->compile(config);
  m.encoder->summary(std::cout);
  m.decoder->summary(std::cout);

  nn::StepOptions step_options;
  step_options.device = device;
  step_options.seed = f.seed;
  nn::Adam adam(f.learning_rate);
  nn::TrainStep train(ctx, [&](nn::Tape& t) -> nn::StepMetrics {
    dlrt::Value per_image = neg_elbo_per_image(t, m, t.input("x"), /*training=*/true);
    dlrt::Value loss = t.mean(per_image);
    std::vector<nn::Variable> vars = m.encoder->trainable_variables();
    for (const nn::Variable& v : m.decoder->trainable_variables()) vars.push_back(v);
    t.minimize(loss, adam, vars);
    return {{"loss", loss}};
  }, step_options);
  // The test value: the sum over a batch (divided by the test set's size on the host).
  nn::StepOptions eval_options = step_options;
  eval_options.seed = f.seed + 1;
  nn::TrainStep evaluate(ctx, [&](nn::Tape& t) -> nn::StepMetrics {
    return {{"sum", t.sum(neg_elbo_per_image(t, m, t.input("x"), /*training=*/false))}};
  }, eval_options);
  // Reconstructions of the first test images: through the means (no sampling).
  nn::TrainStep reconstruct(ctx, [&](nn::Tape& t) -> nn::StepMetrics {
    const std::vector<dlrt::Value> q = (*m.encoder)({t.input("x")}, false);
    return {{"images", t.op("sigmoid", {(*m.decoder)(q[0], false)})}};
  }, step_options);

  // A fixed batch of 64 codes for the sample grid, the same every epoch.
  std::mt19937 gen(static_cast<uint32_t>(f.seed));
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> codes(static_cast<size_t>(64 * f.latent));
  for (float& c : codes) c = normal(gen);
  const nn::Array z_fixed = nn::Array::of<float>({64, f.latent}, codes);
  const int64_t shown = std::min<int64_t>(32, x_test.rows());
  std::vector<int32_t> first_rows(static_cast<size_t>(shown));
  for (int64_t i = 0; i < shown; ++i) first_rows[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  const nn::Array x_shown = samples::gather_rows(x_test, first_rows, 0, shown);
  fs::create_directories(f.out_dir);

  const int64_t steps = x_train.rows() / f.batch;
  nn::ProgressOptions progress;
  double test_value = 0;
  for (int64_t epoch = 0; epoch < f.epochs; ++epoch) {
    nn::Progbar::epoch_header(progress, epoch, f.epochs);
    nn::Progbar bar(steps, progress);
    const std::vector<int32_t> order = nn::epoch_order(f.seed, epoch, x_train.rows(), true);
    double sum = 0;
    nn::Logs logs;
    for (int64_t s = 0; s < steps; ++s) {
      const nn::Array xb = samples::gather_rows(x_train, order, s * f.batch, f.batch);
      sum += train.run({{"x", xb}})[0].second;
      logs = {{"loss", sum / static_cast<double>(s + 1)}};
      bar.update(s + 1, logs);
    }
    // The test set in batches of --batch (a last partial batch traces the step once more).
    std::vector<int32_t> all(static_cast<size_t>(x_test.rows()));
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int32_t>(i);
    double total = 0;
    for (int64_t first = 0; first < x_test.rows(); first += f.batch) {
      const int64_t count = std::min(f.batch, x_test.rows() - first);
      total += evaluate.run({{"x", samples::gather_rows(x_test, all, first, count)}})[0].second;
    }
    test_value = total / static_cast<double>(x_test.rows());
    logs.push_back({"val_loss", test_value});
    bar.finish(logs);

    // Pictures: reconstructions (a row of originals, then their reconstructions) and samples.
    reconstruct.run({{"x", x_shown}});
    const nn::Array recon = reconstruct.output("images");
    const auto* orig = reinterpret_cast<const float*>(x_shown.data());
    const auto* back = reinterpret_cast<const float*>(recon.data());
    std::vector<float> pairs;
    for (int64_t row = 0; row * 8 < shown; ++row) {
      const int64_t n = std::min<int64_t>(8, shown - row * 8);
      for (const float* src : {orig, back})
        pairs.insert(pairs.end(), src + row * 8 * 784, src + (row * 8 + n) * 784);
    }
    nn::save_image_grid((fs::path(f.out_dir) / "vae_reconstructions.png").string(),
                        nn::Array::of<float>({static_cast<int64_t>(pairs.size() / 784), 28, 28, 1},
                                             pairs),
                        8);
    const std::vector<float> samples = sigmoid(m.decoder->predict(z_fixed, 64));
    nn::save_image_grid((fs::path(f.out_dir) / "vae_samples.png").string(),
                        nn::Array::of<float>({64, 28, 28, 1}, samples), 8);
  }
  std::printf("test_neg_elbo: %.4f\n", test_value);
  std::cout << "Wrote " << (fs::path(f.out_dir) / "vae_reconstructions.png").string() << " and "
            << (fs::path(f.out_dir) / "vae_samples.png").string() << "\n";
  if (f.expect_neg_elbo >= 0 && !(test_value <= f.expect_neg_elbo)) {
    std::fprintf(stderr, "vae: test_neg_elbo %.4f is above --expect-neg-elbo %.4f\n", test_value,
                 f.expect_neg_elbo);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{"Train a convolutional VAE on an MNIST-format data set (Fashion-MNIST)"};
  app.add_option("--data", f.data, "folder with train-images-idx3-ubyte(.gz), t10k-...")
      ->capture_default_str();
  app.add_option("--epochs", f.epochs, "epochs to train")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--batch", f.batch, "batch size")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--latent", f.latent, "latent dimensions")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--device", f.device,
                 "device spec (CPU:0, /GPU:0, ...) or auto: a GPU if there is one, else the CPU")
      ->capture_default_str();
  app.add_option("--limit", f.limit, "train on the first N training images only")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--test-limit", f.test_limit, "test on the first N test images only")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--threads", f.threads, "cpu plugin threads (0: every core)")
      ->check(CLI::Range(0, 4096));
  app.add_option("--learning-rate", f.learning_rate, "Adam's learning rate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--seed", f.seed, "seed of the weights, shuffles, noise and sample codes")
      ->capture_default_str();
  app.add_option("--out-dir", f.out_dir, "folder for vae_reconstructions.png, vae_samples.png")
      ->capture_default_str();
  app.add_option("--expect-neg-elbo", f.expect_neg_elbo,
                 "exit 1 when the final test negative ELBO is above this (for tests)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  try {
    return run(f);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vae: error: %s\n", e.what());
  }
  return 1;
}
