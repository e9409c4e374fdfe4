// strategy_errors_test.cc: everything a strategy refuses, and how it breaks.
//   devices    specs in order, malformed, matching nothing, given twice; the default's
//              preference (GPU class, then type CPU, then CPU class) and finding nothing
//   layouts    counts, devices, dtypes, NULLs and repeats, each naming the tensor; a refused
//              call leaves the strategy healthy
//   workers    the environment only with multi_worker; a world of 1 needs no MPI; a world of
//              2 without the mpi plugin is FAILED_PRECONDITION naming libdlrt-mpi.so (and why
//              it did not load, when the loader tried)
//   timeout    options, DLRT_COLLECTIVE_TIMEOUT through the context, the default, bad values
//   broken     a collective that fails (the reference double's collective_fault) aborts every
//              communicator, and every later call repeats the first error
#include <gtest/gtest.h>

#include <chrono>

#include "distribute/distribute_test_util.hpp"

namespace dlrt::core::distribute {
namespace {

using namespace test;  // NOLINT: the test helpers

StrategyConfig devices(std::vector<std::string> specs) {
  StrategyConfig c;
  c.devices = std::move(specs);
  return c;
}

// ---- devices --------------------------------------------------------------------------

TEST(StrategyDevices, SpecsInTheOrderGiven) {
  auto ctx = cpu_context(3);
  Strategy s(*ctx,
             devices({"/device:CPU:2", "cpu:0", "/job:localhost/replica:0/task:0/device:CPU:1"}));
  ASSERT_EQ(s.num_replicas(), 3u);
  EXPECT_EQ(s.replica_device(0), 2u);
  EXPECT_EQ(s.replica_device(1), 0u);
  EXPECT_EQ(s.replica_device(2), 1u);
  auto [code, msg] = error_of([&] { s.replica_device(3); });
  EXPECT_EQ(code, DLRT_OUT_OF_RANGE);
  EXPECT_TRUE(contains(msg, "replica 3 is out of range; the strategy has 3")) << msg;
}

TEST(StrategyDevices, BadSpecsAreInvalidArguments) {
  auto ctx = cpu_context(2);
  struct Case {
    std::vector<std::string> specs;
    std::string expected;
  };
  const Case cases[] = {
      {{"CPU:0", "/foo:1"}, "devices[1] '/foo:1'"},
      {{"GPU:0"},
       "devices[0] 'GPU:0': no device matches 'GPU:0'; devices there are: "
       "/device:CPU:0, /device:CPU:1"},
      {{"CPU:0", "/device:CPU:0"},
       "devices[1] '/device:CPU:0' is /device:CPU:0, as devices[0] "
       "'CPU:0' is; one replica per device"},
      {{"/job:worker/task:1/device:CPU:0"}, "single process"},
  };
  for (const Case& c : cases) {
    auto [code, msg] = error_of([&] { Strategy s(*ctx, devices(c.specs)); });
    EXPECT_EQ(code, DLRT_INVALID_ARGUMENT) << c.expected;
    EXPECT_TRUE(contains(msg, c.expected)) << msg;
  }
}

TEST(StrategyDevices, DefaultPrefersGpuThenTheCpuBackendThenCpuClass) {
  {  // the CPU backend's devices, not the reference oracle (also CPU class)
    ContextSpec spec;
    spec.cpu_split = 2;
    spec.plugin_options = "reference:num_devices=2";
    auto ctx = make_context(spec);
    Strategy s(*ctx, {});
    ASSERT_EQ(s.num_replicas(), 2u);
    EXPECT_EQ(ctx->device_name(s.replica_device(1)), "/device:CPU:1");
  }
  {  // GPU-class devices first (the test tree's mock device posing as two GPUs)
    ContextSpec spec;
    spec.extra_plugin_paths = {DLRT_TEST_MOCK_PLUGIN};
    spec.plugin_options = "mock:num_devices=2;mock:device_type=GPU;mock:device_class=gpu";
    auto ctx = make_context(spec);
    Strategy s(*ctx, {});
    ASSERT_EQ(s.num_replicas(), 2u);
    EXPECT_EQ(ctx->device_name(s.replica_device(0)), "/device:GPU:0");
    EXPECT_EQ(s.path(), Path::kDevice);
  }
  {  // only REF devices, named by visible devices ("REF"): CPU class
    auto ctx = ref_context(2);
    Strategy s(*ctx, {});
    EXPECT_EQ(s.num_replicas(), 2u);
  }
  {  // the reference plugin posing as GPUs is still the oracle: not a default device unless named
    ContextSpec spec;
    spec.plugin_options =
        "reference:num_devices=2;reference:device_type=GPU;"
        "reference:device_class=gpu";
    auto ctx = make_context(spec);
    Strategy s(*ctx, {});
    EXPECT_EQ(s.num_replicas(), 1u);
    EXPECT_EQ(ctx->device_name(s.replica_device(0)), "/device:CPU:0");
  }
}

TEST(StrategyDevices, NoDeviceForTheDefaultIsNotFound) {
  dlrt_context_options o;
  dlrt_context_options_init(&o);
  o.search_default_paths = 0;  // no plugin at all
  dlrt_context ctx(&o, [](const char*) -> const char* { return nullptr; });
  auto [code, msg] = error_of([&] { Strategy s(ctx, {}); });
  EXPECT_EQ(code, DLRT_NOT_FOUND);
  EXPECT_TRUE(contains(msg, "no GPU- or CPU-class device")) << msg;
}

// ---- layouts ----------------------------------------------------------------------------

class StrategyLayout : public testing::Test {
 protected:
  void SetUp() override {
    ctx_ = cpu_context(2);
    s_ = std::make_unique<Strategy>(*ctx_, StrategyConfig{});
  }
  void TearDown() override {
    owned_.clear();
    s_.reset();
  }
  dlrt_tensor* make(size_t device, dlrt_dtype dtype, std::vector<int64_t> dims) {
    owned_.push_back(std::make_unique<dlrt_tensor>(*ctx_, device, ops::TensorType{dtype, dims}));
    std::vector<unsigned char> zeros(owned_.back()->byte_size(), 0);
    owned_.back()->write(zeros.data(), zeros.size());
    return owned_.back().get();
  }
  std::pair<dlrt_code, std::string> all_reduce(std::vector<dlrt_tensor*> t, size_t per) {
    return error_of([&] { s_->all_reduce(t.data(), per); });
  }
  std::pair<dlrt_code, std::string> broadcast(std::vector<dlrt_tensor*> t, size_t per) {
    return error_of([&] { s_->broadcast(t.data(), per); });
  }

