// dlbench: the benchmark driver (docs/design.md section 9). Prints JSON on stdout so every change can be
// measured the same way; errors go to stderr with exit status 1.
//
//   dlbench ops --device CPU:0 [--repeat N] [--threads T] [--filter conv2] [--plugin-options O]
//       micro-benchmarks of the reference workload's ops at its exact shapes (ops.cc)
//   dlbench train --device CPU:0 --epochs N [--model cnn|resnet20] [--warmup-steps K]
//                 [--limit N] [--threads T] [--precision f32|bf16|f16[,...]] [--rounds R]
//                 [--compare-torch] [--data DIR] [--plugin-options cpu:winograd=0]
//       whole epochs of the reference model through dlrt/nn.hpp, optionally beside PyTorch
//       (train.cc); every model in --rounds R rounds (default 3), each dlrt then every
//       PyTorch mode, with per-round ratios and the floor (train_rounds.cc); --rounds 1 is
//       one run's document
//   dlbench train --model char_transformer --steps N [--context T] [--batch B] [--threads T]
//                 [--compare-torch] [--torch-modes eager compile]
//       samples/char_transformer's GPT on fortunes: tokens/s and the validation loss after
//       the same steps, beside its PyTorch twin (train_text.cc)
//   dlbench train --model vae --steps N [--warmup-steps K] [--batch B] [--threads T]
//                 [--compare-torch] [--torch-modes eager channels_last compile]
//       samples/vae's custom step (nn::TrainStep): ms per step beside its PyTorch twin
//       (train_vae.cc); --model dcgan the same for samples/dcgan (train_dcgan.cc)
//   dlbench infer MODEL.onnx [--batch 1 64] [--threads T] [--device CPU:0] [--compare-ort]
//                 [--ort-venv DIR]
//       an ONNX model in an InferenceSession: latency percentiles and throughput per batch
//       size, optionally beside onnxruntime with the same threads and inputs (infer.cc)
//
// Links only libdlrt (plus header-only CLI11 and nlohmann-json); plugins are found at run time.
#include <CLI/CLI.hpp>

#include <iostream>

#include "bench.hpp"

