// gpu_test.cc: the CUDA plugin on a real GPU, through its C table and the fake host.
// Labelled `gpu` in ctest; every test skips cleanly (with the plugin's reason) when
// device_count reports no device, so the executable also passes in CI.
//
// Covers: the device description, memory (allocation arguments and alignment, memset's
// low-byte rule, out of memory and recovery; copies, pinned memory and stream/event ordering
// are the shared device-services suite, device_services_gpu_test.cc),
// graph capture and replay (random ops reading their offset from device memory on every
// replay, ABI 1.1), and NCCL collectives on one rank.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "philox.hpp"
#include "testing/fake_host.hpp"

namespace {

using dlrt::testing::LoadedPlugin;
using dlrt::testing::take_status;

#define EXPECT_OK(expr)                                    \
  do {                                                     \
    auto dlrt_st_ = take_status(expr);                     \
    EXPECT_EQ(dlrt_st_.first, DLRT_OK) << dlrt_st_.second; \
  } while (0)
#define ASSERT_OK(expr)                                    \
  do {                                                     \
    auto dlrt_st_ = take_status(expr);                     \
    ASSERT_EQ(dlrt_st_.first, DLRT_OK) << dlrt_st_.second; \
  } while (0)

class CudaGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    plugin_ = std::make_unique<LoadedPlugin>(DLRT_CUDA_PLUGIN_PATH);
    ASSERT_TRUE(plugin_->ok()) << plugin_->error();
    inst_ = plugin_->create();
    ASSERT_NE(inst_, nullptr) << plugin_->error();
    int32_t count = 0;
    auto [code, msg] = take_status(api().device_count(inst_, &count));
    if (code != DLRT_OK) GTEST_SKIP() << msg;
    ASSERT_OK(api().device_open(inst_, 0, &dev_));
  }
  void TearDown() override {
    if (dev_ != nullptr) api().device_close(dev_);
    plugin_.reset();
  }
  const dlrt_plugin_api& api() const { return plugin_->api(); }

  void* alloc(size_t bytes, size_t alignment = 256) {
    void* p = nullptr;
    auto [code, msg] = take_status(api().mem_alloc(dev_, bytes, alignment, &p));
    EXPECT_EQ(code, DLRT_OK) << msg;
    return p;
  }
  std::vector<uint8_t> read(const void* src, size_t bytes) {
    std::vector<uint8_t> out(bytes);
    EXPECT_OK(api().memcpy_d2h(dev_, out.data(), src, bytes, nullptr));
    return out;
  }

  std::unique_ptr<LoadedPlugin> plugin_;
  dlrt_plugin* inst_ = nullptr;
  dlrt_device* dev_ = nullptr;
};

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i * 31 + seed);
  return v;
}

TEST_F(CudaGpu, DescribesTheDevice) {
  dlrt_device_desc d{};
  d.struct_size = sizeof d;
  ASSERT_OK(api().device_get_desc(inst_, 0, &d));
  EXPECT_EQ(d.struct_size, sizeof d);
  EXPECT_EQ(d.device_class, DLRT_DEVICE_CLASS_GPU);
  EXPECT_EQ(d.ordinal, 0);
  EXPECT_STREQ(d.type, "GPU");
  EXPECT_STREQ(d.vendor, "NVIDIA");
  EXPECT_GT(std::strlen(d.name), 0u);
  EXPECT_EQ(std::string(d.uuid).rfind("GPU-", 0), 0u) << d.uuid;
  EXPECT_EQ(std::strlen(d.uuid), 40u) << d.uuid;  // GPU- + 8-4-4-4-12 hex digits
  const std::string bus = d.pci_bus_id;  // "0000:3b:00.0": domain:bus:device.function, lower case
  EXPECT_GE(bus.size(), 12u) << bus;
  EXPECT_EQ(bus.find_first_of("ABCDEF"), std::string::npos) << bus;
  EXPECT_NE(bus.find(':'), std::string::npos) << bus;
  EXPECT_EQ(bus[bus.size() - 2], '.') << bus;
  EXPECT_GE(d.compute_capability_major, 5);
  EXPECT_GT(d.core_count, 0);
  EXPECT_GT(d.memory_total, uint64_t(1) << 30);
  EXPECT_EQ(std::string(d.driver_version).rfind("CUDA driver ", 0), 0u) << d.driver_version;
  const std::string libs = d.library_versions;
  for (const char* lib : {"cuDNN 9.", "cuBLAS 13.", "NCCL 2."})
    EXPECT_NE(libs.find(lib), std::string::npos) << libs;
  EXPECT_GT(d.peak_gflops, 1000.0);
  EXPECT_GT(d.memory_bandwidth_gbps, 100.0);
  EXPECT_GT(d.launch_overhead_us, 0.0);
  bool l2 = false;
  for (size_t i = 0; i < d.num_attrs; ++i)
    if (std::string(d.attrs[i]->name) == "l2_cache_bytes") l2 = d.attrs[i]->i > 0;
  EXPECT_TRUE(l2);
  std::printf("%s cc %d.%d, %d SMs, %.1f GiB, %.0f GFLOP/s, %.0f GB/s, %s; %s; %s %s\n", d.name,
              d.compute_capability_major, d.compute_capability_minor, d.core_count,
              d.memory_total / double(1 << 30), d.peak_gflops, d.memory_bandwidth_gbps,
              d.driver_version, d.library_versions, d.uuid, d.pci_bus_id);

  uint64_t free = 0, total = 0;
  ASSERT_OK(api().memory_info(dev_, &free, &total));
  EXPECT_EQ(total, d.memory_total);
  EXPECT_GT(free, 0u);
  EXPECT_LE(free, total);

  dlrt_device* none = nullptr;
  int32_t count = 0;
  ASSERT_OK(api().device_count(inst_, &count));
  EXPECT_EQ(take_status(api().device_open(inst_, count, &none)).first, DLRT_NOT_FOUND);
}

