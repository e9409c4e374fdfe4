// strategy_test.cc: mirrored all_reduce and broadcast on one process, over 2 and 3 CPU
// logical devices (the host path) and 2 and 3 REF devices (the device path, through the
// reference plugin's NCCL double): exact sums in replica order, the very same bits on every
// replica, several tensors per replica packed into one call, any dtype broadcast, the two
// paths agreeing bit for bit, and no allocation once the flat buffers exist.
#include <gtest/gtest.h>

#include <tuple>

#include "distribute/distribute_test_util.hpp"

namespace dlrt::core::distribute {
namespace {

using namespace test;  // NOLINT: the test helpers

// kRefNonBlocking: the NCCL double in NCCL's non-blocking mode (reference:collective_blocking=0):
// a group's work finishes on a background thread after group_end, which must wait for it.
enum class Kind { kCpu, kRef, kRefNonBlocking };

struct Case {
  Kind kind;
  int replicas;
};

std::string name(const testing::TestParamInfo<Case>& info) {
  return std::string(info.param.kind == Kind::kCpu   ? "Cpu"
                     : info.param.kind == Kind::kRef ? "Ref"
                                                     : "RefNonBlocking") +
         std::to_string(info.param.replicas);
}

class Mirrored : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    ctx_ = GetParam().kind == Kind::kCpu ? cpu_context(GetParam().replicas)
           : GetParam().kind == Kind::kRef
               ? ref_context(GetParam().replicas)
               : ref_context(GetParam().replicas, ";reference:collective_blocking=0");
    strategy_ = std::make_unique<Strategy>(*ctx_, StrategyConfig{});
  }
  void TearDown() override { strategy_.reset(); }
  Path expected_path() const { return GetParam().kind == Kind::kCpu ? Path::kHost : Path::kDevice; }

  std::unique_ptr<dlrt_context> ctx_;
  std::unique_ptr<Strategy> strategy_;
};

TEST_P(Mirrored, DefaultDevicesAndPath) {
  ASSERT_EQ(strategy_->num_replicas(), static_cast<size_t>(GetParam().replicas));
  for (size_t r = 0; r < strategy_->num_replicas(); ++r) EXPECT_EQ(strategy_->replica_device(r), r);
  EXPECT_EQ(strategy_->path(), expected_path()) << strategy_->path_reason();
  if (expected_path() == Path::kHost)
    EXPECT_TRUE(contains(strategy_->path_reason(), "plugin 'cpu' offers no collectives"))
        << strategy_->path_reason();
  EXPECT_EQ(strategy_->worker().rank, 0);
  EXPECT_EQ(strategy_->worker().size, 1);
  EXPECT_EQ(strategy_->timeout_ms(), 300000);
}

TEST_P(Mirrored, AllReduceSumsInReplicaOrderWithTheSameBitsEverywhere) {
  // Three tensors per replica: packed into one flat buffer per replica, one collective.
  Replicas t(*strategy_, {{2, 3}, {5}, {1}});
  strategy_->all_reduce(t.ptrs.data(), t.per_replica());
  for (size_t k = 0; k < t.per_replica(); ++k) {
    const std::vector<float> expected = t.expected_sum(strategy_->num_replicas(), k);
    for (size_t r = 0; r < strategy_->num_replicas(); ++r)
      EXPECT_TRUE(same_bits(read_f32(t.at(r, k)), expected)) << "replica " << r << " tensor " << k;
  }
  // Again: sums of sums, still identical everywhere.
  strategy_->all_reduce(t.ptrs.data(), t.per_replica());
  for (size_t k = 0; k < t.per_replica(); ++k)
    for (size_t r = 1; r < strategy_->num_replicas(); ++r)
      EXPECT_TRUE(same_bits(read_f32(t.at(r, k)), read_f32(t.at(0, k))));
}

