// plugin_test.cc: the CUDA plugin as the host sees it, on any machine, GPU or not.
// Loads libdlrt-cuda.so through the fake host and drives its C table. Where there is no GPU
// (CI, this repository's build machine) it checks that the plugin still loads and says why
// it has no device; where there is one, that it counts it. GPU behaviour: gpu_test.cc.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "cuda_options.hpp"
#include "ops/op_examples.hpp"
#include "ops/op_registry.hpp"
#include "testing/fake_host.hpp"

namespace {

using dlrt::testing::LoadedPlugin;
using dlrt::testing::take_status;

TEST(CudaPlugin, LoadsAndNamesItself) {
  LoadedPlugin p(DLRT_CUDA_PLUGIN_PATH);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_STREQ(p.api().name, "cuda");
  EXPECT_STREQ(p.api().platform, "cuda");
  EXPECT_EQ(p.api().abi_major, uint32_t(DLRT_ABI_MAJOR));
  EXPECT_EQ(p.api().struct_size, sizeof(dlrt_plugin_api));
}

TEST(CudaPlugin, FillsEveryEntryAndBothOptionalTables) {
  LoadedPlugin p(DLRT_CUDA_PLUGIN_PATH);
  ASSERT_TRUE(p.ok()) << p.error();
  const dlrt_plugin_api& a = p.api();
  const void* entries[] = {(void*)a.plugin_create,
                           (void*)a.plugin_destroy,
                           (void*)a.device_count,
                           (void*)a.device_get_desc,
                           (void*)a.device_open,
                           (void*)a.device_close,
                           (void*)a.memory_info,
                           (void*)a.mem_alloc,
                           (void*)a.mem_free,
                           (void*)a.memcpy_h2d,
                           (void*)a.memcpy_d2h,
                           (void*)a.memcpy_d2d,
                           (void*)a.memset,
                           (void*)a.host_alloc_pinned,
                           (void*)a.host_free_pinned,
                           (void*)a.stream_create,
                           (void*)a.stream_destroy,
                           (void*)a.stream_synchronize,
                           (void*)a.event_create,
                           (void*)a.event_destroy,
                           (void*)a.event_record,
                           (void*)a.stream_wait_event,
                           (void*)a.event_synchronize,
                           (void*)a.op_supported,
                           (void*)a.kernel_create,
                           (void*)a.kernel_run,
                           (void*)a.kernel_destroy};
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; ++i)
    EXPECT_NE(entries[i], nullptr) << "entry " << i;

  ASSERT_NE(a.capture, nullptr);
  EXPECT_EQ(a.capture->struct_size, sizeof(dlrt_capture_api));
  EXPECT_NE(a.capture->capture_begin, nullptr);
  EXPECT_NE(a.capture->capture_end, nullptr);
  EXPECT_NE(a.capture->graph_launch, nullptr);
  EXPECT_NE(a.capture->graph_destroy, nullptr);

  ASSERT_NE(a.collectives, nullptr);
  const dlrt_collective_api& c = *a.collectives;
  EXPECT_EQ(c.struct_size, sizeof(dlrt_collective_api));
  for (const void* f :
       {(const void*)c.comm_id_create, (const void*)c.comm_create, (const void*)c.group_begin,
        (const void*)c.group_end, (const void*)c.comm_destroy, (const void*)c.comm_abort,
        (const void*)c.all_reduce, (const void*)c.broadcast, (const void*)c.all_gather})
    EXPECT_NE(f, nullptr);
}