TEST_F(CudaGpu, MemsetSyncAndOnAStream) {
  const size_t n = 4099;
  void* p = alloc(n);
  ASSERT_OK(api().memset(dev_, p, 0xAB, n, nullptr));
  EXPECT_EQ(read(p, n), std::vector<uint8_t>(n, 0xAB));
  dlrt_stream* s = nullptr;
  ASSERT_OK(api().stream_create(dev_, &s));
  ASSERT_OK(api().memset(dev_, p, 0x1CD, n, s));  // the low byte counts, like memset(3)
  ASSERT_OK(api().stream_synchronize(s));
  EXPECT_EQ(read(p, n), std::vector<uint8_t>(n, 0xCD));
  api().stream_destroy(s);
  api().mem_free(dev_, p);
}

TEST_F(CudaGpu, AllocationArgumentsAndAlignment) {
  void* p = nullptr;
  EXPECT_EQ(take_status(api().mem_alloc(dev_, 0, 256, &p)).first, DLRT_INVALID_ARGUMENT);
  auto [code, msg] = take_status(api().mem_alloc(dev_, 64, 3, &p));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("alignment is 3, expected a power of two <= 4096"), std::string::npos) << msg;
  for (size_t align : {size_t(1), size_t(256), size_t(512), size_t(4096)}) {
    void* q = alloc(100, align);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % align, 0u) << align;
    EXPECT_OK(api().memset(dev_, q, 1, 100, nullptr));  // the whole range is usable
    api().mem_free(dev_, q);
  }
}

TEST_F(CudaGpu, OutOfMemoryIsResourceExhaustedAndRecoverable) {
  void* p = nullptr;
  auto [code, msg] = take_status(api().mem_alloc(dev_, size_t(10) << 40, 256, &p));  // 10 TiB
  EXPECT_EQ(code, DLRT_RESOURCE_EXHAUSTED) << msg;
  EXPECT_EQ(p, nullptr);
  EXPECT_NE(msg.find("cudaErrorMemoryAllocation"), std::string::npos) << msg;
  EXPECT_NE(msg.find("GiB free of"), std::string::npos) << msg;
  std::printf("%s\n", msg.c_str());
  // The failure leaves nothing behind: a small allocation and work on it succeed.
  void* q = alloc(1 << 20);
  ASSERT_NE(q, nullptr);
  EXPECT_OK(api().memset(dev_, q, 0, 1 << 20, nullptr));
  api().mem_free(dev_, q);
}

TEST_F(CudaGpu, CapturedCopiesReplayTwice) {
  const dlrt_capture_api& cap = *api().capture;
  const size_t n = 1 << 16;
  void* src = alloc(n);
  void* dst = alloc(n);
  dlrt_stream* s = nullptr;
  ASSERT_OK(api().stream_create(dev_, &s));
  dlrt_graph_exec* g = nullptr;
  EXPECT_EQ(take_status(cap.capture_end(s, &g)).first, DLRT_FAILED_PRECONDITION);

  // Recorded: dst = 0x11 everywhere, then its first half = src's first half.
  ASSERT_OK(cap.capture_begin(s));
  EXPECT_EQ(take_status(cap.capture_begin(s)).first, DLRT_FAILED_PRECONDITION);
  EXPECT_OK(api().memset(dev_, dst, 0x11, n, s));
  EXPECT_OK(api().memcpy_d2d(dev_, dst, src, n / 2, s));
  ASSERT_OK(cap.capture_end(s, &g));
  ASSERT_NE(g, nullptr);

  for (uint8_t seed : {3, 200}) {  // same graph, new input, new output
    const auto in = pattern(n, seed);
    ASSERT_OK(api().memcpy_h2d(dev_, src, in.data(), n, nullptr));
    ASSERT_OK(api().memset(dev_, dst, 0, n, nullptr));
    ASSERT_OK(cap.graph_launch(g, s));
    ASSERT_OK(api().stream_synchronize(s));
    auto expect = in;
    std::memset(expect.data() + n / 2, 0x11, n - n / 2);
    EXPECT_EQ(read(dst, n), expect) << "replay with seed " << int(seed);
  }
  cap.graph_destroy(g);
  api().stream_destroy(s);
  api().mem_free(dev_, src);
  api().mem_free(dev_, dst);
}

