// c_api_distribute_test.cc: the dlrt_strategy_* C functions: options_init and the struct_size
// rule, NULL arguments, bad option fields, out-parameters reset, and one mirrored all_reduce
// and broadcast through the C handles.
#include <dlrt/dlrt.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "distribute/distribute_test_util.hpp"

namespace dlrt::core::distribute {
namespace {

using namespace test;  // NOLINT: the test helpers

std::pair<dlrt_code, std::string> take(dlrt_status* s) {
  StatusValue v = take_status(s);
  return {v.code, v.message};
}

// dlrt_worker_info_get reads the process's environment: TF_CONFIG set here (and removed),
// unless a launcher's variables are already there (this test then run under mpirun).
TEST(CApiStrategy, WorkerInfoReadsTheEnvironment) {
  if (std::getenv("OMPI_COMM_WORLD_RANK") || std::getenv("RANK") || std::getenv("SLURM_PROCID") ||
      std::getenv("TF_CONFIG"))
    GTEST_SKIP() << "a launcher's variables are set";
  dlrt_worker_info w{};
  w.struct_size = sizeof(w);
  ASSERT_EQ(dlrt_worker_info_get(&w), nullptr);
  EXPECT_EQ(w.rank, 0);
  EXPECT_EQ(w.size, 1);
  EXPECT_STREQ(w.source, "");
  setenv("TF_CONFIG", R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 1}})", 1);
  ASSERT_EQ(dlrt_worker_info_get(&w), nullptr);
  EXPECT_EQ(w.rank, 1);
  EXPECT_EQ(w.size, 2);
  EXPECT_STREQ(w.source, "TF_CONFIG");
  setenv("TF_CONFIG", "{", 1);
  dlrt_status* bad = dlrt_worker_info_get(&w);
  unsetenv("TF_CONFIG");
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(dlrt_status_code(bad), DLRT_INVALID_ARGUMENT);
  dlrt_status_free(bad);
  dlrt_status* null_out = dlrt_worker_info_get(nullptr);
  EXPECT_NE(null_out, nullptr) << "NULL out is an error";
  dlrt_status_free(null_out);
}

TEST(CApiStrategy, OptionsInit) {
  dlrt_strategy_options o;
  std::memset(&o, 0xAB, sizeof o);
  dlrt_strategy_options_init(&o);
  EXPECT_EQ(o.struct_size, sizeof(dlrt_strategy_options));
  EXPECT_EQ(o.devices, nullptr);
  EXPECT_EQ(o.num_devices, 0u);
  EXPECT_EQ(o.multi_worker, 0);
  EXPECT_EQ(o.timeout_ms, 0);
  dlrt_strategy_options_init(nullptr);  // accepted
}

TEST(CApiStrategy, NullsAndBadOptions) {
  auto ctx = cpu_context(2);
  dlrt_strategy* s = reinterpret_cast<dlrt_strategy*>(0x1);
  auto [code, msg] = take(dlrt_strategy_create(ctx.get(), nullptr, nullptr));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "out_strategy is NULL")) << msg;
  std::tie(code, msg) = take(dlrt_strategy_create(nullptr, nullptr, &s));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "dlrt_strategy_create: context is NULL")) << msg;
  EXPECT_EQ(s, nullptr) << "reset on entry";

  dlrt_strategy_options o;
  dlrt_strategy_options_init(&o);
  o.struct_size = 4;
  std::tie(code, msg) = take(dlrt_strategy_create(ctx.get(), &o, &s));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "options->struct_size is 4")) << msg;

  dlrt_strategy_options_init(&o);
  o.num_devices = 2;
  std::tie(code, msg) = take(dlrt_strategy_create(ctx.get(), &o, &s));
  EXPECT_TRUE(contains(msg, "options->num_devices is 2 but options->devices is NULL")) << msg;
  const char* specs[] = {"CPU:0", nullptr};
  o.devices = specs;
  std::tie(code, msg) = take(dlrt_strategy_create(ctx.get(), &o, &s));
  EXPECT_TRUE(contains(msg, "options->devices[1] is NULL")) << msg;

  dlrt_strategy_options_init(&o);
  o.multi_worker = 2;
  std::tie(code, msg) = take(dlrt_strategy_create(ctx.get(), &o, &s));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "options->multi_worker is 2")) << msg;
  EXPECT_EQ(s, nullptr);

  // The queries accept NULL; the calls name it.
  EXPECT_EQ(dlrt_strategy_num_replicas(nullptr), 0u);
  EXPECT_EQ(dlrt_strategy_rank(nullptr), 0);
  EXPECT_EQ(dlrt_strategy_num_workers(nullptr), 0);
  EXPECT_EQ(dlrt_strategy_local_rank(nullptr), 0);
  size_t index = 7;
  EXPECT_EQ(take(dlrt_strategy_replica_device(nullptr, 0, &index)).first, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(index, 0u);
  std::tie(code, msg) = take(dlrt_strategy_all_reduce(nullptr, nullptr, 1));
  EXPECT_TRUE(contains(msg, "dlrt_strategy_all_reduce: strategy is NULL")) << msg;
  std::tie(code, msg) = take(dlrt_strategy_broadcast(nullptr, nullptr, 1));
  EXPECT_TRUE(contains(msg, "dlrt_strategy_broadcast: strategy is NULL")) << msg;
  dlrt_strategy_destroy(nullptr);
}