// The CUDA runtime is linked statically and stays private: nothing of it is visible to the
// process (tests/abi checks the whole dynamic symbol table with nm -D).
TEST(CudaPlugin, KeepsTheStaticCudaRuntimePrivate) {
  LoadedPlugin p(DLRT_CUDA_PLUGIN_PATH);
  ASSERT_TRUE(p.ok()) << p.error();
  void* h = dlopen(DLRT_CUDA_PLUGIN_PATH, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(h, nullptr);
  EXPECT_NE(dlsym(h, "dlrt_plugin_init"), nullptr);
  EXPECT_EQ(dlsym(h, "cudaMalloc"), nullptr);
  EXPECT_EQ(dlsym(h, "cudaGetDeviceCount"), nullptr);
  dlclose(h);  // drops only the reference RTLD_NOLOAD took
}

TEST(CudaPlugin, CreateSucceedsWithOrWithoutAGpu) {
  LoadedPlugin p(DLRT_CUDA_PLUGIN_PATH);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_NE(p.create(), nullptr) << p.error();
}

TEST(CudaPlugin, RejectsUnknownOptionsByName) {
  LoadedPlugin p(DLRT_CUDA_PLUGIN_PATH);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p.create({{"allow_growth", "1"}}), nullptr);
  EXPECT_NE(p.error().find("unknown option 'allow_growth'"), std::string::npos) << p.error();
}

// Options deterministic and cudnn_workspace_mb (cuda_options.hpp) are parsed at plugin_create,
// GPU or not: good values create the instance, bad ones are INVALID_ARGUMENT naming the key.
TEST(CudaPlugin, DeterminismAndWorkspaceOptionsAreCheckedAtCreate) {
  LoadedPlugin p(DLRT_CUDA_PLUGIN_PATH);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_NE(p.create({{"deterministic", "0"}, {"cudnn_workspace_mb", "1024"}}), nullptr)
      << p.error();
  EXPECT_NE(p.create({{"deterministic", "1"}, {"cudnn_workspace_mb", "0"}}), nullptr) << p.error();
  EXPECT_EQ(p.create({{"deterministic", "yes"}}), nullptr);
  EXPECT_NE(p.error().find("option 'deterministic' is 'yes', expected an integer in [0, 1]"),
            std::string::npos)
      << p.error();
  EXPECT_EQ(p.create({{"cudnn_workspace_mb", "-5"}}), nullptr);
  EXPECT_NE(p.error().find("option 'cudnn_workspace_mb' is '-5'"), std::string::npos) << p.error();
}

// The options as parsed: defaults deterministic with a 256 MiB cap.
TEST(CudaPlugin, OptionDefaultsAndValues) {
  dlrt::plugin::Options none(nullptr, dlrt::cuda::cuda_option_keys());
  const dlrt::cuda::CudaOptions d = dlrt::cuda::parse_cuda_options(none);
  EXPECT_TRUE(d.deterministic);
  EXPECT_EQ(d.cudnn_workspace_limit, size_t{256} << 20);
  dlrt_attr det{}, ws{};
  det.name = "deterministic";
  det.s = "0";
  ws.name = "cudnn_workspace_mb";
  ws.s = "8";
  const dlrt_attr* list[] = {&det, &ws};
  dlrt_plugin_create_args args{};
  args.options = list;
  args.num_options = 2;
  dlrt::plugin::Options given(&args, dlrt::cuda::cuda_option_keys());
  const dlrt::cuda::CudaOptions o = dlrt::cuda::parse_cuda_options(given);
  EXPECT_FALSE(o.deterministic);
  EXPECT_EQ(o.cudnn_workspace_limit, size_t{8} << 20);
}

