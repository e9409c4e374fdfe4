// samples/char_transformer: a GPT-style byte-level language model (models.hpp: 4 layers, 4
// heads, d = 128, context 128 by default) trained on a text corpus (Debian's fortunes by
// default), then text generated from a prompt with a key/value cache (kv_decoder.hpp).
//
//   char_transformer                                  train on the best device, then generate
//   char_transformer --minutes 15                     stop starting epochs after 15 minutes
//   char_transformer --model lstm                     a 2-layer LSTM of the same width instead
//   char_transformer --prompt "Q: " --temperature 0.8 --seed 3 --tokens 400
//   char_transformer --checkpoint ck.safetensors      save after every epoch (--resume goes on)
//   char_transformer --load ck.safetensors --epochs 0 generate from saved weights only
//
// Training: every epoch draws --steps-per-epoch * --batch fresh windows of the training text
// (seeded by --seed and the epoch: a rerun sees the same ones) and validates on the first
// --val-windows consecutive windows of the validation text (the corpus's last 10%). It prints
// Keras' progress with val_loss in nats, then "val_bits_per_char: B" (val_loss / ln 2) per
// epoch. AdamW (Keras' defaults, weight decay 0.004), global clipnorm 1, and the learning rate
// warmed up linearly over --warmup-steps then on a cosine to 0 over the whole run
// (Keras' CosineDecay with warmup).
//
// Generation: the prompt's bytes, then --tokens new ones, each drawn from
// softmax(logits / temperature) by the `multinomial` op (Philox, keyed by --seed and the
// token's index, so a seed repeats its text), or the argmax for --temperature 0. An empty
// prompt is refused: the model needs at least one byte to condition on.
// Errors (bad flags, a missing corpus, a bad checkpoint) print one line and exit 1.
#include <dlrt/dlrt.hpp>
#include <dlrt/nn.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "char_transformer/generate.hpp"
#include "char_transformer/models.hpp"
#include "common/auto_device.hpp"

namespace nn = dlrt::nn;
namespace fs = std::filesystem;
namespace ct = char_transformer;

