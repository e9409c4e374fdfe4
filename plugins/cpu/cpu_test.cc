// cpu_test.cc: the cpu plugin at device level through the fake host: its description (model
// name, cores, ISA, oneDNN version, peak estimate), memory (alignment, copies, memory_info),
// streams/events, options, and the UNIMPLEMENTED answer for an op without a kernel row (the
// kernels themselves: kernels/primitive_kernels_test.cc, kernels/loop_kernels_test.cc).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "testing/fake_host.hpp"
#include "testing/status_checks.hpp"

#ifdef __SANITIZE_ADDRESS__
// AllocationIsAligned asks for an impossible size to see RESOURCE_EXHAUSTED; ASan's allocator
// would abort on it instead of failing the allocation as libc does.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

namespace {

using dlrt::testing::LoadedPlugin;
using dlrt::testing::take_status;
using Opts = std::map<std::string, std::string>;

using dlrt::testing::contains;

struct Cpu {
  explicit Cpu(const Opts& options = {}) : lib(DLRT_PLUGIN_FILE) {
    if (lib.ok()) inst = lib.create(options);
    if (inst == nullptr) return;
    auto [c, m] = take_status(api().device_open(inst, 0, &dev));
    EXPECT_EQ(c, DLRT_OK) << m;
  }
  ~Cpu() {
    if (dev != nullptr) api().device_close(dev);
  }
  const dlrt_plugin_api& api() const { return lib.api(); }
  dlrt_device_desc desc() {
    dlrt_device_desc d{};
    d.struct_size = sizeof(d);
    auto [c, m] = take_status(api().device_get_desc(inst, 0, &d));
    EXPECT_EQ(c, DLRT_OK) << m;
    return d;
  }
  const dlrt_attr* attr(const dlrt_device_desc& d, const std::string& name) {
    for (size_t i = 0; i < d.num_attrs; ++i)
      if (name == d.attrs[i]->name) return d.attrs[i];
    return nullptr;
  }

  LoadedPlugin lib;
  dlrt_plugin* inst = nullptr;
  dlrt_device* dev = nullptr;
};

TEST(CpuPlugin, LoadsAsCpuOnOnednn) {
  LoadedPlugin lib(DLRT_PLUGIN_FILE);
  ASSERT_TRUE(lib.ok()) << lib.error();
  EXPECT_STREQ(lib.api().name, "cpu");
  EXPECT_STREQ(lib.api().platform, "onednn");
  EXPECT_EQ(lib.api().capture, nullptr);
  EXPECT_EQ(lib.api().collectives, nullptr);
}

TEST(CpuPlugin, DescribesOneCpuDevice) {
  Cpu c;
  ASSERT_NE(c.inst, nullptr) << c.lib.error();
  int32_t n = 0;
  EXPECT_OK(c.api().device_count(c.inst, &n));
  EXPECT_EQ(n, 1);
  dlrt_device_desc d = c.desc();
  EXPECT_EQ(d.device_class, DLRT_DEVICE_CLASS_CPU);
  EXPECT_EQ(d.ordinal, 0);
  EXPECT_STREQ(d.type, "CPU");
  EXPECT_GT(std::strlen(d.name), 0u) << "model name from /proc/cpuinfo";
  EXPECT_GE(d.core_count, 1);
  EXPECT_GT(d.memory_total, 0u);
  EXPECT_TRUE(contains(d.library_versions, "oneDNN 2.")) << d.library_versions;
  EXPECT_GT(d.peak_gflops, 0.0);
  const dlrt_attr* isa = c.attr(d, "isa");
  ASSERT_NE(isa, nullptr);
  ASSERT_EQ(isa->type, DLRT_ATTR_STRING);
  EXPECT_STRNE(isa->s, "unknown");
  const dlrt_attr* threads = c.attr(d, "threads");
  ASSERT_NE(threads, nullptr);
  EXPECT_EQ(threads->i, d.core_count) << "threads=0 (default) means every core";
  // The peak is the documented formula over the attributes it came from.
  const dlrt_attr* mhz = c.attr(d, "cpu_mhz");
  const dlrt_attr* fpc = c.attr(d, "flops_per_cycle");
  ASSERT_NE(mhz, nullptr);
  ASSERT_NE(fpc, nullptr);
  EXPECT_NEAR(d.peak_gflops, d.core_count * mhz->f / 1000.0 * fpc->i, 1e-6);

  dlrt_device_desc other{};
  other.struct_size = sizeof(other);
  auto [code, msg] = take_status(c.api().device_get_desc(c.inst, 1, &other));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "ordinal 1")) << msg;
}

TEST(CpuPlugin, ThreadsOption) {
  Cpu one(Opts{{"threads", "1"}});
  ASSERT_NE(one.inst, nullptr) << one.lib.error();
  dlrt_device_desc d = one.desc();
  EXPECT_EQ(one.attr(d, "threads")->i, 1);
  LoadedPlugin bad(DLRT_PLUGIN_FILE);
  EXPECT_EQ(bad.create({{"threads", "-1"}}), nullptr);
  EXPECT_TRUE(contains(bad.error(), "option 'threads'") && contains(bad.error(), "[0, 4096]"))
      << bad.error();
  LoadedPlugin unknown(DLRT_PLUGIN_FILE);
  EXPECT_EQ(unknown.create({{"thread", "1"}}), nullptr);
  EXPECT_TRUE(contains(unknown.error(), "unknown option 'thread'")) << unknown.error();
}

