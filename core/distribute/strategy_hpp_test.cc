// strategy_hpp_test.cc: dlrt.hpp's StrategyOptions/Strategy over the C API: defaults, specs,
// the sums and broadcast through dlrt::Tensor, the vector-length check only C++ can make,
// errors as dlrt::Error, move-only ownership.
#include <dlrt/dlrt.hpp>
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#ifndef DLRT_TEST_PLUGIN_DIR
#error "DLRT_TEST_PLUGIN_DIR must be defined by the build"
#endif

namespace {

static_assert(!std::is_copy_constructible_v<dlrt::Strategy>);
static_assert(std::is_nothrow_move_constructible_v<dlrt::Strategy>);

dlrt::Context context(const std::string& visible, int cpu_split) {
  dlrt::ContextOptions o;
  o.plugin_path(std::string(DLRT_TEST_PLUGIN_DIR) + "/libdlrt-cpu.so")
      .plugin_path(std::string(DLRT_TEST_PLUGIN_DIR) + "/libdlrt-reference.so")
      .search_default_paths(false)
      .visible_devices(visible)
      .plugin_options("reference:num_devices=3");
  if (cpu_split > 1) o.logical_devices("CPU:0", cpu_split);
  return dlrt::Context(o);
}

TEST(StrategyHpp, MirroredSumAndBroadcast) {
  for (const char* visible : {"CPU", "REF"}) {
    dlrt::Context ctx = context(visible, std::string(visible) == "CPU" ? 3 : 1);
    dlrt::Strategy s(ctx);
    ASSERT_EQ(s.num_replicas(), 3u) << visible;
    EXPECT_EQ(s.rank(), 0);
    EXPECT_EQ(s.num_workers(), 1);
    EXPECT_EQ(s.local_rank(), 0);
    std::vector<dlrt::Tensor> owned;
    for (size_t r = 0; r < 3; ++r) {
      owned.push_back(dlrt::Tensor::create(ctx, s.replica_device(r), DLRT_F32, {2}));
      owned.back().write(std::vector<float>{float(r), 0.25f});
      owned.push_back(dlrt::Tensor::create(ctx, s.replica_device(r), DLRT_F32, {1}));
      owned.back().write(std::vector<float>{1.0f});
    }
    std::vector<dlrt::Tensor*> ptrs;
    for (auto& t : owned) ptrs.push_back(&t);
    s.all_reduce(ptrs, 2);
    for (size_t r = 0; r < 3; ++r) {
      EXPECT_EQ(owned[2 * r].read<float>(), (std::vector<float>{3, 0.75f})) << visible << r;
      EXPECT_EQ(owned[2 * r + 1].read<float>(), (std::vector<float>{3})) << visible << r;
    }
    owned[0].write(std::vector<float>{-4, 4});
    s.broadcast(ptrs, 2);
    EXPECT_EQ(owned[4].read<float>(), (std::vector<float>{-4, 4})) << visible;

    // Moving hands over the handle; the moved-from one is empty.
    dlrt::Strategy moved = std::move(s);
    EXPECT_TRUE(static_cast<bool>(moved));
    EXPECT_FALSE(static_cast<bool>(s));  // NOLINT: testing the moved-from state
  }
}

TEST(StrategyHpp, OptionsAndErrors) {
  dlrt::Context ctx = context("CPU", 2);
  dlrt::StrategyOptions o;
  o.devices = {"CPU:1", "CPU:0"};
  o.timeout_ms = 1000;
  dlrt::Strategy s(ctx, o);
  EXPECT_EQ(s.replica_device(0), 1u);
  try {
    s.replica_device(5);
    ADD_FAILURE() << "no error";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_OUT_OF_RANGE);
  }
  dlrt::Tensor a = dlrt::Tensor::create(ctx, 1, DLRT_F32, {2});
  dlrt::Tensor b = dlrt::Tensor::create(ctx, 0, DLRT_F32, {3});
  try {
    s.all_reduce({&a}, 1);
    ADD_FAILURE() << "no error";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("Strategy::all_reduce: 1 tensors, expected 2 replicas x 1"),
              std::string::npos)
        << e.message();
  }
  try {
    s.all_reduce({&a, &b}, 1);
    ADD_FAILURE() << "no error";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("has 3 elements, expected 2"), std::string::npos) << e.message();
  }
  o.devices = {"GPU:7"};
  try {
    dlrt::Strategy bad(ctx, o);
    ADD_FAILURE() << "no error";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("devices[0] 'GPU:7'"), std::string::npos) << e.message();
  }
}

}  // namespace