// On a machine without a GPU or driver: UNAVAILABLE, naming the CUDA error and both versions.
// With a GPU: at least one device.
TEST(CudaPlugin, DeviceCountCountsOrSaysWhy) {
  LoadedPlugin p(DLRT_CUDA_PLUGIN_PATH);
  ASSERT_TRUE(p.ok()) << p.error();
  dlrt_plugin* inst = p.create();
  ASSERT_NE(inst, nullptr) << p.error();
  int32_t count = -1;
  auto [code, msg] = take_status(p.api().device_count(inst, &count));
  if (code == DLRT_OK) {
    EXPECT_GE(count, 1);
    return;
  }
  std::printf("device_count: %s\n", msg.c_str());
  EXPECT_EQ(code, DLRT_UNAVAILABLE) << msg;
  EXPECT_EQ(count, 0);
  EXPECT_EQ(msg.rfind("cuda: no CUDA device: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("cudaError"), std::string::npos) << msg;
  EXPECT_NE(msg.find("; driver "), std::string::npos) << msg;
  EXPECT_NE(msg.find(", runtime 13."), std::string::npos) << msg;

  // Asked again, the same answer (decided once), and describing or opening fails the same way.
  auto again = take_status(p.api().device_count(inst, &count));
  EXPECT_EQ(again.second, msg);
  dlrt_device_desc desc{};
  desc.struct_size = sizeof desc;
  EXPECT_EQ(take_status(p.api().device_get_desc(inst, 0, &desc)).first, DLRT_UNAVAILABLE);
  dlrt_device* dev = nullptr;
  EXPECT_EQ(take_status(p.api().device_open(inst, 0, &dev)).first, DLRT_UNAVAILABLE);
  EXPECT_EQ(dev, nullptr);
}

TEST(CudaPlugin, UnknownOpsAreUnimplemented) {
  LoadedPlugin p(DLRT_CUDA_PLUGIN_PATH);
  ASSERT_TRUE(p.ok()) << p.error();
  dlrt_plugin* inst = p.create();
  ASSERT_NE(inst, nullptr) << p.error();
  dlrt_op_desc op{};
  op.struct_size = sizeof op;
  op.op = "conv3d";
  auto [code, msg] = take_status(p.api().op_supported(inst, 0, &op, nullptr));
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED);
  EXPECT_EQ(msg, "cuda: no kernel for op 'conv3d' yet");

  // An op with a kernel is then a question for the device: without a GPU, UNAVAILABLE.
  op.op = "relu";
  int32_t count = 0;
  if (take_status(p.api().device_count(inst, &count)).first != DLRT_OK)
    EXPECT_EQ(take_status(p.api().op_supported(inst, 0, &op, nullptr)).first, DLRT_UNAVAILABLE);

  op.op = nullptr;
  EXPECT_EQ(take_status(p.api().op_supported(inst, 0, &op, nullptr)).first, DLRT_INVALID_ARGUMENT);
}

// Every op of the schema has a row in the op table (a kernel file's DLRT_CUDA_OPS block), checked
// on any machine: without a row op_supported answers "no kernel" before it asks for a device.
// Whether the kernel computes the op right is the GPU tests' question (ops_gpu_test.cc).
TEST(CudaPlugin, EveryOpOfTheSchemaHasARow) {
  LoadedPlugin p(DLRT_CUDA_PLUGIN_PATH);
  ASSERT_TRUE(p.ok()) << p.error();
  dlrt_plugin* inst = p.create();
  ASSERT_NE(inst, nullptr) << p.error();
  for (const dlrt::ops::OpDef* d : dlrt::ops::all_ops()) {
    auto example = dlrt::ops::instantiate_example(d->name);
    ASSERT_TRUE(example.ok()) << d->name;
    auto [code, msg] = take_status(p.api().op_supported(inst, 0, &example.value().desc(), nullptr));
    EXPECT_EQ(msg.find("no kernel"), std::string::npos) << d->name << ": " << msg;
  }
}

TEST(CudaPlugin, CollectiveArgumentsAreCheckedBeforeAnyDeviceWork) {
  LoadedPlugin p(DLRT_CUDA_PLUGIN_PATH);
  ASSERT_TRUE(p.ok()) << p.error();
  const dlrt_collective_api& c = *p.api().collectives;
  dlrt_comm* comm = reinterpret_cast<dlrt_comm*>(1);
  uint8_t id[DLRT_COMM_ID_BYTES] = {};
  auto [code, msg] = take_status(c.comm_create(nullptr, id, 2, 0, 1000, &comm));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(comm, nullptr);  // out-params cleared on entry
  EXPECT_NE(msg.find("device is NULL"), std::string::npos) << msg;
  EXPECT_EQ(
      take_status(c.all_reduce(nullptr, nullptr, nullptr, 1, DLRT_F32, DLRT_REDUCE_SUM, nullptr))
          .first,
      DLRT_INVALID_ARGUMENT);
  // Entries that return nothing accept NULL.
  c.comm_destroy(nullptr);
  c.comm_abort(nullptr);
  p.api().capture->graph_destroy(nullptr);
}

}  // namespace