TEST(CpuPlugin, MemoryInfoIsTheHosts) {
  Cpu c;
  ASSERT_NE(c.dev, nullptr) << c.lib.error();
  uint64_t free_b = 0, total_b = 0;
  EXPECT_OK(c.api().memory_info(c.dev, &free_b, &total_b));
  EXPECT_GT(total_b, 0u);
  EXPECT_GT(free_b, 0u);
  EXPECT_LE(free_b, total_b);
  EXPECT_EQ(total_b, c.desc().memory_total);
}

TEST(CpuPlugin, AllocationIsAligned) {
  Cpu c;
  ASSERT_NE(c.dev, nullptr) << c.lib.error();
  for (size_t align : {1, 16, 64, 128, 4096}) {
    for (size_t bytes : {1, 100, 1 << 20}) {
      void* p = nullptr;
      ASSERT_OK(c.api().mem_alloc(c.dev, bytes, align, &p));
      const size_t want = align < 64 ? 64 : align;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % want, 0u) << bytes << " @ " << align;
      c.api().mem_free(c.dev, p);
    }
  }
  void* p = reinterpret_cast<void*>(0x1);
  auto [code, msg] = take_status(c.api().mem_alloc(c.dev, 64, 48, &p));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(p, nullptr);
  EXPECT_TRUE(contains(msg, "power of two")) << msg;
  std::tie(code, msg) = take_status(c.api().mem_alloc(c.dev, SIZE_MAX / 2, 64, &p));
  EXPECT_EQ(code, DLRT_RESOURCE_EXHAUSTED) << msg;
  EXPECT_TRUE(contains(msg, "cannot allocate")) << msg;
}

TEST(CpuPlugin, CopiesAndMemsetRoundTrip) {
  Cpu c;
  ASSERT_NE(c.dev, nullptr) << c.lib.error();
  dlrt_stream* s = nullptr;
  ASSERT_OK(c.api().stream_create(c.dev, &s));
  for (dlrt_stream* stream : {static_cast<dlrt_stream*>(nullptr), s}) {
    std::vector<int32_t> host(4096), back(4096, -1);
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<int32_t>(i * 7);
    const size_t bytes = host.size() * sizeof(int32_t);
    void* a = nullptr;
    void* b = nullptr;
    ASSERT_OK(c.api().mem_alloc(c.dev, bytes, 64, &a));
    ASSERT_OK(c.api().mem_alloc(c.dev, bytes, 64, &b));
    EXPECT_OK(c.api().memcpy_h2d(c.dev, a, host.data(), bytes, stream));
    EXPECT_OK(c.api().memcpy_d2d(c.dev, b, a, bytes, stream));
    EXPECT_OK(c.api().memset(c.dev, a, 0, bytes, stream));
    EXPECT_OK(c.api().memcpy_d2h(c.dev, back.data(), b, bytes, stream));
    if (stream != nullptr) EXPECT_OK(c.api().stream_synchronize(stream));
    EXPECT_EQ(host, back);
    EXPECT_OK(c.api().memcpy_d2h(c.dev, back.data(), a, bytes, stream));
    EXPECT_EQ(back, std::vector<int32_t>(host.size(), 0));
    c.api().mem_free(c.dev, a);
    c.api().mem_free(c.dev, b);
  }
  auto [code, msg] = take_status(c.api().memcpy_h2d(c.dev, nullptr, nullptr, 8, nullptr));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "memcpy_h2d")) << msg;
  c.api().stream_destroy(s);
}

TEST(CpuPlugin, StreamsAndEvents) {
  Cpu c;
  ASSERT_NE(c.dev, nullptr) << c.lib.error();
  dlrt_stream* s1 = nullptr;
  dlrt_stream* s2 = nullptr;
  dlrt_event* e = nullptr;
  ASSERT_OK(c.api().stream_create(c.dev, &s1));
  ASSERT_OK(c.api().stream_create(c.dev, &s2));
  ASSERT_OK(c.api().event_create(c.dev, &e));
  EXPECT_OK(c.api().event_synchronize(e));
  EXPECT_OK(c.api().event_record(e, s1));
  EXPECT_OK(c.api().stream_wait_event(s2, e));
  EXPECT_OK(c.api().event_synchronize(e));
  EXPECT_OK(c.api().stream_synchronize(s2));
  c.api().event_destroy(e);
  c.api().stream_destroy(s1);
  c.api().stream_destroy(s2);
}

TEST(CpuPlugin, OpsWithoutAKernelRowAreUnimplemented) {
  Cpu c;
  ASSERT_NE(c.dev, nullptr) << c.lib.error();
  dlrt_op_desc op{};
  op.struct_size = sizeof(op);
  op.op = "no_such_op";
  auto [code, msg] = take_status(c.api().op_supported(c.inst, 0, &op, nullptr));
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED);
  EXPECT_TRUE(contains(msg, "no oneDNN kernel for op 'no_such_op' yet")) << msg;
  dlrt_kernel* k = reinterpret_cast<dlrt_kernel*>(0x1);
  size_t ws = 5;
  std::tie(code, msg) = take_status(c.api().kernel_create(c.dev, &op, &k, &ws));
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED);
  EXPECT_EQ(k, nullptr);
  EXPECT_EQ(ws, 0u);
  std::tie(code, msg) = take_status(c.api().op_supported(c.inst, 0, nullptr, nullptr));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT) << msg;
}

}  // namespace