  std::unique_ptr<dlrt_context> ctx_;
  std::unique_ptr<Strategy> s_;
  std::vector<TensorPtr> owned_;
};

TEST_F(StrategyLayout, EachRuleNamesTheTensor) {
  dlrt_tensor* a0 = make(0, DLRT_F32, {4});
  dlrt_tensor* b0 = make(0, DLRT_F32, {2, 3});
  dlrt_tensor* a1 = make(1, DLRT_F32, {4});
  dlrt_tensor* b1 = make(1, DLRT_F32, {6});  // same element count as (2,3): fine
  dlrt_tensor* c1 = make(1, DLRT_F32, {5});
  dlrt_tensor* i0 = make(0, DLRT_I32, {4});
  dlrt_tensor* i1 = make(1, DLRT_I32, {4});
  EXPECT_EQ(all_reduce({a0, b0, a1, b1}, 2).first, DLRT_OK);

  struct Case {
    std::vector<dlrt_tensor*> tensors;
    size_t per;
    std::string expected;
  };
  const Case cases[] = {
      {{a0, b0, a1, c1},
       2,
       "tensors[3] (replica 1, tensor 1) has 5 elements, expected 6 as "
       "tensor 1 of replica 0"},
      {{a1, a0},
       1,
       "tensors[0] (replica 0, tensor 0) is on /device:CPU:1, expected replica 0's "
       "device /device:CPU:0"},
      {{a0, b0, b1, a1}, 2, "tensors[2] (replica 1, tensor 0) has 6 elements, expected 4"},
      {{i0, i1}, 1, "tensors[0] (replica 0, tensor 0) is i32; all_reduce sums f32 tensors only"},
      {{a0, nullptr}, 1, "tensors[1] (replica 1, tensor 0) is NULL"},
      {{a0, a0, a1, a1}, 2, "tensors[1] (replica 0, tensor 1) is the same tensor as tensors[0]"},
      {{a0, a1}, 0, "per_replica is 0"},
  };
  for (const Case& c : cases) {
    auto [code, msg] = all_reduce(c.tensors, c.per);
    EXPECT_EQ(code, DLRT_INVALID_ARGUMENT) << c.expected;
    EXPECT_TRUE(contains(msg, "dlrt_strategy_all_reduce: " + c.expected)) << msg;
  }
  auto [code, msg] = error_of([&] { s_->all_reduce(nullptr, 1); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "tensors is NULL")) << msg;

  // Broadcast takes any dtype, but the same one in every replica.
  EXPECT_EQ(broadcast({i0, i1}, 1).first, DLRT_OK);
  std::tie(code, msg) = broadcast({a0, i1}, 1);
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg,
                       "dlrt_strategy_broadcast: tensors[1] (replica 1, tensor 0) is i32, "
                       "expected f32 as tensor 0 of replica 0"))
      << msg;

