// Device registry through real plugins and the C API: names across plugins, visibility from
// the option and from DLRT_VISIBLE_DEVICES, logical devices with memory limits, find_device.
// Several devices come from the purpose-built test plugin's options (devices=, type=, class=).
#include <dlrt/dlrt.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.hpp"

namespace dlrt::testing {
namespace {

using Names = std::vector<std::string>;

// loader_good: 3 CPU devices; loader_good2: 2 GPU devices of 32 MiB.
constexpr const char* kOptions =
    "loader_good:devices=3;loader_good2:devices=2;loader_good2:type=GPU;loader_good2:class=gpu;"
    "loader_good2:memory_mb=32";

std::vector<std::string> both() { return {case_dir("good"), case_dir("good2")}; }

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(Registry, NamesCountPerTypeAcrossPlugins) {
  // Both plugins default to type CPU: numbering continues across plugins in load order.
  Ctx same({case_dir("good"), case_dir("good2")});
  EXPECT_EQ(same.device_names(),
            (Names{"/device:CPU:0", "/device:CPU:1", "/device:CPU:2", "/device:CPU:3"}));
  EXPECT_STREQ(same.device(2).plugin, "loader_good2");
  EXPECT_EQ(same.device(2).plugin_ordinal, 0);

  Ctx c(both(), false, kOptions);
  ASSERT_TRUE(c.ok()) << c.status.message;
  EXPECT_EQ(c.device_names(), (Names{"/device:CPU:0", "/device:CPU:1", "/device:CPU:2",
                                     "/device:GPU:0", "/device:GPU:1"}));
  EXPECT_EQ(c.device(3).device_class, DLRT_DEVICE_CLASS_GPU);
  EXPECT_EQ(c.device(3).memory_total, 32ull << 20);
}

TEST(Registry, VisibleDevicesOptionFiltersAndRenumbers) {
  Ctx c(both(), false, kOptions, "GPU:1,CPU:2,CPU:0");
  ASSERT_TRUE(c.ok()) << c.status.message;
  EXPECT_EQ(c.device_names(), (Names{"/device:GPU:0", "/device:CPU:0", "/device:CPU:1"}));
  EXPECT_EQ(c.device(0).plugin_ordinal, 1);  // GPU:0 is the plugin's second device
  EXPECT_EQ(c.device(1).plugin_ordinal, 2);
  EXPECT_EQ(c.device(2).plugin_ordinal, 0);

  Ctx gpus(both(), false, kOptions, "GPU");
  EXPECT_EQ(gpus.device_names(), (Names{"/device:GPU:0", "/device:GPU:1"}));
}

TEST(Registry, VisibleDevicesFromTheEnvironment) {
  EnvGuard env;
  env.set("DLRT_VISIBLE_DEVICES", "CPU:1");
  Ctx c(both(), false, kOptions);
  ASSERT_TRUE(c.ok()) << c.status.message;
  ASSERT_EQ(c.device_count(), 1u);
  EXPECT_EQ(c.device(0).plugin_ordinal, 1);
  // The option wins over the environment.
  Ctx api(both(), false, kOptions, "GPU:0");
  EXPECT_EQ(api.device_names(), (Names{"/device:GPU:0"}));
}

TEST(Registry, BadVisibleDevicesFailTheCreate) {
  Ctx malformed(both(), false, kOptions, "GPU:0,gpu:x");
  EXPECT_EQ(malformed.status.code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(malformed.status.message, "gpu:x")) << malformed.status.message;
  EXPECT_EQ(malformed.ctx, nullptr);

  Ctx missing(both(), false, kOptions, "GPU:2");
  EXPECT_EQ(missing.status.code, DLRT_NOT_FOUND);
  EXPECT_TRUE(contains(missing.status.message, "'GPU:2'")) << missing.status.message;
  EXPECT_TRUE(contains(missing.status.message, "/device:GPU:1")) << missing.status.message;
}

TEST(Registry, LogicalDevicesSplitOnePhysicalDevice) {
  const uint64_t limits[] = {1 << 20, 2 << 20};
  dlrt_logical_device_config split{};
  split.struct_size = DLRT_STRUCT_SIZE(dlrt_logical_device_config);
  split.physical_device = "GPU:0";
  split.count = 2;
  split.memory_limits = limits;
  Ctx c(both(), false, kOptions, nullptr, {split});
  ASSERT_TRUE(c.ok()) << c.status.message;
  EXPECT_EQ(c.device_names(), (Names{"/device:CPU:0", "/device:CPU:1", "/device:CPU:2",
                                     "/device:GPU:0", "/device:GPU:1", "/device:GPU:2"}));
  for (size_t i : {3, 4}) {
    dlrt_device_info d = c.device(i);
    EXPECT_EQ(d.plugin_ordinal, 0);
    EXPECT_EQ(d.logical_count, 2);
    EXPECT_EQ(d.logical_index, static_cast<int32_t>(i - 3));
    EXPECT_EQ(d.memory_limit, limits[i - 3]);
  }
  EXPECT_EQ(c.device(5).plugin_ordinal, 1);  // the old GPU:1 moved up to GPU:2
  EXPECT_EQ(c.device(5).memory_limit, 0u);

  // Both logical devices report their physical device's free memory (one opened device).
  uint64_t a = 0, b = 0;
  ASSERT_EQ(take(dlrt_context_device_memory_free(c.ctx, 3, &a)).code, DLRT_OK);
  ASSERT_EQ(take(dlrt_context_device_memory_free(c.ctx, 4, &b)).code, DLRT_OK);
  EXPECT_EQ(a, 32ull << 20);
  EXPECT_EQ(a, b);

  dlrt_logical_device_config bad = split;
  bad.physical_device = "GPU:7";
  Ctx missing(both(), false, kOptions, nullptr, {bad});
  EXPECT_EQ(missing.status.code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(missing.status.message, "GPU:7")) << missing.status.message;
}

TEST(Registry, FindDevice) {
  Ctx c(both(), false, kOptions);
  size_t index = 0;
  ASSERT_EQ(take(dlrt_context_find_device(c.ctx, "cpu", &index)).code, DLRT_OK);
  EXPECT_EQ(index, 0u);
  ASSERT_EQ(take(dlrt_context_find_device(c.ctx, "/device:GPU:1", &index)).code, DLRT_OK);
  EXPECT_EQ(index, 4u);
  ASSERT_EQ(take(dlrt_context_find_device(c.ctx, "gpu", &index)).code, DLRT_OK);
  EXPECT_EQ(index, 3u);
  ASSERT_EQ(
      take(dlrt_context_find_device(c.ctx, "/job:localhost/replica:0/task:0/device:CPU:2", &index))
          .code,
      DLRT_OK);
  EXPECT_EQ(index, 2u);

  Result r = take(dlrt_context_find_device(c.ctx, "GPU:5", &index));
  EXPECT_EQ(r.code, DLRT_NOT_FOUND);
  EXPECT_TRUE(contains(r.message, "GPU:5")) << r.message;
  EXPECT_TRUE(contains(r.message, "/device:CPU:0, /device:CPU:1")) << r.message;
  EXPECT_EQ(take(dlrt_context_find_device(c.ctx, "TPU", &index)).code, DLRT_NOT_FOUND);
  EXPECT_EQ(take(dlrt_context_find_device(c.ctx, "gpu:x", &index)).code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(take(dlrt_context_find_device(c.ctx, "/job:worker/device:CPU:0", &index)).code,
            DLRT_NOT_FOUND);

  // No device at all: NOT_FOUND, never a silent fallback.
  Ctx none({case_dir("count_fails")});
  r = take(dlrt_context_find_device(none.ctx, "cpu", &index));
  EXPECT_EQ(r.code, DLRT_NOT_FOUND);
  EXPECT_TRUE(contains(r.message, "none")) << r.message;
}

}  // namespace
}  // namespace dlrt::testing