TEST_P(Mirrored, OneTensorPerReplica) {
  Replicas t(*strategy_, {{4, 4}});
  strategy_->all_reduce(t.ptrs.data(), 1);
  const std::vector<float> expected = t.expected_sum(strategy_->num_replicas(), 0);
  for (size_t r = 0; r < strategy_->num_replicas(); ++r)
    EXPECT_TRUE(same_bits(read_f32(t.at(r, 0)), expected)) << r;
}

TEST_P(Mirrored, ExactSmallSums) {
  // 1 + 2 + ... and a value whose sum depends on the order: (1e8 + 1) - 1e8 = 0 in f32.
  std::vector<TensorPtr> owned;
  std::vector<dlrt_tensor*> ptrs;
  const size_t n = strategy_->num_replicas();
  for (size_t r = 0; r < n; ++r) {
    const float first = r == 0 ? 1e8f : r == 1 ? 1.0f : -1e8f;
    owned.push_back(f32_tensor(*ctx_, strategy_->replica_device(r), {3},
                               {first, static_cast<float>(r + 1), 0.5f}));
    ptrs.push_back(owned.back().get());
  }
  strategy_->all_reduce(ptrs.data(), 1);
  const float first = n == 2 ? 1e8f : 0.0f;  // 1e8+1 rounds to 1e8; then -1e8
  const float second = n == 2 ? 3.0f : 6.0f;
  const float third = 0.5f * static_cast<float>(n);
  for (size_t r = 0; r < n; ++r)
    EXPECT_EQ(read_f32(*owned[r]), (std::vector<float>{first, second, third})) << r;
}

TEST_P(Mirrored, BroadcastCopiesReplicaZeroOfAnyDtype) {
  const size_t n = strategy_->num_replicas();
  std::vector<TensorPtr> owned;
  std::vector<dlrt_tensor*> ptrs;
  for (size_t r = 0; r < n; ++r) {
    const size_t d = strategy_->replica_device(r);
    owned.push_back(f32_tensor(*ctx_, d, {2}, {static_cast<float>(r), 1.5f}));
    auto labels = std::make_unique<dlrt_tensor>(*ctx_, d, ops::TensorType{DLRT_I32, {3}});
    const int32_t v[3] = {static_cast<int32_t>(r) * 10, -7, 1 << 30};
    labels->write(v, sizeof v);
    owned.push_back(std::move(labels));
    auto bytes = std::make_unique<dlrt_tensor>(*ctx_, d, ops::TensorType{DLRT_U8, {5}});
    const uint8_t b[5] = {static_cast<uint8_t>(r), 1, 2, 3, 255};
    bytes->write(b, sizeof b);
    owned.push_back(std::move(bytes));
  }
  for (auto& t : owned) ptrs.push_back(t.get());
  strategy_->broadcast(ptrs.data(), 3);
  for (size_t r = 0; r < n; ++r) {
    EXPECT_EQ(read_f32(*owned[3 * r]), (std::vector<float>{0.0f, 1.5f})) << r;
    int32_t v[3];
    owned[3 * r + 1]->read(v, sizeof v);
    EXPECT_EQ(v[0], 0);
    EXPECT_EQ(v[2], 1 << 30);
    uint8_t b[5];
    owned[3 * r + 2]->read(b, sizeof b);
    EXPECT_EQ(b[0], 0);
    EXPECT_EQ(b[4], 255);
  }
}

TEST_P(Mirrored, SteadyStateAllocatesNothing) {
  Replicas t(*strategy_, {{8}, {3, 3}});
  strategy_->all_reduce(t.ptrs.data(), t.per_replica());  // the flat buffers, if any, now
  std::vector<uint64_t> allocs;
  for (size_t r = 0; r < strategy_->num_replicas(); ++r)
    allocs.push_back(ctx_->arena(strategy_->replica_device(r)).stats().num_allocs);
  for (int step = 0; step < 3; ++step) strategy_->all_reduce(t.ptrs.data(), t.per_replica());
  for (size_t r = 0; r < strategy_->num_replicas(); ++r)
    EXPECT_EQ(ctx_->arena(strategy_->replica_device(r)).stats().num_allocs, allocs[r]) << r;
  // A larger layout re-makes the buffers; the sums stay right.
  Replicas bigger(*strategy_, {{8}, {3, 3}, {100}});
  strategy_->all_reduce(bigger.ptrs.data(), bigger.per_replica());
  EXPECT_TRUE(
      same_bits(read_f32(bigger.at(0, 2)), bigger.expected_sum(strategy_->num_replicas(), 2)));
}