  // None of it touched the strategy.
  EXPECT_FALSE(s_->broken());
  EXPECT_EQ(all_reduce({a0, a1}, 1).first, DLRT_OK);
}

TEST_F(StrategyLayout, TensorsOfAnotherContextAreRefused) {
  auto other = cpu_context(2);
  TensorPtr foreign = f32_tensor(*other, 1, {4}, {1, 2, 3, 4});
  dlrt_tensor* a0 = make(0, DLRT_F32, {4});
  auto [code, msg] = all_reduce({a0, foreign.get()}, 1);
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "tensors[1] (replica 1, tensor 0) belongs to another context")) << msg;
}

// ---- workers ----------------------------------------------------------------------------

TEST(StrategyWorkers, TheEnvironmentCountsOnlyForMultiWorker) {
  auto ctx = cpu_context(2);
  FakeEnv env{{{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "two"}}};
  Strategy mirrored(*ctx, {}, env.lookup());  // multi_worker off: this process only
  EXPECT_EQ(mirrored.worker().size, 1);
  StrategyConfig multi;
  multi.multi_worker = true;
  auto [code, msg] = error_of([&] { Strategy s(*ctx, multi, env.lookup()); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "OMPI_COMM_WORLD_SIZE='two'")) << msg;
}

TEST(StrategyWorkers, OneWorkerNeedsNoMpi) {
  auto ctx = cpu_context(2);
  FakeEnv env{{{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"LOCAL_RANK", "0"}}};
  StrategyConfig multi;
  multi.multi_worker = true;
  Strategy s(*ctx, multi, env.lookup());
  EXPECT_EQ(s.worker().size, 1);
  Replicas t(s, {{3}});
  s.all_reduce(t.ptrs.data(), 1);
  EXPECT_TRUE(same_bits(read_f32(t.at(1, 0)), t.expected_sum(2, 0)));
}