namespace {

struct Flags {
  std::string data = "/usr/share/games/fortunes";
  std::string model = "transformer";
  ct::ModelConfig net;
  int64_t epochs = 10;
  int64_t steps_per_epoch = 200;
  int64_t batch = 32;
  double minutes = 0;  // 0: no time limit
  int64_t val_windows = 64;
  double learning_rate = 1e-3;
  int64_t warmup_steps = 100;
  std::string device = "auto";
  int threads = -1;
  uint64_t seed = 42;
  std::string checkpoint;
  bool resume = false;
  std::string load;
  std::string prompt = "Q: ";
  double temperature = 0.8;
  int64_t tokens = 300;
  double expect_bits = 0;  // > 0: exit 1 when the last val_bits_per_char is above it
};

// Prints bits per character after each epoch: val_loss (nats per byte) / ln 2.
class BitsPerChar : public nn::Callback {
 public:
  double last = 0;
  void on_epoch_end(nn::Model&, int64_t, const nn::Logs& logs) override {
    for (const auto& [k, v] : logs)
      if (k == "val_loss") {
        last = v / std::log(2.0);
        std::printf("val_bits_per_char: %.4f\n", last);
        std::fflush(stdout);
      }
  }
};

int run(const Flags& f) {
  dlrt::ContextOptions options;
  if (f.threads >= 0) options.plugin_options("cpu:threads=" + std::to_string(f.threads));
  dlrt::Context ctx(options);
  const std::string device = samples::pick_device(ctx, f.device);
  if (f.prompt.empty())
    throw dlrt::Error(DLRT_INVALID_ARGUMENT,
                      "--prompt is empty; give at least one character to start from");

  const nn::TextCorpus corpus = nn::TextCorpus::read(f.data);
  auto [train, val] = corpus.split(0.1);
  std::cout << "Data: " << f.data << ": " << train.size() << " training and " << val.size()
            << " validation bytes\n";
  std::cout << "Device: " << device << "\n";

  const int64_t T = f.net.context;
  nn::Input in({T});
  nn::SymbolicTensor logits = f.model == "lstm" ? ct::lstm(in, f.net) : ct::gpt(in, f.net);
  nn::Model model(ctx, in, logits, f.model == "lstm" ? "char_lstm" : "char_transformer");
  nn::CompileConfig config;
  config.device = device;
  config.seed = f.seed;
  const int64_t total_steps = std::max<int64_t>(1, f.epochs * f.steps_per_epoch);
  const int64_t warmup = std::min(f.warmup_steps, total_steps - 1);
  nn::AdamW opt(nn::CosineDecay(f.learning_rate / 100, std::max<int64_t>(1, total_steps - warmup),
                                0.0, f.learning_rate, warmup));
  opt.set_global_clipnorm(1.0);
  model.compile(opt, nn::SparseCategoricalCrossentropy(/*from_logits=*/true), {"accuracy"},
                config);
  model.summary(std::cout);
  if (!f.load.empty()) model.load_weights(f.load);

  const nn::TextWindows vw = val.sequential_windows(T);
  const nn::Array val_x = vw.x.head(std::min(f.val_windows, vw.x.rows()));
  const nn::Array val_y = vw.y.head(std::min(f.val_windows, vw.y.rows()));
  auto bits = std::make_shared<BitsPerChar>();
  int64_t first_epoch = 0;
  if (f.resume && fs::exists(f.checkpoint)) {
    model.load_weights(f.checkpoint);
    first_epoch = std::min(model.epoch(), f.epochs);
    std::cout << "Resumed from " << f.checkpoint << " after epoch " << first_epoch << "\n";
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t e = first_epoch; e < f.epochs; ++e) {
    const double minutes =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 60;
    if (f.minutes > 0 && minutes >= f.minutes) {
      std::printf("Stopped after %lld epochs: %.1f minutes (--minutes %.1f)\n",
                  static_cast<long long>(e), minutes, f.minutes);
      break;
    }
    const nn::TextWindows tw =
        train.windows(T, f.steps_per_epoch * f.batch, nn::derive_seed(f.seed, "epoch/" + std::to_string(e)));
    nn::FitOptions fit;
    fit.initial_epoch = e;
    fit.epochs = e + 1;
    fit.batch_size = f.batch;
    fit.progress.epochs_total = f.epochs;  // "Epoch e/--epochs", though each fit runs one
    fit.validation_x = &val_x;
    fit.validation_y = &val_y;
    fit.callbacks.push_back(bits);
    if (!f.checkpoint.empty())
      fit.callbacks.push_back(std::make_shared<nn::ModelCheckpoint>(f.checkpoint));
    model.fit(tw.x, tw.y, fit);
  }
  const double trained =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("train_seconds: %.1f\n", trained);

  if (f.tokens > 0) {
    const std::string text =
        f.model == "lstm"
            ? ct::generate_full_rerun(ctx, model, device, T, f.prompt, f.tokens, f.temperature, f.seed)
            : ct::generate_cached(ctx, model, device, f.prompt, f.tokens, f.temperature, f.seed);
    std::cout << "----- generated (" << f.tokens << " bytes, temperature " << f.temperature
              << ", seed " << f.seed << ") -----\n"
              << f.prompt << text << "\n-----\n";
  }
  if (f.expect_bits > 0 && !(bits->last > 0 && bits->last <= f.expect_bits)) {
    std::fprintf(stderr, "char_transformer: val_bits_per_char %.4f is not <= --expect-bits %.4f\n",
                 bits->last, f.expect_bits);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{"Train a character-level Transformer (or LSTM) on a text corpus and generate text"};
  app.add_option("--data", f.data, "a text file, or a folder of them (fortunes' layout)")
      ->capture_default_str();
  app.add_option("--model", f.model, "transformer (GPT-style) or lstm")
      ->check(CLI::IsMember({"transformer", "lstm"}))
      ->capture_default_str();
  app.add_option("--context", f.net.context, "T: the window length and the position table's")
      ->check(CLI::Range(int64_t{2}, int64_t{4096}))
      ->capture_default_str();
  app.add_option("--d-model", f.net.d_model, "the model width d")
      ->check(CLI::Range(int64_t{1}, int64_t{8192}))
      ->capture_default_str();
  app.add_option("--heads", f.net.heads, "attention heads (d must divide by it)")
      ->check(CLI::Range(int64_t{1}, int64_t{256}))
      ->capture_default_str();
  app.add_option("--layers", f.net.layers, "Transformer blocks (LSTM layers with --model lstm)")
      ->check(CLI::Range(int64_t{1}, int64_t{64}))
      ->capture_default_str();
  app.add_option("--dropout", f.net.dropout, "dropout in every block (training only)")
      ->check(CLI::Range(0.0, 0.95))
      ->capture_default_str();
  app.add_option("--epochs", f.epochs, "epochs of --steps-per-epoch steps (0: no training)")
      ->check(CLI::Range(int64_t{0}, int64_t{100000}))
      ->capture_default_str();
  app.add_option("--steps-per-epoch", f.steps_per_epoch, "training steps per epoch")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  app.add_option("--batch", f.batch, "windows per step")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--minutes", f.minutes, "start no epoch after this many minutes of training")
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--val-windows", f.val_windows, "validation windows (from the start of the validation text)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  app.add_option("--learning-rate", f.learning_rate, "the peak learning rate (after warm-up)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--warmup-steps", f.warmup_steps, "linear warm-up steps")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30))
      ->capture_default_str();
  app.add_option("--device", f.device, "device spec (CPU:0, /GPU:0, ...) or auto")
      ->capture_default_str();
  app.add_option("--threads", f.threads, "cpu plugin threads (0: every core)")
      ->check(CLI::Range(0, 4096));
  app.add_option("--seed", f.seed, "seed of the weights, the windows and the sampling")
      ->capture_default_str();
  app.add_option("--checkpoint", f.checkpoint, "save the model here (safetensors) after every epoch");
  app.add_flag("--resume", f.resume, "continue from --checkpoint when it exists");
  app.add_option("--load", f.load, "start from these saved weights (a --checkpoint file)");
  app.add_option("--prompt", f.prompt, "the text generation starts from")->capture_default_str();
  app.add_option("--temperature", f.temperature, "sampling temperature (0: always the most likely byte)")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  app.add_option("--tokens", f.tokens, "bytes to generate after training (0: none)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 24))
      ->capture_default_str();
  app.add_option("--expect-bits", f.expect_bits,
                 "exit 1 when the last val_bits_per_char is above this (for tests)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  if (f.resume && f.checkpoint.empty()) {
    std::fprintf(stderr, "char_transformer: error: --resume needs --checkpoint PATH\n");
    return 1;
  }
  try {
    return run(f);
  } catch (const dlrt::Error& e) {
    std::fprintf(stderr, "char_transformer: error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "char_transformer: error: %s\n", e.what());
  }
  return 1;
}
