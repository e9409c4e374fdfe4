// dlbench_test: smoke tests of the dlbench binary (ops and train modes). It is run as a user runs it (a child
// process, plugins found from the build tree) and its stdout must be JSON that parses with the
// fields docs/benchmarks.md reads. Timings are not asserted: the machines are shared.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>

namespace {

struct Result {
  int status = -1;
  std::string out;
};

// Runs `dlbench <args>` and collects its stdout (plus stderr when `with_stderr`).
Result run(const std::string& args, bool with_stderr = false) {
  const std::string cmd = std::string(DLBENCH_FILE) + " " + args + (with_stderr ? " 2>&1" : "");
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(DlbenchOps, PrintsJsonForEveryCaseOnCpu) {
  const Result r = run("ops --device CPU:0 --repeat 1");
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(r.out)) << r.out;
  EXPECT_EQ(doc.at("mode"), "ops");
  EXPECT_EQ(doc.at("device").at("name"), "/device:CPU:0");
  EXPECT_GT(doc.at("device").at("peak_gflops").get<double>(), 0.0);
  const auto& ops = doc.at("ops");
  ASSERT_TRUE(ops.is_array());
  bool saw_filter_grad = false, saw_adam = false;
  for (const auto& op : ops) {
    SCOPED_TRACE(op.dump());
    EXPECT_GE(op.at("median_us").get<double>(), 0.0);
    EXPECT_LE(op.at("min_us").get<double>(), op.at("median_us").get<double>());
    if (op.at("flops").get<double>() > 0) EXPECT_TRUE(op.contains("peak_fraction"));
    saw_filter_grad |= op.at("name") == "conv1.backward_filter";
    saw_adam |= op.at("name") == "adam_update.all_93322";
  }
  EXPECT_TRUE(saw_filter_grad);
  EXPECT_TRUE(saw_adam);
  EXPECT_GT(doc.at("step_ms").get<double>(), 0.0);
  EXPECT_NEAR(doc.at("step_flops").get<double>() / 64, 16.4e6, 0.1e6);
}

TEST(DlbenchOps, FilterRunsOnlyMatchingCases) {
  // pool1's forward and backward, the fused backward with the ops it replaces, and the forward
  // and fused backward on bf16 images (mixed precision).
  const Result r = run("ops --device CPU:0 --repeat 1 --filter pool1");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc.at("ops").size(), 6u);
  for (const auto& op : doc.at("ops"))
    EXPECT_NE(op.at("name").get<std::string>().find("pool1"), std::string::npos);
}

TEST(DlbenchOps, MissingDeviceIsAnErrorNamingIt) {
  const Result r = run("ops --device GPU:7 --repeat 1", true);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("GPU:7"), std::string::npos) << r.out;
}

// `dlbench train` on 640 images: the whole path (data, nn model, warm-up, timed epoch,
// validation) runs and every field a reader of docs/benchmarks.md uses is there and sane.
TEST(DlbenchTrain, SmallRunPrintsEveryField) {
  const Result r = run("train --device CPU:0 --limit 640 --epochs 1 --warmup-steps 2 --threads 1 --rounds 1");
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(r.out)) << r.out;
  EXPECT_EQ(doc.at("mode"), "train");
  EXPECT_EQ(doc.at("device").at("name"), "/device:CPU:0");
  EXPECT_EQ(doc.at("parameters"), 93322);  // docs/design.md section 9, from the layers' shapes
  EXPECT_EQ(doc.at("train_samples"), 640);
  EXPECT_EQ(doc.at("steps_per_epoch"), 10);
  EXPECT_EQ(doc.at("epoch_seconds").size(), 1u);
  for (const char* k :
       {"train_seconds_per_epoch", "val_seconds", "ms_per_step", "samples_per_second",
        "achieved_gflops", "peak_gflops", "floor_fraction", "compile_seconds"})
    EXPECT_GT(doc.at(k).get<double>(), 0.0) << k;
  EXPECT_NEAR(doc.at("flop_per_sample").get<double>(), 16.4e6, 0.1e6);
  EXPECT_DOUBLE_EQ(doc.at("flop_per_epoch").get<double>(),
                   640 * doc.at("flop_per_sample").get<double>());
  for (const char* k : {"accuracy", "val_accuracy"}) {
    EXPECT_GE(doc.at(k).get<double>(), 0.0) << k;
    EXPECT_LE(doc.at(k).get<double>(), 1.0) << k;
  }
  // The step executable's counters: the reference workload's step is dozens of kernels; the
  // cpu plugin does not capture, so no step replayed a graph.
  EXPECT_GT(doc.at("kernels_per_step").get<int64_t>(), 20);
  EXPECT_GE(doc.at("step_runs").get<int64_t>(), 10);
  EXPECT_EQ(doc.at("captured_replays").get<int64_t>(), 0);
  EXPECT_GT(doc.at("loss").get<double>(), 0.0);
  EXPECT_GT(doc.at("val_loss").get<double>(), 0.0);
  EXPECT_TRUE(doc.at("load_average_before").is_array());
  EXPECT_FALSE(doc.contains("torch"));
}

