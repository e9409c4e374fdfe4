// Tests of automatic placement's two rules, which keep a job from falling back silently to the
// slow oracle or to a device that runs none of its ops:
//   - priority placement, soft fallbacks and the auto device never pick the reference
//     plugin's devices (the slow oracle) unless the user names them;
//   - the auto device is the device that runs the most of the executable's ops, not the one
//     whose plugin claims the most (a hostile GPU claiming 2^62 bytes that declines every op),
//     and what it picked, and every plugin that was not loaded, is logged.
#include <gmock/gmock.h>

#include "placement/auto_device.hpp"
#include "placement/placement_test_util.hpp"
#include "placement/support.hpp"

namespace dlrt::core::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// Graph building on any context (the fixture's helpers are bound to its own).
struct Built {
  std::unique_ptr<Context> ctx;
  std::unique_ptr<Graph> g;
  explicit Built(std::unique_ptr<Context> c)
      : ctx(std::move(c)), g(std::make_unique<Graph>(*ctx)) {}
  // x: (2,2) -> matmul(x, x) -> sigmoid: two ops.
  void two_ops() {
    ValueRef x = g->add_placeholder("x", kVec);
    ValueRef m = g->add_op("matmul", "m", {x, x}, {}).at(0);
    g->add_op("sigmoid", "s", {m}, {});
  }
  std::vector<NodeId> all() const {
    std::vector<NodeId> ids;
    for (const Node& n : g->nodes()) ids.push_back(n.id);
    return ids;
  }
  PlacedGraph place_all(bool auto_device = false) {
    PlacementOptions o;
    o.auto_device = auto_device;
    return place(*g, all(), o);
  }
  size_t device_of(const PlacedGraph& p, const std::string& name) const {
    for (const PlacedNode& n : p.nodes)
      if (n.name == name) return n.device;
    throw std::runtime_error("no placed node " + name);
  }
  size_t dev(const char* spec) const { return ctx->registry().find(spec); }
};

// cpu:threads=-5 refuses the cpu plugin: only the oracle is left (the silent-fallback case).
std::unique_ptr<Context> refused_cpu_and_reference(const char* visible = nullptr) {
  return make_context("cpu:threads=-5", visible, {kCpuPlugin, kReferencePlugin});
}

TEST(AutomaticPlacement, TheOracleIsNeverPickedByPriority) {
  Built b(refused_cpu_and_reference());
  ASSERT_EQ(b.ctx->registry().names(), "/device:REF:0");
  EXPECT_TRUE(b.ctx->is_oracle(0));
  EXPECT_THAT(b.ctx->why_not_automatic(0), HasSubstr("never picks"));
  b.two_ops();
  try {
    b.place_all();
    ADD_FAILURE() << "placement picked the reference oracle";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_THAT(e.message(), StartsWith("no device can run m (matmul): REF:0: /device:REF:0 is "
                                        "the reference plugin's device"));
    EXPECT_THAT(e.message(), HasSubstr("name it to use it"));
  }
}

TEST(AutomaticPlacement, TheOracleNamedByAScopeOrByVisibleDevicesIsUsed) {
  {
    Built b(refused_cpu_and_reference());
    b.g->push_device("/device:REF:0");
    b.two_ops();
    PlacedGraph p = b.place_all();
    EXPECT_EQ(b.device_of(p, "m"), b.dev("REF:0"));
    EXPECT_EQ(b.device_of(p, "s"), b.dev("REF:0"));
  }
  {
    Built b(refused_cpu_and_reference("REF"));
    b.two_ops();
    PlacedGraph p = b.place_all();
    EXPECT_EQ(b.device_of(p, "m"), b.dev("REF:0"));
  }
}

TEST(AutomaticPlacement, AnOpOnTheNamedOracleIsNotFollowedThereByItsConsumer) {
  // The reference plugin and the cpu plugin both loaded; the user puts m on REF:0 by name.
  Built b(make_context("", nullptr, {kCpuPlugin, kReferencePlugin}));
  ValueRef x = b.g->add_placeholder("x", kVec);
  b.g->push_device("/REF:0");
  ValueRef m = b.g->add_op("matmul", "m", {x, x}, {}).at(0);
  b.g->pop_device();
  b.g->add_op("relu", "r", {m}, {});
  PlacedGraph p = b.place_all();
  EXPECT_EQ(b.device_of(p, "m"), b.dev("REF:0"));
  EXPECT_EQ(b.device_of(p, "r"), b.dev("CPU:0"));  // not "follows-input" onto the oracle
}