int main(int argc, char** argv) {
  CLI::App app{"dlbench: the reference workload and op micro-benchmarks, JSON out"};
  app.require_subcommand(1);

  dlbench::OpsOptions ops;
  CLI::App* ops_cmd = app.add_subcommand(
      "ops", "time the reference workload's ops at its shapes (eager, kernels cached)");
  ops_cmd->add_option("--device", ops.device, "device spec, e.g. CPU:0, /GPU:0")
      ->capture_default_str();
  ops_cmd->add_option("--repeat", ops.repeat, "timed samples per op (median and min are printed)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  ops_cmd->add_option("--threads", ops.threads, "cpu plugin threads (0: every core)")
      ->capture_default_str();
  ops_cmd->add_option("--filter", ops.filter, "only the cases whose name contains this text");
  ops_cmd->add_option(
      "--plugin-options", ops.plugin_options,
      "more plugin options, as DLRT_PLUGIN_OPTIONS (which they replace), e.g. cpu:winograd=0");

  dlbench::TrainOptions train;
  CLI::App* train_cmd = app.add_subcommand("train",
                                           "time whole epochs of the reference model "
                                           "(dlrt/nn.hpp), optionally beside PyTorch");
  train_cmd->add_option("--device", train.device, "device spec, e.g. CPU:0, /GPU:0")
      ->capture_default_str();
  train_cmd->add_option("--epochs", train.epochs, "timed epochs")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{100000}));
  train_cmd->add_option("--warmup-steps", train.warmup_steps, "untimed training steps first")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  train_cmd->add_option("--limit", train.limit, "train on the first N training images only")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  train_cmd
      ->add_option("--model", train.model,
                   "cnn (the reference workload), resnet20, char_transformer (fortunes), or "
                   "vae or dcgan (samples/vae's and samples/dcgan's custom steps)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cnn", "resnet20", "char_transformer", "vae", "dcgan"}));
  train_cmd->add_option("--steps", train.steps, "char_transformer, vae: timed training steps")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  train_cmd->add_option("--context", train.context, "char_transformer: window length T")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{2}, int64_t{4096}));
  train_cmd->add_option("--val-windows", train.val_windows,
                        "char_transformer: validation windows")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  train_cmd->add_option("--torch-modes", train.torch_modes,
                        "the twin's modes: eager, channels_last (not char_transformer: no "
                        "convolutions) and/or compile (torch.compile); default: every mode "
                        "that applies, compared with the fastest; a mode that cannot run is "
                        "recorded with its reason")
      ->check(CLI::IsMember({"eager", "channels_last", "compile"}));
  train_cmd->add_option("--batch", train.batch,
                        "batch size (default: 64 cnn, 128 resnet20, 32 char_transformer)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  train_cmd
      ->add_option("--threads", train.threads,
                   "cpu plugin threads and torch threads (0: every core)")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  train_cmd->add_option("--seed", train.seed, "initial weights and shuffles")
      ->capture_default_str();
  std::vector<std::string> precisions = {"f32"};
  int64_t rounds = 3;
  train_cmd
      ->add_option("--precision", precisions,
                   "cnn, resnet20: f32, or bf16/f16 as Keras' mixed_bfloat16/mixed_float16 "
                   "policy (16-bit compute, f32 variables); several, comma-separated "
                   "(f32,bf16), train side by side in one run")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::IsMember({"f32", "bf16", "f16"}));
  train_cmd
      ->add_option("--rounds", rounds,
                   "rounds of dlrt then every PyTorch mode back to back, summarised as "
                   "per-round ratios with min and median (1: one run, its own document); "
                   "with several --precision: every precision this many times, alternating "
                   "(f32, bf16, f32, bf16, ...)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1000}));
  train_cmd->add_flag(
      "--compare-torch", train.compare_torch,
      "also run torch_reference.py with the same data, limit, batch, epochs, threads");
  bool no_capture = false;
  train_cmd->add_flag("--no-capture", no_capture,
                      "never replay a captured step (CUDA Graphs off), for comparison");
  train_cmd->add_option(
      "--plugin-options", train.plugin_options,
      "more plugin options, as DLRT_PLUGIN_OPTIONS (which they replace), e.g. cpu:winograd=0");
  train_cmd->add_option("--data", train.data,
                        "folder in MNIST's file layout (char_transformer: a text file or "
                        "folder, default /usr/share/games/fortunes)")
      ->capture_default_str();
  train_cmd->add_option("--python", train.python, "python with torch, for --compare-torch")
      ->capture_default_str();
  train_cmd->add_option("--torch-venv", train.torch_venv,
                        "--compare-torch with this venv's python; made, with torch from "
                        "pip, when it cannot import torch");
  train_cmd->add_option("--torch-index-url", train.torch_index_url,
                        "pip's --index-url for --torch-venv's install (default: PyPI; "
                        "e.g. https://download.pytorch.org/whl/cpu)");

  dlbench::InferOptions infer;
  CLI::App* infer_cmd = app.add_subcommand(
      "infer", "time an ONNX model in an InferenceSession, optionally beside onnxruntime");
  infer_cmd->add_option("model", infer.model, "the .onnx file")->required()->check(CLI::ExistingFile);
  infer_cmd->add_option("--device", infer.device, "device spec, e.g. CPU:0, /GPU:0")
      ->capture_default_str();
  infer_cmd->add_option("--batch", infer.batches,
                        "batch sizes (a model that fixes its batch is rewritten per size)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  infer_cmd->add_option("--threads", infer.threads,
                        "cpu plugin threads and onnxruntime's intra-op threads (0: every core)")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  infer_cmd->add_option("--warmup", infer.warmup, "untimed runs per batch size")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  infer_cmd->add_option("--min-runs", infer.min_runs, "timed runs per batch size, at least")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  infer_cmd->add_option("--max-runs", infer.max_runs, "timed runs per batch size, at most")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  infer_cmd->add_option("--min-seconds", infer.min_seconds,
                        "timed runs go on until this much time has passed too")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  infer_cmd->add_option("--seed", infer.seed, "the random inputs")->capture_default_str();
  infer_cmd->add_flag("--compare-ort", infer.compare_ort,
                      "also run the model in onnxruntime (same inputs, threads, batch sizes)");
  infer_cmd->add_option("--python", infer.python, "python with onnxruntime, for --compare-ort")
      ->capture_default_str();
  infer_cmd->add_option("--ort-venv", infer.ort_venv,
                        "--compare-ort with this venv's python; made, with onnxruntime from "
                        "pip, when it cannot import it");
  infer_cmd->add_option("--work-dir", infer.work_dir,
                        "--compare-ort: keep the models and .npy files here (default: a "
                        "temporary folder, removed)");
  infer_cmd->add_option("--plugin-options", infer.plugin_options,
                        "more plugin options, as DLRT_PLUGIN_OPTIONS (which they replace)");

  CLI11_PARSE(app, argc, argv);
  try {
    dlbench::json doc;
    if (ops_cmd->parsed()) doc = dlbench::run_ops(ops);
    train.capture = !no_capture;
    if (train_cmd->parsed()) {
      if (precisions.size() == 1 && rounds == 1) {
        train.precision = precisions.front();
        doc = dlbench::run_train(train);
        doc["cpu"] = dlbench::cpu_json();
      } else if (precisions.size() == 1) {
        train.precision = precisions.front();
        doc = dlbench::run_train_rounds(train, rounds);
      } else {
        doc = dlbench::run_train_side_by_side(train, precisions, rounds);
      }
    }
    if (infer_cmd->parsed()) doc = dlbench::run_infer(infer);
    std::cout << doc.dump(2) << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "dlbench: " << e.what() << std::endl;
    return 1;
  }
}