// `--precision f32,bf16 --rounds 2`: four whole runs in one process, alternating, each the
// single-precision document with its round; the summary's medians and bf16's ratios to f32.
TEST(DlbenchTrain, PrecisionsSideBySide) {
  const Result r =
      run("train --device CPU:0 --limit 256 --epochs 1 --warmup-steps 1 --threads 1 "
          "--precision f32,bf16 --rounds 2");
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(r.out)) << r.out;
  EXPECT_EQ(doc.at("mode"), "train_side_by_side");
  EXPECT_EQ(doc.at("precisions"), nlohmann::json({"f32", "bf16"}));
  const auto& runs = doc.at("runs");
  ASSERT_EQ(runs.size(), 4u);
  const char* order[] = {"f32", "bf16", "f32", "bf16"};
  const char* policy[] = {"float32", "mixed_bfloat16", "float32", "mixed_bfloat16"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(runs[i].at("precision"), order[i]);
    EXPECT_EQ(runs[i].at("dtype_policy"), policy[i]);
    EXPECT_EQ(runs[i].at("round"), static_cast<int>(i / 2 + 1));
    EXPECT_EQ(runs[i].at("mode"), "train");
  }
  const auto& f32 = doc.at("summary").at("f32");
  const auto& bf16 = doc.at("summary").at("bf16");
  EXPECT_FALSE(f32.contains("over_f32"));
  EXPECT_EQ(bf16.at("ms_per_step").size(), 2u);
  // The ratios are the runs' own figures divided, round by round.
  const auto& over = bf16.at("over_f32");
  for (size_t k = 0; k < 2; ++k)
    EXPECT_DOUBLE_EQ(over.at("ms_per_step")[k].get<double>(),
                     runs[2 * k + 1].at("ms_per_step").get<double>() /
                         runs[2 * k].at("ms_per_step").get<double>());
  EXPECT_GT(over.at("train_seconds_per_epoch_median").get<double>(), 0.0);
  EXPECT_GT(f32.at("ms_per_step_median").get<double>(), 0.0);

  const Result twice = run("train --precision bf16,bf16 --limit 64", true);
  EXPECT_EQ(twice.status, 1);
  EXPECT_NE(twice.out.find("--precision bf16 is named twice"), std::string::npos) << twice.out;
}

// `dlbench train --model resnet20` on 256 images: samples/resnet's functional network with
// batch norm, its own batch (128, so 2 steps), its parameter counts and FLOP from the plan.
TEST(DlbenchTrain, Resnet20SmallRun) {
  const Result r =
      run("train --device CPU:0 --model resnet20 --limit 256 --epochs 1 --warmup-steps 1 "
          "--threads 1 --rounds 1");
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(r.out)) << r.out;
  EXPECT_EQ(doc.at("model"), "resnet20");
  EXPECT_EQ(doc.at("batch"), 128);
  EXPECT_EQ(doc.at("steps_per_epoch"), 2);
  EXPECT_EQ(doc.at("parameters"), 272186);              // samples/resnet's summary
  EXPECT_EQ(doc.at("non_trainable_parameters"), 1568);  // the moving statistics
  // Forward multiply-adds per sample: stem 112,896; stage 1 6 x 1,806,336; stages 2 and 3
  // each 903,168 + 5 x 1,806,336 + a 100,352 projection; dense 640: 31,021,952 MAC, so
  // 62,043,904 FLOP, x3 for the training step less the stem's data gradient (225,792).
  EXPECT_DOUBLE_EQ(doc.at("flop_per_sample").get<double>(), 185905920.0);
  for (const char* k : {"train_seconds_per_epoch", "ms_per_step", "val_seconds"})
    EXPECT_GT(doc.at(k).get<double>(), 0.0) << k;
  EXPECT_GT(doc.at("loss").get<double>(), 0.0);
}