// What the executor relies on to capture random ops: a kernel parameter is frozen into the
// graph (rng_offset stays 1 here), but the offset behind rng_offset_device is read when the
// kernel executes, so each replay draws with the value copied there just before it.
TEST_F(CudaGpu, CapturedRandomOpsReadTheOffsetFromDeviceMemory) {
  const int64_t n = 1000;
  dlrt_tensor_desc y{};
  y.struct_size = sizeof y;
  y.dtype = DLRT_F32;
  y.rank = 1;
  y.dims[0] = n;
  y.layout = DLRT_LAYOUT_DENSE;
  const int64_t shape[] = {n};
  auto attr = [](const char* name, int32_t type) {
    dlrt_attr a{};
    a.struct_size = sizeof a;
    a.name = name;
    a.type = type;
    return a;
  };
  dlrt_attr attrs[5] = {attr("dtype", DLRT_ATTR_DTYPE), attr("shape", DLRT_ATTR_INTS),
                        attr("seed", DLRT_ATTR_INT), attr("minval", DLRT_ATTR_FLOAT),
                        attr("maxval", DLRT_ATTR_FLOAT)};
  attrs[0].i = DLRT_F32;
  attrs[1].ints = shape;
  attrs[1].count = 1;
  attrs[2].i = 42;
  attrs[4].f = 1.0;
  const dlrt_attr* attr_ptrs[5] = {&attrs[0], &attrs[1], &attrs[2], &attrs[3], &attrs[4]};
  const dlrt_tensor_desc* outs[] = {&y};
  dlrt_op_desc desc{};
  desc.struct_size = sizeof desc;
  desc.op = "random_uniform";
  desc.num_outputs = 1;
  desc.outputs = outs;
  desc.num_attrs = 5;
  desc.attrs = attr_ptrs;
  dlrt_kernel* k = nullptr;
  size_t ws = 0;
  ASSERT_OK(api().kernel_create(dev_, &desc, &k, &ws));
  void* dy = alloc(n * sizeof(float));
  auto* offset = static_cast<uint64_t*>(alloc(sizeof(uint64_t)));
  dlrt_stream* s = nullptr;
  ASSERT_OK(api().stream_create(dev_, &s));

  void* out_ptrs[] = {dy};
  dlrt_kernel_args args{};
  args.struct_size = sizeof args;
  args.num_outputs = 1;
  args.outputs = out_ptrs;
  args.rng_offset = 1;  // frozen into the graph: must not matter
  args.rng_offset_device = offset;
  const dlrt_capture_api& cap = *api().capture;
  ASSERT_OK(cap.capture_begin(s));
  ASSERT_OK(api().kernel_run(k, s, &args));
  dlrt_graph_exec* g = nullptr;
  ASSERT_OK(cap.capture_end(s, &g));
  for (uint64_t run : {2u, 3u, 11u}) {
    ASSERT_OK(api().memcpy_h2d(dev_, offset, &run, sizeof run, s));
    ASSERT_OK(cap.graph_launch(g, s));
    ASSERT_OK(api().stream_synchronize(s));
    std::vector<float> got(n);
    std::memcpy(got.data(), read(dy, n * sizeof(float)).data(), n * sizeof(float));
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(got[i], static_cast<float>(double(dlrt::philox::uniform(42, run, uint64_t(i)))))
          << "replay with offset " << run << ", element " << i;
  }
  cap.graph_destroy(g);
  api().kernel_destroy(k);
  api().stream_destroy(s);
  api().mem_free(dev_, dy);
  api().mem_free(dev_, offset);
}