TEST(AutomaticPlacement, SoftFallbackNeverLandsOnTheOracle) {
  // The mock GPU runs only matmul; s asks for it, cannot run there, and must go to CPU:0
  // although the reference device (listed first by priority among CPU-class) runs it too.
  Built b(make_context("mock:device_type=GPU;mock:device_class=gpu;mock:ops=matmul", nullptr,
                       {kReferencePlugin, DLRT_TEST_MOCK_PLUGIN, kCpuPlugin}));
  ValueRef x = b.g->add_placeholder("x", kVec);
  b.g->push_device("/GPU:0");
  b.g->add_op("sigmoid", "s", {x}, {});
  PlacedGraph p = b.place_all();
  EXPECT_EQ(b.device_of(p, "s"), b.dev("CPU:0"));
}

TEST(AutomaticPlacement, AHostileGpuThatRunsNothingIsNotTheAutoDevice) {
  Built b(make_context("", nullptr, {DLRT_TEST_HUGE_GPU_PLUGIN, kCpuPlugin}));
  ASSERT_EQ(b.ctx->registry().names(), "/device:GPU:0, /device:GPU:1, /device:CPU:0");
  EXPECT_EQ(b.ctx->desc_of(b.dev("GPU:0")).memory_total, 1ull << 62);
  b.two_ops();
  ::testing::internal::CaptureStderr();
  PlacedGraph p = b.place_all(/*auto_device=*/true);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(b.device_of(p, "m"), b.dev("CPU:0"));
  EXPECT_EQ(b.device_of(p, "s"), b.dev("CPU:0"));
  EXPECT_THAT(p.auto_device,
              StartsWith("picked /device:CPU:0 (plugin cpu, class CPU): it runs all of the 2 "
                         "op(s); passed over higher-ranked /device:GPU:0 (plugin huge_gpu, class "
                         "GPU) runs 0 of 2 (matmul: GPU:0: "));
  // Passing over a GPU is worth a warning, at the default log level.
  EXPECT_THAT(log, HasSubstr("[dlrt W] placement: auto device: picked /device:CPU:0"));
}

TEST(AutomaticPlacement, TheAutoDeviceRunsTheMostOpsAndTiesGoByPriority) {
  // Mock GPUs that run only matmul (1 of 2) against CPU:0 (2 of 2): CPU:0 is picked, and the
  // summary says what the GPUs lacked.
  {
    Built b(
        make_context("mock:num_devices=2;mock:device_type=GPU;mock:device_class=gpu;"
                     "mock:ops=matmul"));
    b.two_ops();
    PlacedGraph p = b.place_all(true);
    EXPECT_EQ(b.device_of(p, "m"), b.dev("CPU:0"));  // with the auto device, not by priority
    EXPECT_EQ(b.device_of(p, "s"), b.dev("CPU:0"));
    EXPECT_THAT(p.auto_device, HasSubstr("runs 1 of 2 (sigmoid: GPU:0: "));
    // Without auto, priority puts matmul on the GPU that runs it.
    PlacedGraph q = b.place_all(false);
    EXPECT_EQ(b.device_of(q, "m"), b.dev("GPU:0"));
    EXPECT_EQ(q.auto_device, "");
  }
  // Mock GPUs that run both: both candidates run all, the GPU ranks first.
  {
    Built b(make_context("mock:device_type=GPU;mock:device_class=gpu;mock:ops=matmul,sigmoid"));
    b.two_ops();
    PlacedGraph p = b.place_all(true);
    EXPECT_EQ(b.device_of(p, "m"), b.dev("GPU:0"));
    EXPECT_EQ(b.device_of(p, "s"), b.dev("GPU:0"));
    EXPECT_THAT(p.auto_device, StartsWith("picked /device:GPU:0 (plugin mock, class GPU): it "
                                          "runs all of the 2 op(s)"));
    EXPECT_THAT(p.auto_device, Not(HasSubstr("passed over")));
  }
}

TEST(AutomaticPlacement, AutoWarnsAboutEveryPluginThatWasNotLoaded) {
  Built b(make_context("cpu:threads=-5", nullptr,
                       {kCpuPlugin, DLRT_TEST_MOCK_PLUGIN, kReferencePlugin}));
  b.two_ops();
  ::testing::internal::CaptureStderr();
  PlacedGraph p = b.place_all(true);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("[dlrt W] placement: auto device: plugin "));
  EXPECT_THAT(log, HasSubstr("was not loaded, so its devices are not candidates: "));
  EXPECT_THAT(log, HasSubstr("threads"));  // the cpu plugin's own reason
  // The mock (a CPU-class device that is not the oracle) is picked, never REF:0.
  EXPECT_EQ(b.device_of(p, "m"), b.dev("MOCK:0"));
}

}  // namespace
}  // namespace dlrt::core::testing