TEST(StrategyWorkers, TwoWorkersWithoutTheMpiPluginIsAFailedPrecondition) {
  FakeEnv env{{{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}};
  StrategyConfig multi;
  multi.multi_worker = true;
  {  // never found
    auto ctx = cpu_context(1);
    auto [code, msg] = error_of([&] { Strategy s(*ctx, multi, env.lookup()); });
    EXPECT_EQ(code, DLRT_FAILED_PRECONDITION);
    EXPECT_TRUE(contains(msg,
                         "multi-worker needs a plugin whose collectives work on host "
                         "memory, such as the mpi plugin (libdlrt-mpi.so"))
        << msg;
    EXPECT_TRUE(contains(msg, "to join 2 workers (OMPI_COMM_WORLD_* says this is rank 1)")) << msg;
    // The cpu and reference plugins loaded, with collectives or none, but not on host memory.
    EXPECT_TRUE(contains(msg, "no loaded plugin offers collectives that work on host memory"))
        << msg;
    EXPECT_TRUE(contains(msg, "dlprobe shows which plugins loaded")) << msg;
  }
  {  // asked for, and its load failure recorded: the message carries it
    ContextSpec spec;
    spec.visible = "CPU";
    spec.extra_plugin_paths = {"/nonexistent/dlrt/plugins/libdlrt-mpi.so"};
    auto ctx = make_context(spec);
    auto [code, msg] = error_of([&] { Strategy s(*ctx, multi, env.lookup()); });
    EXPECT_EQ(code, DLRT_FAILED_PRECONDITION);
    EXPECT_TRUE(contains(msg, "/nonexistent/dlrt/plugins/libdlrt-mpi.so did not load: ")) << msg;
    EXPECT_TRUE(contains(msg, "(NOT_FOUND)")) << msg;
  }
}

// ---- timeout ----------------------------------------------------------------------------

TEST(StrategyTimeout, OptionThenSettingThenDefault) {
  ContextSpec spec;
  spec.cpu_split = 2;
  spec.visible = "CPU";
  spec.env = {{"DLRT_COLLECTIVE_TIMEOUT", "2.5"}};
  auto ctx = make_context(spec);
  EXPECT_EQ(Strategy(*ctx, {}).timeout_ms(), 2500);
  EXPECT_EQ(Strategy(*ctx, StrategyConfig{{}, false, 750}).timeout_ms(), 750);
  EXPECT_EQ(Strategy(*cpu_context(1), {}).timeout_ms(), 300000);
  auto [code, msg] = error_of([&] { Strategy s(*ctx, StrategyConfig{{}, false, -1}); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "options->timeout_ms is -1")) << msg;
}

TEST(StrategyTimeout, ABadVariableFailsTheContext) {
  ContextSpec spec;
  spec.env = {{"DLRT_COLLECTIVE_TIMEOUT", "5min"}};
  auto [code, msg] = error_of([&] { make_context(spec); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "DLRT_COLLECTIVE_TIMEOUT='5min'")) << msg;
}

// ---- broken -----------------------------------------------------------------------------

// The reference double fails the n-th collective call (option collective_fault): the error
// comes back once with its own code, every communicator is aborted, and every later call
// (all_reduce or broadcast) is FAILED_PRECONDITION repeating it.
TEST(StrategyBroken, AFailedCollectiveAbortsAndEveryLaterCallRepeatsIt) {
  struct Case {
    std::string fault;
    dlrt_code code;
    std::string text;
  };
  const Case cases[] = {
      {"unavailable:3", DLRT_UNAVAILABLE, "peer rank 1 of 2 failed (injected fault"},
      {"timeout:3", DLRT_DEADLINE_EXCEEDED, "rank 1 of 2 did not answer within 40 ms"},
  };
  for (const Case& c : cases) {
    auto ctx = ref_context(2, ";reference:collective_fault=" + c.fault);
    Strategy s(*ctx, StrategyConfig{{}, false, 40});
    ASSERT_EQ(s.path(), Path::kDevice);
    Replicas t(s, {{4}, {2}});
    s.all_reduce(t.ptrs.data(), 2);  // collective calls 1 and 2 (one per rank): fine
    const auto start = std::chrono::steady_clock::now();
    auto [code, msg] = error_of([&] { s.all_reduce(t.ptrs.data(), 2); });  // call 3 fails
    EXPECT_EQ(code, c.code) << msg;
    EXPECT_TRUE(contains(msg, c.text)) << msg;
    EXPECT_TRUE(contains(msg, "the strategy is now broken")) << msg;
    if (c.code == DLRT_DEADLINE_EXCEEDED)
      EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(40));
    EXPECT_TRUE(s.broken());
    EXPECT_EQ(s.communicators_aborted(), 2u);

    for (int again = 0; again < 2; ++again) {
      auto [later, later_msg] = error_of([&] {
        if (again == 0) s.all_reduce(t.ptrs.data(), 2);
        else s.broadcast(t.ptrs.data(), 2);
      });
      EXPECT_EQ(later, DLRT_FAILED_PRECONDITION);
      EXPECT_TRUE(contains(later_msg, "the strategy is broken")) << later_msg;
      EXPECT_TRUE(
          contains(later_msg, std::string("The first error was ") + dlrt_code_name(c.code) + ": "))
          << later_msg;
      EXPECT_TRUE(contains(later_msg, c.text)) << later_msg;
    }
    EXPECT_EQ(s.communicators_aborted(), 2u) << "aborted once, not again";
  }
}

// A layout error is the caller's and breaks nothing; the same strategy goes on.
TEST(StrategyBroken, CallerErrorsDoNotBreak) {
  auto ctx = ref_context(2);
  Strategy s(*ctx, {});
  Replicas t(s, {{4}});
  EXPECT_EQ(error_of([&] { s.all_reduce(t.ptrs.data(), 0); }).first, DLRT_INVALID_ARGUMENT);
  EXPECT_FALSE(s.broken());
  s.all_reduce(t.ptrs.data(), 1);
  EXPECT_EQ(s.communicators_aborted(), 0u);
}

}  // namespace
}  // namespace dlrt::core::distribute