// An older caller's smaller options (up to multi_worker) are read as far as they reach.
TEST(CApiStrategy, OlderOptionsStruct) {
  auto ctx = cpu_context(2);
  dlrt_strategy_options o;
  dlrt_strategy_options_init(&o);
  o.timeout_ms = -5;  // past the caller's struct_size: never read
  o.struct_size = offsetof(dlrt_strategy_options, reserved0);
  dlrt_strategy* s = nullptr;
  ASSERT_EQ(take(dlrt_strategy_create(ctx.get(), &o, &s)).first, DLRT_OK);
  EXPECT_EQ(s->timeout_ms(), 300000);
  dlrt_strategy_destroy(s);
}

TEST(CApiStrategy, MirroredThroughTheHandles) {
  auto ctx = ref_context(2);
  const char* specs[] = {"REF:1", "REF:0"};
  dlrt_strategy_options o;
  dlrt_strategy_options_init(&o);
  o.devices = specs;
  o.num_devices = 2;
  o.timeout_ms = 5000;
  dlrt_strategy* s = nullptr;
  ASSERT_EQ(take(dlrt_strategy_create(ctx.get(), &o, &s)).first, DLRT_OK);
  ASSERT_EQ(dlrt_strategy_num_replicas(s), 2u);
  size_t index = 9;
  ASSERT_EQ(take(dlrt_strategy_replica_device(s, 0, &index)).first, DLRT_OK);
  EXPECT_EQ(index, 1u);
  auto [code, msg] = take(dlrt_strategy_replica_device(s, 2, &index));
  EXPECT_EQ(code, DLRT_OUT_OF_RANGE);
  EXPECT_EQ(dlrt_strategy_rank(s), 0);
  EXPECT_EQ(dlrt_strategy_num_workers(s), 1);
  EXPECT_EQ(dlrt_strategy_local_rank(s), 0);

  TensorPtr a = f32_tensor(*ctx, 1, {2}, {1.5f, 2});
  TensorPtr b = f32_tensor(*ctx, 0, {2}, {10, 20});
  dlrt_tensor* t[] = {a.get(), b.get()};
  ASSERT_EQ(take(dlrt_strategy_all_reduce(s, t, 1)).first, DLRT_OK);
  EXPECT_EQ(read_f32(*b), (std::vector<float>{11.5f, 22}));
  const float c[2] = {-1, -2};
  a->write(c, sizeof c);
  ASSERT_EQ(take(dlrt_strategy_broadcast(s, t, 1)).first, DLRT_OK);
  EXPECT_EQ(read_f32(*b), (std::vector<float>{-1, -2}));
  std::tie(code, msg) = take(dlrt_strategy_all_reduce(s, nullptr, 1));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "dlrt_strategy_all_reduce: tensors is NULL")) << msg;
  dlrt_strategy_destroy(s);
}

}  // namespace
}  // namespace dlrt::core::distribute