TEST(DlbenchTrain, UnknownModelIsRefused) {
  const Result r = run("train --device CPU:0 --model vgg16", true);
  EXPECT_NE(r.status, 0);  // CLI11's status for a bad flag value (main.cc: CLI11_PARSE)
  EXPECT_NE(r.out.find("--model"), std::string::npos) << r.out;
}

TEST(DlbenchTrain, CompareTorchWithoutTorchNamesThePackage) {
  const Result r =
      run("train --device CPU:0 --limit 64 --compare-torch --python /nonexistent/python3", true);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("apt-get install python3-torch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--torch-venv"), std::string::npos) << r.out;
}

// `--rounds 2` of the cnn without PyTorch: two whole runs, dlrt's step time per round with
// min and median, the floor against the best of the rounds' peaks, and the CPU named.
TEST(DlbenchRounds, TwoRoundsOfTheCnn) {
  const Result r = run("train --device CPU:0 --limit 128 --epochs 1 --warmup-steps 1 --threads 1 "
                       "--rounds 2");
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(r.out)) << r.out;
  EXPECT_EQ(doc.at("mode"), "train_rounds");
  EXPECT_EQ(doc.at("rounds"), 2);
  ASSERT_EQ(doc.at("runs").size(), 2u);
  EXPECT_EQ(doc.at("runs")[1].at("round"), 2);
  const auto& dlrt = doc.at("summary").at("dlrt").at("step_seconds");
  ASSERT_EQ(dlrt.at("per_round").size(), 2u);
  for (size_t k = 0; k < 2; ++k)  // the summary's figures are the runs' own
    EXPECT_DOUBLE_EQ(dlrt.at("per_round")[k].get<double>(),
                     doc.at("runs")[k].at("step_seconds").get<double>());
  EXPECT_LE(dlrt.at("min").get<double>(), dlrt.at("median").get<double>());
  EXPECT_FALSE(doc.at("summary").contains("anchors"));  // no --compare-torch
  // The floor: the step's FLOP (640 images' worth per 64-image step) at the best peak.
  const auto& floor = doc.at("summary").at("floor");
  EXPECT_NEAR(floor.at("flop_per_step").get<double>(), 64 * 16.4e6, 64 * 0.1e6);
  const auto& peaks = floor.at("peak_gflops_per_round");
  ASSERT_EQ(peaks.size(), 2u);
  EXPECT_DOUBLE_EQ(floor.at("peak_gflops").get<double>(),
                   std::max(peaks[0].get<double>(), peaks[1].get<double>()));
  EXPECT_EQ(floor.at("floor_fraction").at("per_round").size(), 2u);
  EXPECT_TRUE(floor.at("warnings").is_array());
  // The machine: /proc/cpuinfo's numbers and the flags kernels dispatch on.
  const auto& cpu = doc.at("cpu");
  EXPECT_TRUE(cpu.at("model_name").is_string());
  for (const char* k : {"family", "model", "stepping"}) EXPECT_TRUE(cpu.at(k).is_number()) << k;
  EXPECT_TRUE(cpu.at("isa_flags").is_array());
  EXPECT_TRUE(doc.at("isa_dispatched").is_string());
  // The peak measurement's record, passed on from the cpu plugin.
  const auto& device = doc.at("runs")[0].at("device");
  EXPECT_GE(device.at("peak_attempts").get<int>(), 1);
  EXPECT_TRUE(device.at("peak_check").is_string());
  EXPECT_TRUE(device.at("expected_peak_gflops").is_number());
}

