// Tests of the placement rules one at a time: explicit and partial requests, priority, soft
// and strict placement (fixture in placement_test_util.hpp).
#include <regex>

#include "placement/placement_test_util.hpp"

namespace dlrt::core::testing {
namespace {

TEST_F(Placement, ReasonNames) {
  EXPECT_STREQ(reason_name(PlacementReason::kExplicit), "explicit");
  EXPECT_STREQ(reason_name(PlacementReason::kFallbackNoKernel), "fallback:no-kernel");
  EXPECT_STREQ(reason_name(PlacementReason::kFallbackDeviceMissing), "fallback:device-missing");
  EXPECT_STREQ(reason_name(PlacementReason::kInsertedCopy), "inserted-copy");
  EXPECT_STREQ(reason_name(PlacementReason::kVariableStore), "variable-placed");
}

TEST_F(Placement, ExplicitFullAndShortSpecs) {
  ValueRef x = g_->add_placeholder("x", kVec);
  g_->push_device("/job:localhost/replica:0/task:0/device:GPU:1");
  op("matmul", "m", {x, x});
  g_->pop_device();
  g_->push_device("/CPU:0");
  op("relu", "r", {x});
  g_->pop_device();
  PlacedGraph p = place_all();
  EXPECT_EQ(by_name(p, "m").device, dev("GPU:1"));
  EXPECT_EQ(by_name(p, "m").reason, PlacementReason::kExplicit);
  EXPECT_EQ(by_name(p, "r").device, dev("CPU:0"));
  EXPECT_EQ(by_name(p, "r").reason, PlacementReason::kExplicit);
}

TEST_F(Placement, PartialSpecsPickADeviceOfThatType) {
  ValueRef x = g_->add_placeholder("x", kVec);
  g_->push_device("/GPU");
  op("matmul", "m", {x, x});
  g_->push_device("cpu");
  op("matmul", "mc", {x, x});
  PlacedGraph p = place_all();
  EXPECT_EQ(by_name(p, "m").device, dev("GPU:0"));
  EXPECT_EQ(by_name(p, "m").reason, PlacementReason::kExplicit);
  EXPECT_EQ(by_name(p, "mc").device, dev("CPU:0"));
  EXPECT_EQ(by_name(p, "mc").reason, PlacementReason::kExplicit);
}

TEST_F(Placement, PriorityPutsUnconstrainedOpsOnTheBestDeviceThatRunsThem) {
  ValueRef x = g_->add_placeholder("x", kVec);
  op("matmul", "m", {x, x});
  ValueRef img = g_->add_placeholder("img", {DLRT_F32, {1, 4, 4, 1}});
  ValueRef w = g_->add_placeholder("w", {DLRT_F32, {3, 3, 1, 2}});
  op("conv2d", "conv", {img, w});
  PlacedGraph p = place_all();
  EXPECT_EQ(by_name(p, "m").device, dev("GPU:0"));
  EXPECT_EQ(by_name(p, "m").reason, PlacementReason::kDefaultPriority);
  EXPECT_EQ(by_name(p, "conv").device, dev("CPU:0"));  // the mock GPUs lack conv2d
  EXPECT_EQ(by_name(p, "conv").reason, PlacementReason::kDefaultPriority);
  // Placeholders go where their first consumer goes.
  EXPECT_EQ(by_name(p, "x").device, dev("GPU:0"));
  EXPECT_EQ(by_name(p, "x").reason, PlacementReason::kFollowsInput);
  EXPECT_EQ(by_name(p, "x").detail, "first consumer m");
  EXPECT_EQ(by_name(p, "img").device, dev("CPU:0"));
  EXPECT_EQ(copies(p), 0u);
}

TEST_F(Placement, AcceleratorsComeBeforeCpus) {
  ctx_ = make_context("mock:device_type=ACC;mock:device_class=accel");
  g_ = std::make_unique<Graph>(*ctx_);
  op("matmul", "m", {g_->add_placeholder("x", kVec), g_->add_placeholder("y", kVec)});
  PlacedGraph p = place_all();
  EXPECT_EQ(by_name(p, "m").device, ctx_->registry().find("ACC:0"));
  EXPECT_EQ(by_name(p, "m").reason, PlacementReason::kDefaultPriority);
}

TEST_F(Placement, PartialSpecNoDeviceOfWhichRunsTheOpGivesEachOnesReason) {
  ValueRef x = g_->add_placeholder("x", kVec);
  g_->push_device("/GPU");
  op("sigmoid", "s", {x});
  PlacedGraph p = place_all();
  const PlacedNode& s = by_name(p, "s");
  EXPECT_EQ(s.device, dev("CPU:0"));
  EXPECT_EQ(s.reason, PlacementReason::kFallbackNoKernel);
  EXPECT_EQ(s.detail.rfind("requested /GPU which cannot run it (GPU:0: ", 0), 0u) << s.detail;
  EXPECT_NE(s.detail.find("; GPU:1: "), std::string::npos) << s.detail;
}

TEST_F(Placement, SoftFallbackWhenTheRequestedDeviceLacksTheKernel) {
  ValueRef x = g_->add_placeholder("x", kVec);
  g_->push_device("/GPU:0");
  op("sigmoid", "s", {x});
  PlacedGraph p = place_all();
  const PlacedNode& s = by_name(p, "s");
  EXPECT_EQ(s.device, dev("CPU:0"));
  EXPECT_EQ(s.reason, PlacementReason::kFallbackNoKernel);
  EXPECT_EQ(s.detail.rfind("requested /GPU:0 which cannot run it (GPU:0: ", 0), 0u) << s.detail;
  EXPECT_NE(s.detail.find("restricted to ops"), std::string::npos)
      << s.detail;  // the plugin's words
}

TEST_F(Placement, StrictFailureNamesOpRequestAndCapableDevices) {
  ValueRef x = g_->add_placeholder("x", kVec);
  g_->push_device("/GPU:0");
  op("sigmoid", "s", {x});
  Error e = place_error(/*soft=*/false);
  EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
  const std::regex expected(
      R"(s \(sigmoid\) requested /GPU:0 which cannot run it \(GPU:0: .*restricted to ops.*\); )"
      R"(devices that can: /device:CPU:0)");
  EXPECT_TRUE(std::regex_match(e.message(), expected)) << e.message();
}

TEST_F(Placement, MissingDeviceFallsBackSoftlyAndFailsStrictly) {
  ValueRef x = g_->add_placeholder("x", kVec);
  g_->push_device("/GPU:7");
  op("relu", "r", {x});
  PlacedGraph p = place_all();
  EXPECT_EQ(by_name(p, "r").device, dev("GPU:0"));  // the best device that runs relu
  EXPECT_EQ(by_name(p, "r").reason, PlacementReason::kFallbackDeviceMissing);
  // After the visible devices, why others may be missing: the plugins of this build tree that
  // have no devices (a CUDA build on a machine without a GPU: "plugin cuda has no devices: ...").
  const std::string why = ctx_->why_devices_missing();
  const std::string visible = "(visible: /device:CPU:0, /device:GPU:0, /device:GPU:1" +
                              (why.empty() ? "" : "; " + why) + ")";
  EXPECT_EQ(by_name(p, "r").detail, "requested /GPU:7 but no visible device matches it " + visible);
  Error e = place_error(/*soft=*/false);
  EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(e.message(), "r (relu) requested /GPU:7 but no visible device matches it " + visible +
                             "; devices that can: /device:GPU:0, /device:GPU:1, /device:CPU:0");
}

TEST_F(Placement, NoDeviceRunsTheOpIsAnErrorListingEachDevicesReason) {
  ctx_ = make_context(kMockGpus, "GPU");  // only the mock GPUs
  g_ = std::make_unique<Graph>(*ctx_);
  op("sigmoid", "s", {g_->add_placeholder("x", kVec)});
  Error e = place_error(/*soft=*/true);
  EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(e.message().rfind("no device can run s (sigmoid): GPU:0: ", 0), 0u) << e.message();
  EXPECT_NE(e.message().find("; GPU:1: "), std::string::npos) << e.message();
}

}  // namespace
}  // namespace dlrt::core::testing