TEST_F(CudaGpu, NcclOnOneRank) {
  const dlrt_collective_api& c = *api().collectives;
  uint8_t id[DLRT_COMM_ID_BYTES] = {};
  ASSERT_OK(c.comm_id_create(inst_, id));
  dlrt_comm* comm = nullptr;
  ASSERT_OK(c.comm_create(dev_, id, 1, 0, 60000, &comm));
  ASSERT_NE(comm, nullptr);
  dlrt_stream* s = nullptr;
  ASSERT_OK(api().stream_create(dev_, &s));

  const size_t count = 1000;
  std::vector<float> in(count);
  for (size_t i = 0; i < count; ++i) in[i] = float(i) * 0.5f - 7.0f;
  const size_t bytes = count * sizeof(float);
  void* send = alloc(bytes);
  void* recv = alloc(bytes);
  ASSERT_OK(api().memcpy_h2d(dev_, send, in.data(), bytes, nullptr));
  std::vector<float> out(count);

  // One rank: the sum (and the broadcast, and the gather) of one contribution is itself.
  ASSERT_OK(api().memset(dev_, recv, 0, bytes, nullptr));
  ASSERT_OK(c.all_reduce(comm, send, recv, count, DLRT_F32, DLRT_REDUCE_SUM, s));
  ASSERT_OK(api().stream_synchronize(s));
  ASSERT_OK(api().memcpy_d2h(dev_, out.data(), recv, bytes, nullptr));
  EXPECT_EQ(out, in);

  ASSERT_OK(api().memset(dev_, recv, 0, bytes, nullptr));
  ASSERT_OK(c.broadcast(comm, send, recv, count, DLRT_F32, 0, s));
  ASSERT_OK(c.all_gather(comm, send, recv, count, DLRT_F32, s));
  ASSERT_OK(api().stream_synchronize(s));
  ASSERT_OK(api().memcpy_d2h(dev_, out.data(), recv, bytes, nullptr));
  EXPECT_EQ(out, in);

  auto [code, msg] = take_status(c.all_reduce(comm, send, recv, count, 99, DLRT_REDUCE_SUM, s));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("dtype 99"), std::string::npos) << msg;
  auto bad_op = take_status(c.all_reduce(comm, send, recv, count, DLRT_F32, 42, s));
  EXPECT_EQ(bad_op.first, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(bad_op.second.find("reduce op 42"), std::string::npos) << bad_op.second;
  EXPECT_EQ(take_status(c.broadcast(comm, send, recv, count, DLRT_F32, 1, s)).first,
            DLRT_INVALID_ARGUMENT);

  c.comm_destroy(comm);
  api().stream_destroy(s);
  api().mem_free(dev_, send);
  api().mem_free(dev_, recv);
}

TEST_F(CudaGpu, NcclCreateInsideAGroup) {
  const dlrt_collective_api& c = *api().collectives;
  uint8_t id[DLRT_COMM_ID_BYTES] = {};
  ASSERT_OK(c.comm_id_create(inst_, id));
  dlrt_comm* comm = nullptr;
  ASSERT_OK(c.group_begin(inst_));
  ASSERT_OK(c.comm_create(dev_, id, 1, 0, 60000, &comm));
  ASSERT_OK(c.group_end(inst_));  // initialisation completes here
  ASSERT_NE(comm, nullptr);
  c.comm_destroy(comm);
  EXPECT_EQ(take_status(c.group_end(inst_)).first, DLRT_FAILED_PRECONDITION);
}

// group_begin, all_reduce, group_end, all_reduce: inside a group NCCL answers
// ncclSuccess and does the work at ncclGroupEnd, which on a non-blocking communicator returns
// ncclInProgress; group_end must wait for the communicator, or the second all_reduce fails
// with "Attempt to use communicator before the previous operation returned ncclSuccess".
TEST_F(CudaGpu, NcclGroupEndWaitsBeforeTheNextCall) {
  const dlrt_collective_api& c = *api().collectives;
  uint8_t id[DLRT_COMM_ID_BYTES] = {};
  ASSERT_OK(c.comm_id_create(inst_, id));
  dlrt_comm* comm = nullptr;
  ASSERT_OK(c.comm_create(dev_, id, 1, 0, 60000, &comm));
  dlrt_stream* s = nullptr;
  ASSERT_OK(api().stream_create(dev_, &s));
  const size_t count = 1 << 20, bytes = count * sizeof(float);
  std::vector<float> in(count, 1.5f), out(count);
  void* buf = alloc(bytes);
  ASSERT_OK(api().memcpy_h2d(dev_, buf, in.data(), bytes, nullptr));
  ASSERT_OK(c.group_begin(inst_));
  ASSERT_OK(c.all_reduce(comm, buf, buf, count, DLRT_F32, DLRT_REDUCE_SUM, s));
  ASSERT_OK(c.group_end(inst_));
  ASSERT_OK(c.all_reduce(comm, buf, buf, count, DLRT_F32, DLRT_REDUCE_SUM, s));
  ASSERT_OK(api().stream_synchronize(s));
  ASSERT_OK(api().memcpy_d2h(dev_, out.data(), buf, bytes, nullptr));
  EXPECT_EQ(out, in);  // one rank: each sum is its own input
  c.comm_destroy(comm);
  api().stream_destroy(s);
  api().mem_free(dev_, buf);
}

}  // namespace