// A "python" that imports torch but whose twin fails, as torch.compile does on a torch
// without it: every anchor mode is recorded with the reason, and the run still succeeds.
TEST(DlbenchRounds, AnchorThatCannotRunIsRecordedWithItsReason) {
  const std::string fake = testing::TempDir() + "dlbench_fake_python";
  {
    FILE* f = std::fopen(fake.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("#!/bin/sh\n# `-c 'import torch'` succeeds; running a twin fails, saying why.\n"
               "[ \"$1\" = -c ] && exit 0\necho 'RuntimeError: no torch here' >&2\nexit 3\n",
               f);
    std::fclose(f);
  }
  ASSERT_EQ(std::system(("chmod +x " + fake).c_str()), 0);
  const Result r = run("train --device CPU:0 --limit 64 --epochs 1 --warmup-steps 1 --threads 1 "
                       "--rounds 2 --compare-torch --python " + fake);
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(r.out)) << r.out;
  const auto& anchors = doc.at("summary").at("anchors");
  for (const char* mode : {"eager", "channels_last", "compile"}) {
    SCOPED_TRACE(mode);
    ASSERT_TRUE(anchors.contains(mode));
    const std::string why = anchors.at(mode).at("unavailable");
    EXPECT_NE(why.find("no torch here"), std::string::npos) << why;
    EXPECT_NE(why.find(mode), std::string::npos) << why;
    EXPECT_EQ(anchors.at(mode).at("ratio").at("per_round"), nlohmann::json({nullptr, nullptr}));
  }
  EXPECT_TRUE(doc.at("summary").at("best_anchor").contains("unavailable"));
}

// The char Transformer in rounds: its floor comes from flops.hpp's matmul count.
TEST(DlbenchRounds, CharTransformerHasAFloor) {
  const Result r = run("train --device CPU:0 --model char_transformer --steps 1 --warmup-steps 1 "
                       "--context 16 --batch 2 --val-windows 1 --threads 1 --rounds 2");
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(r.out)) << r.out;
  // T 16, d 128, 4 blocks, V 256: 3 x (4 x (24*16*128^2 + 4*16^2*128) + 2*16*128*256) per
  // window, two windows.
  const double block = 24.0 * 16 * 128 * 128 + 4.0 * 16 * 16 * 128;
  const double window = 3 * (4 * block + 2.0 * 16 * 128 * 256);
  const auto& floor = doc.at("summary").at("floor");
  EXPECT_DOUBLE_EQ(floor.at("flop_per_step").get<double>(), 2 * window);
  EXPECT_EQ(floor.at("floor_fraction").at("per_round").size(), 2u);
}

TEST(DlbenchTrain, MissingDataFolderIsAnErrorNamingIt) {
  const Result r = run("train --device CPU:0 --data /nonexistent/mnist", true);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("/nonexistent/mnist"), std::string::npos) << r.out;
}

}  // namespace

namespace {

// `dlbench train --model vae`: samples/vae's custom step (nn::TrainStep), timed per step.
TEST(DlbenchTrain, VaeSmallRun) {
  const Result r = run("train --device CPU:0 --model vae --steps 2 --warmup-steps 1 --threads 1 --rounds 1");
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(r.out)) << r.out;
  EXPECT_EQ(doc.at("model"), "vae");
  EXPECT_EQ(doc.at("batch"), 128);
  EXPECT_EQ(doc.at("parameters"), 183105);  // encoder 119,200 + decoder 63,905 (the summaries)
  EXPECT_DOUBLE_EQ(doc.at("flop_per_step").get<double>(), 128 * 34847232.0);  // flops.hpp
  EXPECT_GT(doc.at("ms_per_step").get<double>(), 0.0);
  // The negative ELBO of a barely trained model: near 784 ln 2 = 543 nats, and positive.
  EXPECT_GT(doc.at("loss").get<double>(), 300.0);
  EXPECT_LT(doc.at("loss").get<double>(), 600.0);
  EXPECT_FALSE(doc.contains("torch"));
}

}  // namespace

namespace {

// `dlbench train --model dcgan`: samples/dcgan's two-optimizer step, timed per step.
TEST(DlbenchTrain, DcganSmallRun) {
  const Result r =
      run("train --device CPU:0 --model dcgan --steps 2 --warmup-steps 1 --threads 1 --rounds 1");
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(r.out)) << r.out;
  EXPECT_EQ(doc.at("model"), "dcgan");
  EXPECT_EQ(doc.at("batch"), 128);
  EXPECT_DOUBLE_EQ(doc.at("flop_per_step").get<double>(), 128 * 133355264.0);  // flops.hpp
  EXPECT_GT(doc.at("ms_per_step").get<double>(), 0.0);
  // Near the start both losses sit near their balance: d about 2 ln 2, g about ln 2.
  EXPECT_GT(doc.at("d_loss").get<double>(), 0.3);
  EXPECT_LT(doc.at("d_loss").get<double>(), 3.0);
  EXPECT_GT(doc.at("g_loss").get<double>(), 0.1);
  EXPECT_LT(doc.at("g_loss").get<double>(), 3.0);
  EXPECT_FALSE(doc.contains("torch"));
}

}  // namespace
