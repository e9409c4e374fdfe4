// abi_1_0_test.cc: a plugin built against ABI 1.0 keeps working with a 1.1 host (the
// plugin is test_plugin.cc's CASE_RANDOM_1_0, random_1_0.hpp).
//
// Such a plugin reads dlrt_kernel_args only as far as 1.0 laid it out, so it never sees
// rng_offset_device and draws with rng_offset: run k of an executable must still draw run k's
// numbers. Its capture table freezes kernel arguments (as CUDA Graphs do), so the host must
// not capture its random ops — but it still captures its other work.
#include <dlrt/dlrt.hpp>
#include <gtest/gtest.h>
#include <philox.hpp>

#include <string>
#include <vector>

#include "test_util.hpp"

namespace {

using dlrt::testing::case_dir;

dlrt::Context context_1_0() {
  return dlrt::Context(dlrt::ContextOptions()
                           .plugin_path(case_dir("random_1_0"))
                           .search_default_paths(false)
                           .visible_devices("")
                           .plugin_options(""));
}

TEST(Abi10Plugin, LoadsAsMinor0) {
  dlrt::Context ctx = context_1_0();
  ASSERT_EQ(ctx.plugin_count(), 1u);
  EXPECT_EQ(ctx.plugin(0).abi_minor, 0u);
  EXPECT_EQ(ctx.plugin(0).state, DLRT_PLUGIN_LOADED);
  EXPECT_EQ(ctx.device_count(), 2u);
}

// The host sets rng_offset = the run count for a plugin that knows nothing else, and does not
// capture the random op (a replay would repeat the captured run's numbers).
TEST(Abi10Plugin, RandomOpsDrawRunKsNumbersUncaptured) {
  dlrt::Context ctx = context_1_0();
  dlrt::Graph g(ctx);
  dlrt::Value u =
      g.op1("random_uniform", {}, {{"shape", std::vector<int64_t>{6}}, {"seed", 9}}, "u");
  dlrt::Executable ex = g.compile({}, {u});
  auto expected = [](uint64_t run) {
    std::vector<float> v;
    for (uint64_t i = 0; i < 6; ++i)
      v.push_back(static_cast<float>(double(dlrt::philox::uniform(9, run, i))));
    return v;
  };
  for (uint64_t run = 0; run < 5; ++run)
    EXPECT_EQ(ex.run({}, 1)[0].read<float>(), expected(run)) << "run " << run;
  ex.set_run_count(2);
  EXPECT_EQ(ex.run({}, 1)[0].read<float>(), expected(2));
  const dlrt_run_stats s = ex.run_stats();
  EXPECT_EQ(s.runs, 6u);
  EXPECT_EQ(s.captured_replays, 0u);
}

// Work without random ops is captured on a 1.0 plugin as on any other.
TEST(Abi10Plugin, OtherWorkIsStillCaptured) {
  dlrt::Context ctx = context_1_0();
  dlrt::Graph g(ctx);
  dlrt::Value x = g.placeholder("x", DLRT_F32, {4});
  dlrt::Value y = g.op1("relu", {x}, {}, "y");
  dlrt::Executable ex = g.compile({x}, {y});
  const size_t device = ctx.find_device("CPU:0");
  for (float sign : {1.f, -1.f, 1.f, -1.f}) {
    dlrt::Tensor t = dlrt::Tensor::create(ctx, device, DLRT_F32, {4});
    t.write(std::vector<float>{sign, -sign, 2 * sign, 0.f});
    const std::vector<float> want =
        sign > 0 ? std::vector<float>{1, 0, 2, 0} : std::vector<float>{0, 1, 0, 0};
    EXPECT_EQ(ex.run({&t}, 1)[0].read<float>(), want);
  }
  EXPECT_EQ(ex.run_stats().captured_replays, 2u);
}

}  // namespace