INSTANTIATE_TEST_SUITE_P(Strategy, Mirrored,
                         testing::Values(Case{Kind::kCpu, 2}, Case{Kind::kCpu, 3},
                                         Case{Kind::kRef, 2}, Case{Kind::kRef, 3},
                                         Case{Kind::kRefNonBlocking, 2}),
                         name);

// The host path and the device path give the same bits for the same inputs: both sum in
// replica (= rank) order in f32.
TEST(StrategyPaths, HostAndDevicePathsAgreeBitForBit) {
  auto cpu = cpu_context(3);
  auto ref = ref_context(3);
  Strategy on_cpu(*cpu, {}), on_ref(*ref, {});
  ASSERT_EQ(on_cpu.path(), Path::kHost);
  ASSERT_EQ(on_ref.path(), Path::kDevice);
  Replicas a(on_cpu, {{7}, {2, 2}}), b(on_ref, {{7}, {2, 2}});
  on_cpu.all_reduce(a.ptrs.data(), 2);
  on_ref.all_reduce(b.ptrs.data(), 2);
  for (size_t k = 0; k < 2; ++k) EXPECT_TRUE(same_bits(read_f32(a.at(2, k)), read_f32(b.at(2, k))));
}

// A CPU device and a REF device: one has collectives, one not: the host path takes both.
TEST(StrategyPaths, MixedDevicesTakeTheHostPath) {
  ContextSpec spec;
  spec.visible = "CPU:0,REF:0";
  auto ctx = make_context(spec);
  Strategy s(*ctx, StrategyConfig{{"CPU:0", "REF:0"}, false, 0});
  EXPECT_EQ(s.path(), Path::kHost);
  EXPECT_TRUE(contains(s.path_reason(), "/device:CPU:0's plugin 'cpu' offers no collectives"))
      << s.path_reason();
  Replicas t(s, {{3}});
  s.all_reduce(t.ptrs.data(), 1);
  EXPECT_TRUE(same_bits(read_f32(t.at(1, 0)), t.expected_sum(2, 0)));
}

// Two logical devices of one physical REF device cannot be two ranks of one communicator.
TEST(StrategyPaths, LogicalSplitsOfOneDeviceTakeTheHostPath) {
  // make_context splits CPU:0 only; this context splits REF:0.
  const std::string cpu = plugin_file("cpu"), ref = plugin_file("reference");
  const char* paths[] = {cpu.c_str(), ref.c_str()};
  dlrt_context_options opts;
  dlrt_context_options_init(&opts);
  opts.plugin_paths = paths;
  opts.num_plugin_paths = 2;
  opts.search_default_paths = 0;
  opts.visible_devices = "REF";
  opts.plugin_options = "";
  dlrt_logical_device_config split{};
  split.struct_size = sizeof split;
  split.physical_device = "REF:0";
  split.count = 2;
  opts.logical_devices = &split;
  opts.num_logical_devices = 1;
  dlrt_context split_ctx(&opts, [](const char*) -> const char* { return nullptr; });
  Strategy s(split_ctx, StrategyConfig{{"REF:0", "REF:1"}, false, 0});
  EXPECT_EQ(s.path(), Path::kHost);
  EXPECT_TRUE(contains(s.path_reason(), "logical devices of one physical device"))
      << s.path_reason();
}

}  // namespace
}  // namespace dlrt::core::distribute
