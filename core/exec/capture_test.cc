// capture_test.cc: the executor's capture path (run.cc) against the reference plugin's capture
// test double (option capture=1, plugins/reference/capture.cc), which records a stream's
// work with frozen arguments and replays it, as CUDA Graphs do:
//   - captured replays give exactly the results of plain execution (use_capture 0), run for
//     run, for a training step (variables updated in place) and for random ops (dropout,
//     random_uniform), which must draw fresh numbers on every replay — run k's numbers;
//   - the run count (set_run_count) still steers what a replay draws;
//   - stats().captured_replays counts replays; profiling never replays; an executable on
//     two devices is not captured; a plugin instance that declines capture runs uncaptured.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "exec/compiled.hpp"
#include "exec/exec_test_util.hpp"
#include "ops/op_registry.hpp"
#include "ops/sample.hpp"

namespace dlrt::core {
namespace {

using namespace exec_test;  // NOLINT: the shared test helpers

// A context on this build tree's plugins with only reference devices visible, created with
// `plugin_options` (e.g. "reference:capture=1"), environment ignored.
std::unique_ptr<dlrt_context> ref_context(const char* plugin_options) {
  dlrt_context_options o;
  dlrt_context_options_init(&o);
  const char* paths[] = {DLRT_TEST_PLUGIN_DIR};
  o.plugin_paths = paths;
  o.num_plugin_paths = 1;
  o.search_default_paths = 0;
  o.visible_devices = "REF";
  o.plugin_options = plugin_options;
  return std::make_unique<dlrt_context>(&o, [](const char*) -> const char* { return nullptr; });
}

CompileOptions with_capture(bool on, bool train = false) {
  CompileOptions o;
  o.use_capture = on;
  o.run_assigns = train;
  return o;
}

// Fetches every value of `ex` as floats, one vector per fetch.
std::vector<std::vector<float>> run_and_read(Executable& ex,
                                             const std::vector<const dlrt_tensor*>& feeds,
                                             size_t num_fetches) {
  std::vector<dlrt_tensor*> out(num_fetches, nullptr);
  ex.run(feeds, out);
  std::vector<std::vector<float>> values;
  for (dlrt_tensor* t : out) {
    TensorPtr owned(t);
    values.push_back(read(*owned));
  }
  return values;
}

// x -> dropout (rate 0.5, seed 7) -> y, mask; and an unrelated random_uniform (seed 11).
struct RandomGraph {
  ValueRef x, y, mask, u;
  void build(Graph& g) {
    x = g.add_placeholder("x", {DLRT_F32, {4, 8}});
    auto drop = g.add_op("dropout", "drop", {x}, {{"rate", 0.5}, {"seed", 7}});
    y = drop.at(0);
    mask = drop.at(1);
    u = g.add_op("random_uniform", "u", {}, {{"shape", {3, 5}}, {"seed", 11}}).at(0);
  }
};

TEST(Capture, RandomOpsDrawRunKsNumbersOnEveryReplay) {
  auto ctx = ref_context("reference:capture=1");
  ASSERT_EQ(ctx->registry().devices().size(), 1u);
  Graph g(*ctx);
  RandomGraph net;
  net.build(g);
  auto captured = Executable::compile(g, {net.x}, {net.y, net.mask, net.u}, with_capture(true));
  auto plain = Executable::compile(g, {net.x}, {net.y, net.mask, net.u}, with_capture(false));
  ASSERT_TRUE(dynamic_cast<exec::CompiledExecutable&>(*captured).capture_allowed);
  EXPECT_FALSE(dynamic_cast<exec::CompiledExecutable&>(*plain).capture_allowed);
  // The run count's device word: made because the device runs random ops.
  EXPECT_NE(dynamic_cast<exec::CompiledExecutable&>(*captured).devices[0].rng_offset.data(),
            nullptr);
  TensorPtr x = tensor(*ctx, 0, {DLRT_F32, {4, 8}}, random_floats(32, 3));

  std::vector<std::vector<std::vector<float>>> seen;
  for (int run = 0; run < 6; ++run) {
    auto a = run_and_read(*captured, {x.get()}, 3);
    auto b = run_and_read(*plain, {x.get()}, 3);
    EXPECT_EQ(a, b) << "run " << run;
    for (const auto& earlier : seen) EXPECT_NE(a[2], earlier[2]) << "run " << run << " repeats";
    seen.push_back(a);
  }
  // Run 1 was recorded and launched; runs 2..5 replayed the recording.
  EXPECT_EQ(captured->stats().captured_replays, 4u);
  EXPECT_EQ(plain->stats().captured_replays, 0u);
  EXPECT_EQ(captured->stats().run_allocations, 0u);

  // The run count still decides what a replay draws: back to run 2's numbers.
  captured->set_run_count(2);
  EXPECT_EQ(run_and_read(*captured, {x.get()}, 3), seen[2]);
  EXPECT_EQ(captured->stats().captured_replays, 5u);
}

// Every op the schema flags uses_rng (not a list kept here): an executable running its first
// sample gets the device-side run-count word, and captured replays draw fresh numbers on
// every run, equal to plain runs.
TEST(Capture, EveryOpFlaggedUsesRngDrawsFreshNumbersUnderCapture) {
  auto ctx = ref_context("reference:capture=1");
  int flagged = 0;
  for (const ops::OpDef* def : ops::all_ops()) {
    if (!def->uses_rng) continue;
    ++flagged;
    SCOPED_TRACE(def->name);
    const ops::Sample sample = ops::op_samples(*def).at(0);
    Graph g(*ctx);
    std::vector<ValueRef> feeds;
    std::vector<TensorPtr> inputs;
    std::vector<const dlrt_tensor*> feed_ptrs;
    for (const ops::SampleInput& in : sample.inputs) {
      ASSERT_EQ(in.dtype, DLRT_F32);
      feeds.push_back(g.add_placeholder(in.name, {in.dtype, in.dims}));
      inputs.push_back(tensor(*ctx, 0, {in.dtype, in.dims},
                              random_floats(static_cast<size_t>(ops::num_elements(in.dims)), 5)));
      feed_ptrs.push_back(inputs.back().get());
    }
    std::vector<ValueRef> outs = g.add_op(def->name, "op", feeds, sample.attrs);
    auto captured = Executable::compile(g, feeds, outs, with_capture(true));
    auto plain = Executable::compile(g, feeds, outs, with_capture(false));
    EXPECT_NE(dynamic_cast<exec::CompiledExecutable&>(*captured).devices[0].rng_offset.data(),
              nullptr);
    std::vector<std::vector<std::vector<float>>> seen;
    for (int run = 0; run < 4; ++run) {
      auto a = run_and_read(*captured, feed_ptrs, outs.size());
      EXPECT_EQ(a, run_and_read(*plain, feed_ptrs, outs.size())) << "run " << run;
      for (const auto& earlier : seen) EXPECT_NE(a, earlier) << "run " << run << " repeats";
      seen.push_back(a);
    }
    EXPECT_EQ(captured->stats().captured_replays, 2u);
  }
  EXPECT_GE(flagged, 3);  // random_uniform, random_normal, dropout at least
}

// The set-up before any run: a first run that already counts from 100 is still a plain run
// (capture starts at this executable's second run), and replays continue from there.
TEST(Capture, RunCountSetBeforeTheFirstRun) {
  auto ctx = ref_context("reference:capture=1");
  Graph g(*ctx);
  RandomGraph net;
  net.build(g);
  auto captured = Executable::compile(g, {net.x}, {net.u}, with_capture(true));
  auto plain = Executable::compile(g, {net.x}, {net.u}, with_capture(false));
  captured->set_run_count(100);
  plain->set_run_count(100);
  TensorPtr x = tensor(*ctx, 0, {DLRT_F32, {4, 8}}, random_floats(32, 3));
  for (int run = 0; run < 3; ++run)
    EXPECT_EQ(run_and_read(*captured, {x.get()}, 1), run_and_read(*plain, {x.get()}, 1));
  EXPECT_EQ(captured->stats().captured_replays, 1u);
}

// A training step (in-place optimizer updates): captured replays train exactly as plain runs.
TEST(Capture, TrainingStepReplaysEqualPlainRuns) {
  auto ctx = ref_context("reference:capture=1");
  Graph g_cap(*ctx), g_plain(*ctx);
  Mlp a, b;
  const int batch = 12;
  a.build(g_cap, "adam", batch);
  b.build(g_plain, "adam", batch);
  auto captured = Executable::compile(g_cap, {a.x, a.labels}, {a.loss}, with_capture(true, true));
  auto plain = Executable::compile(g_plain, {b.x, b.labels}, {b.loss}, with_capture(false, true));
  std::vector<float> xs;
  std::vector<int32_t> ys;
  toy_batch(batch, 5, xs, ys);
  TensorPtr x = tensor(*ctx, 0, {DLRT_F32, {batch, 4}}, xs);
  auto labels = std::make_unique<dlrt_tensor>(*ctx, 0, TensorType{DLRT_I32, {batch}});
  labels->write(ys.data(), ys.size() * sizeof(int32_t));
  std::vector<float> losses;
  for (int step = 0; step < 8; ++step) {
    auto la = run_and_read(*captured, {x.get(), labels.get()}, 1);
    auto lb = run_and_read(*plain, {x.get(), labels.get()}, 1);
    EXPECT_EQ(la, lb) << "step " << step;
    losses.push_back(la[0][0]);
  }
  EXPECT_LT(losses.back(), losses.front());  // the replays really updated the variables
  EXPECT_EQ(captured->stats().captured_replays, 6u);
  // And the weights the replays left behind are the plain run's, bit for bit.
  auto weights_a = Executable::compile(g_cap, {}, a.vars, {});
  auto weights_b = Executable::compile(g_plain, {}, b.vars, {});
  EXPECT_EQ(run_and_read(*weights_a, {}, a.vars.size()),
            run_and_read(*weights_b, {}, b.vars.size()));
}

TEST(Capture, ProfilingNeverReplays) {
  auto ctx = ref_context("reference:capture=1");
  Graph g(*ctx);
  RandomGraph net;
  net.build(g);
  auto captured = Executable::compile(g, {net.x}, {net.y, net.u}, with_capture(true));
  auto plain = Executable::compile(g, {net.x}, {net.y, net.u}, with_capture(false));
  TensorPtr x = tensor(*ctx, 0, {DLRT_F32, {4, 8}}, random_floats(32, 3));
  captured->set_profiling(true);
  for (int run = 0; run < 3; ++run)
    EXPECT_EQ(run_and_read(*captured, {x.get()}, 2), run_and_read(*plain, {x.get()}, 2));
  EXPECT_EQ(captured->stats().captured_replays, 0u);
  // Profiling off: the next run records (this executable has run before), later ones replay;
  // on again: every run is enqueued node by node, the recording kept for later.
  captured->set_profiling(false);
  for (int run = 0; run < 3; ++run)
    EXPECT_EQ(run_and_read(*captured, {x.get()}, 2), run_and_read(*plain, {x.get()}, 2));
  EXPECT_EQ(captured->stats().captured_replays, 2u);
  captured->set_profiling(true);
  for (int run = 0; run < 2; ++run)
    EXPECT_EQ(run_and_read(*captured, {x.get()}, 2), run_and_read(*plain, {x.get()}, 2));
  EXPECT_EQ(captured->stats().captured_replays, 2u);
}

TEST(Capture, TwoDevicesAreNotCaptured) {
  auto ctx = ref_context("reference:capture=1;reference:num_devices=2");
  ASSERT_EQ(ctx->registry().devices().size(), 2u);
  Graph one(*ctx), two(*ctx);
  TwoLayers a, b;
  a.build(one, "REF:0", "REF:0");
  b.build(two, "REF:0", "REF:1");
  auto single = Executable::compile(one, {a.x}, {a.y}, with_capture(true));
  auto split = Executable::compile(two, {b.x}, {b.y}, with_capture(true));
  EXPECT_FALSE(dynamic_cast<exec::CompiledExecutable&>(*split).capture_allowed);
  // No random op: no run-count word, no extra copy per run.
  EXPECT_EQ(dynamic_cast<exec::CompiledExecutable&>(*single).devices[0].rng_offset.data(), nullptr);
  TensorPtr x = tensor(*ctx, 0, {DLRT_F32, {4, 3}}, kX);
  for (int run = 0; run < 4; ++run)
    EXPECT_EQ(run_and_read(*single, {x.get()}, 1), run_and_read(*split, {x.get()}, 1));
  EXPECT_EQ(single->stats().captured_replays, 2u);
  EXPECT_EQ(split->stats().captured_replays, 0u);
}

// Without capture=1 the reference plugin still offers the table but declines capture_begin
// (UNIMPLEMENTED): the executor runs every step uncaptured and keeps working.
TEST(Capture, ADecliningPluginRunsUncaptured) {
  auto ctx = ref_context("");
  Graph g(*ctx);
  RandomGraph net;
  net.build(g);
  auto ex = Executable::compile(g, {net.x}, {net.y, net.u}, with_capture(true));
  auto plain = Executable::compile(g, {net.x}, {net.y, net.u}, with_capture(false));
  auto& compiled = dynamic_cast<exec::CompiledExecutable&>(*ex);
  EXPECT_TRUE(compiled.capture_allowed);  // the table is there: decided at run time
  TensorPtr x = tensor(*ctx, 0, {DLRT_F32, {4, 8}}, random_floats(32, 3));
  for (int run = 0; run < 4; ++run)
    EXPECT_EQ(run_and_read(*ex, {x.get()}, 2), run_and_read(*plain, {x.get()}, 2));
  EXPECT_FALSE(compiled.capture_allowed);  // declined once, not asked again
  EXPECT_EQ(ex->stats().captured_replays, 0u);
}

// A capture that fails at capture_end (CUDA: an invalidated capture, or cudaGraphInstantiate
// failing; here option capture_fault=1 fails the first capture_end) does not fail the run:
// the recorded step runs uncaptured, one warning says why, and the executable never tries
// to capture again, although the double's later capture_ends would succeed. A training step
// keeps the plain run's losses and weights bit for bit.
TEST(Capture, AFailedCaptureRunsUncapturedFromThenOn) {
  auto ctx = ref_context("reference:capture=1;reference:capture_fault=1");
  Graph g_cap(*ctx), g_plain(*ctx);
  Mlp a, b;
  const int batch = 12;
  a.build(g_cap, "adam", batch);
  b.build(g_plain, "adam", batch);
  auto captured = Executable::compile(g_cap, {a.x, a.labels}, {a.loss}, with_capture(true, true));
  auto plain = Executable::compile(g_plain, {b.x, b.labels}, {b.loss}, with_capture(false, true));
  auto& compiled = dynamic_cast<exec::CompiledExecutable&>(*captured);
  std::vector<float> xs;
  std::vector<int32_t> ys;
  toy_batch(batch, 5, xs, ys);
  TensorPtr x = tensor(*ctx, 0, {DLRT_F32, {batch, 4}}, xs);
  auto labels = std::make_unique<dlrt_tensor>(*ctx, 0, TensorType{DLRT_I32, {batch}});
  labels->write(ys.data(), ys.size() * sizeof(int32_t));
  ::testing::internal::CaptureStderr();
  for (int step = 0; step < 6; ++step) {
    std::vector<std::vector<float>> la;
    ASSERT_NO_THROW(la = run_and_read(*captured, {x.get(), labels.get()}, 1)) << "step " << step;
    EXPECT_EQ(la, run_and_read(*plain, {x.get(), labels.get()}, 1)) << "step " << step;
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(captured->stats().captured_replays, 0u);
  EXPECT_FALSE(compiled.capture_allowed);
  EXPECT_NE(compiled.capture_failure.find("capture_end failed"), std::string::npos)
      << compiled.capture_failure;
  EXPECT_NE(compiled.capture_failure.find("capture_fault=1"), std::string::npos)
      << compiled.capture_failure;
  // Logged once (a warning), not once per run.
  size_t warnings = 0;
  for (size_t at = log.find("capture is off"); at != std::string::npos;
       at = log.find("capture is off", at + 1))
    ++warnings;
  EXPECT_EQ(warnings, 1u) << log;
  auto weights_a = Executable::compile(g_cap, {}, a.vars, {});
  auto weights_b = Executable::compile(g_plain, {}, b.vars, {});
  EXPECT_EQ(run_and_read(*weights_a, {}, a.vars.size()),
            run_and_read(*weights_b, {}, b.vars.size()));
}

// The same counters through the C API (dlrt_executable_run_stats), which dlbench reports.
TEST(Capture, RunStatsThroughTheCApi) {
  auto ctx = ref_context("reference:capture=1");
  dlrt_graph* g = nullptr;
  ASSERT_EQ(dlrt_graph_create(ctx.get(), &g), nullptr);
  dlrt_tensor_desc d{};
  d.struct_size = sizeof(d);
  d.dtype = DLRT_F32;
  d.rank = 1;
  d.dims[0] = 4;
  d.layout = DLRT_LAYOUT_DENSE;
  dlrt_value x = DLRT_INVALID_VALUE, y = DLRT_INVALID_VALUE;
  size_t n = 0;
  ASSERT_EQ(dlrt_graph_placeholder(g, "x", &d, &x), nullptr);
  ASSERT_EQ(dlrt_graph_op(g, "relu", "y", &x, 1, nullptr, 0, &y, 1, &n), nullptr);
  dlrt_executable* ex = nullptr;
  ASSERT_EQ(dlrt_graph_compile(g, &x, 1, &y, 1, nullptr, &ex), nullptr);
  TensorPtr xt = tensor(*ctx, 0, {DLRT_F32, {4}}, {1, -2, 3, -4});
  TensorPtr yt = std::make_unique<dlrt_tensor>(*ctx, 0, TensorType{DLRT_F32, {4}});
  const dlrt_tensor* feeds[] = {xt.get()};
  for (int run = 0; run < 4; ++run) {
    dlrt_tensor* fetches[] = {yt.get()};
    ASSERT_EQ(dlrt_executable_run(ex, feeds, 1, fetches, 1), nullptr);
  }
  EXPECT_EQ(read(*yt), (std::vector<float>{1, 0, 3, 0}));
  dlrt_run_stats s{};
  s.struct_size = sizeof(s);
  ASSERT_EQ(dlrt_executable_run_stats(ex, &s), nullptr);
  EXPECT_EQ(s.kernels, 1u);
  EXPECT_EQ(s.runs, 4u);
  EXPECT_EQ(s.captured_replays, 2u);
  EXPECT_EQ(s.run_allocations, 0u);
  // An older caller's shorter struct is written only as far as it reaches.
  dlrt_run_stats old{};
  old.struct_size = offsetof(dlrt_run_stats, captured_replays);
  old.captured_replays = 77;
  ASSERT_EQ(dlrt_executable_run_stats(ex, &old), nullptr);
  EXPECT_EQ(old.runs, 4u);
  EXPECT_EQ(old.captured_replays, 77u);
  dlrt_status* bad = dlrt_executable_run_stats(ex, nullptr);
  EXPECT_EQ(dlrt_status_code(bad), DLRT_INVALID_ARGUMENT);
  dlrt_status_free(bad);
  dlrt_executable_destroy(ex);
  dlrt_graph_destroy(g);
}

}  // namespace
}  // namespace dlrt::core
