// reference_test.cc: the reference plugin at device level, driven through its C table by the
// fake host: options (and DLRT_REFERENCE_OPTIONS), device descriptions, memory accounting and
// its limit, its own checks on copies and streams/events (the round trips, alignment and
// event ordering are the shared device-services suite, instantiated at the end), and the op-subset answers placement tests rely on.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "testing/device_services_suite.hpp"
#include "testing/fake_host.hpp"
#include "testing/status_checks.hpp"

namespace {

using dlrt::testing::LoadedPlugin;
using dlrt::testing::take_status;
using Opts = std::map<std::string, std::string>;

using dlrt::testing::contains;

// One plugin instance plus an opened device 0.
struct Ref {
  explicit Ref(const Opts& options = {}) : lib(DLRT_PLUGIN_FILE) {
    if (!lib.ok()) return;
    inst = lib.create(options);
  }
  ~Ref() {
    for (dlrt_device* d : opened) api().device_close(d);
  }
  const dlrt_plugin_api& api() const { return lib.api(); }
  dlrt_device* open(int32_t ordinal = 0) {
    dlrt_device* d = nullptr;
    auto [c, m] = take_status(api().device_open(inst, ordinal, &d));
    EXPECT_EQ(c, DLRT_OK) << m;
    if (d != nullptr) opened.push_back(d);
    return d;
  }
  dlrt_device_desc desc(int32_t ordinal) {
    dlrt_device_desc d{};
    d.struct_size = sizeof(d);
    auto [c, m] = take_status(api().device_get_desc(inst, ordinal, &d));
    EXPECT_EQ(c, DLRT_OK) << m;
    return d;
  }
  std::string attr(const dlrt_device_desc& d, const std::string& name) {
    for (size_t i = 0; i < d.num_attrs; ++i)
      if (name == d.attrs[i]->name && d.attrs[i]->type == DLRT_ATTR_STRING) return d.attrs[i]->s;
    return "<missing>";
  }

  LoadedPlugin lib;
  dlrt_plugin* inst = nullptr;
  std::vector<dlrt_device*> opened;
};

// The error plugin_create gives for `options` (empty if it succeeded).
std::string create_error(const Opts& options) {
  LoadedPlugin lib(DLRT_PLUGIN_FILE);
  EXPECT_TRUE(lib.ok()) << lib.error();
  if (lib.create(options) != nullptr) return "";
  return lib.error();
}

TEST(ReferencePlugin, LoadsAsReference) {
  LoadedPlugin lib(DLRT_PLUGIN_FILE);
  ASSERT_TRUE(lib.ok()) << lib.error();
  EXPECT_STREQ(lib.api().name, "reference");
  EXPECT_STREQ(lib.api().platform, "reference");
  // The capture test double (capture_test.cc), off unless an instance asks for it.
  EXPECT_NE(lib.api().capture, nullptr);
  EXPECT_NE(lib.api().collectives, nullptr);  // the NCCL double (collectives_test.cc)
}

TEST(ReferencePlugin, DefaultIsOneRefCpuDevice) {
  Ref r;
  ASSERT_NE(r.inst, nullptr) << r.lib.error();
  int32_t n = -1;
  EXPECT_OK(r.api().device_count(r.inst, &n));
  EXPECT_EQ(n, 1);
  dlrt_device_desc d = r.desc(0);
  EXPECT_EQ(d.struct_size, sizeof(dlrt_device_desc));
  EXPECT_EQ(d.device_class, DLRT_DEVICE_CLASS_CPU);
  EXPECT_EQ(d.ordinal, 0);
  EXPECT_STREQ(d.type, "REF");
  EXPECT_STREQ(d.name, "dlrt reference device");
  EXPECT_STREQ(d.vendor, "dlrt");
  EXPECT_STREQ(d.library_versions, "");
  EXPECT_EQ(d.core_count, 1);
  EXPECT_GT(d.memory_total, 0u);  // the host's memory
  EXPECT_EQ(r.attr(d, "device_class"), "cpu");
  EXPECT_EQ(r.attr(d, "ops"), "all");
  EXPECT_EQ(r.attr(d, "execution"), "synchronous");
  EXPECT_EQ(r.attr(d, "native_dtypes"), "f32,f64");
  EXPECT_EQ(r.attr(d, "converted_dtypes"), "f16,bf16");
}

TEST(ReferencePlugin, NumDevicesTypeAndClassOptions) {
  Ref r(Opts{{"num_devices", "3"}, {"device_type", "GPU"}, {"device_class", "gpu"}});
  ASSERT_NE(r.inst, nullptr) << r.lib.error();
  int32_t n = 0;
  EXPECT_OK(r.api().device_count(r.inst, &n));
  ASSERT_EQ(n, 3);
  for (int32_t i = 0; i < n; ++i) {
    dlrt_device_desc d = r.desc(i);
    EXPECT_EQ(d.ordinal, i);
    EXPECT_STREQ(d.type, "GPU");
    EXPECT_EQ(d.device_class, DLRT_DEVICE_CLASS_GPU);
  }
  dlrt_device_desc d{};
  d.struct_size = sizeof(d);
  auto [code, msg] = take_status(r.api().device_get_desc(r.inst, 3, &d));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "ordinal 3")) << msg;
  Ref accel(Opts{{"device_class", "accel"}});
  ASSERT_NE(accel.inst, nullptr) << accel.lib.error();
  EXPECT_EQ(accel.desc(0).device_class, DLRT_DEVICE_CLASS_ACCEL);
}

TEST(ReferencePlugin, DescRespectsAShorterHostStruct) {
  Ref r;
  ASSERT_NE(r.inst, nullptr) << r.lib.error();
  // A host built against an older minor knows fewer fields: nothing past its size is written.
  dlrt_device_desc d;
  std::memset(&d, 0xAB, sizeof(d));
  d.struct_size = offsetof(dlrt_device_desc, name);
  EXPECT_OK(r.api().device_get_desc(r.inst, 0, &d));
  EXPECT_EQ(d.struct_size, offsetof(dlrt_device_desc, name));
  EXPECT_STREQ(d.type, "REF");
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(&d);
  EXPECT_EQ(bytes[offsetof(dlrt_device_desc, name)], 0xAB);
}

TEST(ReferencePlugin, UnknownOptionIsRejectedByName) {
  std::string e = create_error({{"num_devicez", "2"}});
  EXPECT_TRUE(contains(e, "unknown option 'num_devicez'")) << e;
  EXPECT_TRUE(contains(e, "num_devices")) << "should list the accepted keys: " << e;
}

TEST(ReferencePlugin, BadValuesAreRejectedWithWhatWasExpected) {
  for (const char* v : {"0", "65", "two", ""}) {
    std::string e = create_error({{"num_devices", v}});
    EXPECT_TRUE(contains(e, "option 'num_devices'")) << v << ": " << e;
    EXPECT_TRUE(contains(e, "[1, 64]")) << v << ": " << e;
  }
  std::string e = create_error({{"device_class", "tpu"}});
  EXPECT_TRUE(contains(e, "'tpu'") && contains(e, "cpu, gpu, accel")) << e;
  e = create_error({{"device_type", "G/PU"}});
  EXPECT_TRUE(contains(e, "device_type")) << e;
  e = create_error({{"memory_mb", "-5"}});
  EXPECT_TRUE(contains(e, "memory_mb")) << e;
}

// Sets DLRT_REFERENCE_OPTIONS for one scope.
struct ScopedEnv {
  explicit ScopedEnv(const char* value) { setenv("DLRT_REFERENCE_OPTIONS", value, 1); }
  ~ScopedEnv() { unsetenv("DLRT_REFERENCE_OPTIONS"); }
};

TEST(ReferencePlugin, EnvironmentOptionsFillWhatTheApiDidNotGive) {
  ScopedEnv env(" num_devices = 2 ; device_type=GPU;;");
  Ref r(Opts{{"num_devices", "4"}});  // the API wins for num_devices
  ASSERT_NE(r.inst, nullptr) << r.lib.error();
  int32_t n = 0;
  EXPECT_OK(r.api().device_count(r.inst, &n));
  EXPECT_EQ(n, 4);
  EXPECT_STREQ(r.desc(0).type, "GPU");  // from the environment
}

TEST(ReferencePlugin, EnvironmentErrorsNameTheVariable) {
  {
    ScopedEnv env("bogus=1");
    std::string e = create_error({});
    EXPECT_TRUE(contains(e, "unknown option 'bogus'") && contains(e, "DLRT_REFERENCE_OPTIONS"))
        << e;
  }
  {
    ScopedEnv env("num_devices");
    std::string e = create_error({});
    EXPECT_TRUE(contains(e, "not key=value") && contains(e, "DLRT_REFERENCE_OPTIONS")) << e;
  }
  {
    ScopedEnv env("num_devices=100");
    std::string e = create_error({});
    EXPECT_TRUE(contains(e, "num_devices") && contains(e, "DLRT_REFERENCE_OPTIONS")) << e;
  }
}

TEST(ReferencePlugin, MemoryLimitIsEnforcedPerDevice) {
  Ref r(Opts{{"memory_mb", "1"}, {"num_devices", "2"}});
  ASSERT_NE(r.inst, nullptr) << r.lib.error();
  EXPECT_EQ(r.desc(0).memory_total, 1u << 20);
  dlrt_device* d0 = r.open(0);
  dlrt_device* d1 = r.open(1);
  ASSERT_NE(d0, nullptr);
  ASSERT_NE(d1, nullptr);

  void* p = reinterpret_cast<void*>(0x1);
  auto [code, msg] = take_status(r.api().mem_alloc(d0, 2u << 20, 64, &p));
  EXPECT_EQ(code, DLRT_RESOURCE_EXHAUSTED);
  EXPECT_EQ(p, nullptr) << "out_ptr must be NULL after a failed alloc";
  EXPECT_TRUE(contains(msg, "REF:0")) << msg;
  EXPECT_TRUE(contains(msg, "2097152 bytes")) << msg;
  EXPECT_TRUE(contains(msg, "0 bytes in use")) << msg;
  EXPECT_TRUE(contains(msg, "limit of 1048576 bytes")) << msg;
  EXPECT_TRUE(contains(msg, "memory_mb=1")) << msg;

  void* a = nullptr;
  void* b = nullptr;
  ASSERT_OK(r.api().mem_alloc(d0, 512u << 10, 64, &a));
  ASSERT_OK(r.api().mem_alloc(d0, 512u << 10, 64, &b));  // exactly the limit
  uint64_t free_b = 1, total_b = 0;
  EXPECT_OK(r.api().memory_info(d0, &free_b, &total_b));
  EXPECT_EQ(free_b, 0u);
  EXPECT_EQ(total_b, 1u << 20);

  void* c = nullptr;
  std::tie(code, msg) = take_status(r.api().mem_alloc(d0, 1, 64, &c));
  EXPECT_EQ(code, DLRT_RESOURCE_EXHAUSTED);
  EXPECT_TRUE(contains(msg, "1048576 bytes in use")) << msg;

  // The other device has its own budget; a second handle to device 0 shares device 0's.
  ASSERT_OK(r.api().mem_alloc(d1, 1, 64, &c));
  dlrt_device* d0b = r.open(0);
  void* e = nullptr;
  std::tie(code, msg) = take_status(r.api().mem_alloc(d0b, 1, 64, &e));
  EXPECT_EQ(code, DLRT_RESOURCE_EXHAUSTED) << msg;

  r.api().mem_free(d0, a);
  EXPECT_OK(r.api().memory_info(d0, &free_b, &total_b));
  EXPECT_EQ(free_b, 512u << 10);
  ASSERT_OK(r.api().mem_alloc(d0, 1000, 64, &a));  // a smaller request now fits
  r.api().mem_free(d0, a);
  r.api().mem_free(d0, b);
  r.api().mem_free(d1, c);
}

// Alignment itself, copies, memset, streams and events: the shared device-services suite
// (instantiated at the end). Here the reference plugin's own argument checks.
TEST(ReferencePlugin, AllocationArgumentsAreChecked) {
  Ref r;
  dlrt_device* d = r.open();
  ASSERT_NE(d, nullptr);
  for (size_t align : {0, 3, 8192}) {
    void* p = nullptr;
    auto [code, msg] = take_status(r.api().mem_alloc(d, 100, align, &p));
    EXPECT_EQ(code, DLRT_INVALID_ARGUMENT) << align;
    EXPECT_TRUE(contains(msg, "power of two")) << msg;
  }
  void* p = nullptr;
  auto [code, msg] = take_status(r.api().mem_alloc(d, 0, 64, &p));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "0 bytes")) << msg;
}

TEST(ReferencePlugin, CopiesRejectPointersThatAreNotDeviceMemory) {
  Ref r;
  dlrt_device* d = r.open();
  ASSERT_NE(d, nullptr);
  void* a = nullptr;
  ASSERT_OK(r.api().mem_alloc(d, 64, 64, &a));
  char host[128] = {};
  auto [code, msg] = take_status(r.api().memcpy_h2d(d, host, host, 16, nullptr));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "memcpy_h2d dst") && contains(msg, "REF:0")) << msg;
  std::tie(code, msg) = take_status(r.api().memcpy_h2d(d, a, host, 128, nullptr));
  EXPECT_EQ(code, DLRT_OUT_OF_RANGE);
  EXPECT_TRUE(contains(msg, "runs past the end")) << msg;
  std::tie(code, msg) = take_status(r.api().memset(d, a, 300, 4, nullptr));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "0..255")) << msg;
  r.api().mem_free(d, a);
  r.api().mem_free(d, a);  // double free: logged, ignored, no crash
  std::tie(code, msg) = take_status(r.api().memcpy_d2h(d, host, a, 16, nullptr));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT) << "use after free must be caught: " << msg;
}

// Copies between two devices of one instance work (the shared suite); the destination must
// still be the copy's own device.
TEST(ReferencePlugin, CopiesBetweenDevicesNeedTheirOwnDestination) {
  Ref r(Opts{{"num_devices", "2"}});
  dlrt_device* d0 = r.open(0);
  dlrt_device* d1 = r.open(1);
  ASSERT_NE(d1, nullptr);
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_OK(r.api().mem_alloc(d0, 16, 64, &a));
  ASSERT_OK(r.api().mem_alloc(d1, 16, 64, &b));
  auto [code, msg] = take_status(r.api().memcpy_d2d(d1, a, b, 16, nullptr));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "memcpy_d2d dst") && contains(msg, "REF:1")) << msg;
  r.api().mem_free(d0, a);
  r.api().mem_free(d1, b);
}

// Ordering across streams is the shared suite's; here the reference plugin's cross-device
// rules for streams and events.
TEST(ReferencePlugin, StreamsAndEventsAcrossDevices) {
  Ref r(Opts{{"num_devices", "2"}});
  dlrt_device* d0 = r.open(0);
  dlrt_device* d1 = r.open(1);
  ASSERT_NE(d1, nullptr);
  dlrt_stream* s0 = nullptr;
  dlrt_stream* s1 = nullptr;
  dlrt_event* e0 = nullptr;
  ASSERT_OK(r.api().stream_create(d0, &s0));
  ASSERT_OK(r.api().stream_create(d1, &s1));
  ASSERT_OK(r.api().event_create(d0, &e0));
  EXPECT_OK(r.api().event_synchronize(e0));  // never recorded: complete
  EXPECT_OK(r.api().event_record(e0, s0));
  EXPECT_OK(r.api().stream_wait_event(s1, e0));  // cross-device wait within the plugin
  EXPECT_OK(r.api().event_synchronize(e0));
  EXPECT_OK(r.api().stream_synchronize(s0));

  auto [code, msg] = take_status(r.api().event_record(e0, s1));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "REF:1") && contains(msg, "REF:0")) << msg;
  void* a = nullptr;
  ASSERT_OK(r.api().mem_alloc(d0, 64, 64, &a));
  char host[64] = {};
  std::tie(code, msg) = take_status(r.api().memcpy_h2d(d0, a, host, 64, s1));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT) << "a stream of another device: " << msg;
  r.api().mem_free(d0, a);

  dlrt_stream* out = reinterpret_cast<dlrt_stream*>(0x1);
  std::tie(code, msg) = take_status(r.api().stream_create(nullptr, &out));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  r.api().event_destroy(e0);
  r.api().stream_destroy(s0);
  r.api().stream_destroy(s1);
}

dlrt_op_desc op_named(const char* name) {
  dlrt_op_desc op{};
  op.struct_size = sizeof(op);
  op.op = name;
  return op;
}

// An elementwise op over f32 tensors of shape `dims`: `n_in` inputs, one output.
struct ElementwiseOp {
  ElementwiseOp(const char* name, size_t n_in, std::vector<int64_t> dims) {
    t.struct_size = sizeof(t);
    t.dtype = DLRT_F32;
    t.rank = static_cast<int32_t>(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i];
    t.layout = DLRT_LAYOUT_DENSE;
    ins.assign(n_in, &t);
    outs.assign(1, &t);
    desc = op_named(name);
    desc.num_inputs = ins.size();
    desc.inputs = ins.data();
    desc.num_outputs = 1;
    desc.outputs = outs.data();
  }
  dlrt_tensor_desc t{};
  std::vector<const dlrt_tensor_desc*> ins, outs;
  dlrt_op_desc desc{};
};

TEST(ReferencePlugin, OpsSubsetIsAnsweredFirst) {
  Ref r(Opts{{"num_devices", "2"}, {"ops", "matmul, add"}});
  ASSERT_NE(r.inst, nullptr) << r.lib.error();
  EXPECT_EQ(r.attr(r.desc(0), "ops"), "{add, matmul}");
  ElementwiseOp relu("relu", 1, {2, 3});
  auto [code, msg] = take_status(r.api().op_supported(r.inst, 1, &relu.desc, nullptr));
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED);
  EXPECT_TRUE(contains(msg, "reference device REF:1 is restricted to ops {add, matmul}")) << msg;
  EXPECT_TRUE(contains(msg, "'relu'")) << msg;

  // Inside the subset, the answer is the kernels': yes, with the bytes the op moves.
  ElementwiseOp add("add", 2, {2, 3});
  dlrt_op_cost cost{sizeof(dlrt_op_cost)};
  EXPECT_OK(r.api().op_supported(r.inst, 0, &add.desc, &cost));
  EXPECT_EQ(cost.bytes, 3 * 6 * 4);

  // An empty list restricts to nothing.
  Ref none(Opts{{"ops", ""}});
  std::tie(code, msg) = take_status(none.api().op_supported(none.inst, 0, &add.desc, nullptr));
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED);
  EXPECT_TRUE(contains(msg, "restricted to ops {}")) << msg;
}

TEST(ReferencePlugin, OpQueriesValidateTheirInput) {
  Ref r;
  dlrt_op_desc unknown = op_named("frobnicate");
  auto [code, msg] = take_status(r.api().op_supported(r.inst, 0, &unknown, nullptr));
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED);
  EXPECT_TRUE(contains(msg, "no kernel for op 'frobnicate'")) << msg;
  ElementwiseOp relu("relu", 1, {4});
  std::tie(code, msg) = take_status(r.api().op_supported(r.inst, 5, &relu.desc, nullptr));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "ordinal 5")) << msg;
  dlrt_op_desc nameless = op_named(nullptr);
  std::tie(code, msg) = take_status(r.api().op_supported(r.inst, 0, &nameless, nullptr));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT) << msg;
  ElementwiseOp bad("relu", 1, {4});
  bad.t.rank = 9;
  std::tie(code, msg) = take_status(r.api().op_supported(r.inst, 0, &bad.desc, nullptr));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "input 0 has rank 9")) << msg;

  dlrt_device* d = r.open();
  dlrt_kernel* k = reinterpret_cast<dlrt_kernel*>(0x1);
  size_t ws = 7;
  std::tie(code, msg) = take_status(r.api().kernel_create(d, &unknown, &k, &ws));
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED);
  EXPECT_EQ(k, nullptr);
  EXPECT_EQ(ws, 0u);
}

// The whole device path: copy in, run a kernel on a stream, copy out.
TEST(ReferencePlugin, RunsAKernelOnDeviceMemory) {
  Ref r;
  dlrt_device* d = r.open();
  ASSERT_NE(d, nullptr);
  ElementwiseOp relu("relu", 1, {5});
  dlrt_kernel* k = nullptr;
  size_t ws = 1;
  ASSERT_OK(r.api().kernel_create(d, &relu.desc, &k, &ws));
  EXPECT_EQ(ws, 0u);
  dlrt_stream* s = nullptr;
  ASSERT_OK(r.api().stream_create(d, &s));
  const std::vector<float> x = {-2.f, -0.5f, 0.f, 1.5f, 3.f};
  void* dx = nullptr;
  void* dy = nullptr;
  ASSERT_OK(r.api().mem_alloc(d, sizeof(float) * 5, 64, &dx));
  ASSERT_OK(r.api().mem_alloc(d, sizeof(float) * 5, 64, &dy));
  EXPECT_OK(r.api().memcpy_h2d(d, dx, x.data(), sizeof(float) * 5, s));
  const void* ins[] = {dx};
  void* outs[] = {dy};
  dlrt_kernel_args args{sizeof(dlrt_kernel_args), 1, ins, 1, outs, nullptr, 0, 0};
  EXPECT_OK(r.api().kernel_run(k, s, &args));
  std::vector<float> y(5, -1.f);
  EXPECT_OK(r.api().memcpy_d2h(d, y.data(), dy, sizeof(float) * 5, s));
  EXPECT_EQ(y, (std::vector<float>{0.f, 0.f, 0.f, 1.5f, 3.f}));

  // A host buffer where device memory is expected is caught before the loop runs.
  float host[5];
  void* bad_outs[] = {host};
  args.outputs = bad_outs;
  auto [code, msg] = take_status(r.api().kernel_run(k, s, &args));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "output 0")) << msg;
  args.outputs = outs;
  args.num_inputs = 0;
  std::tie(code, msg) = take_status(r.api().kernel_run(k, s, &args));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "expected 1 and 1")) << msg;

  r.api().kernel_destroy(k);
  r.api().mem_free(d, dx);
  r.api().mem_free(d, dy);
  r.api().stream_destroy(s);
}

TEST(ReferencePlugin, LeftoverAllocationsAreReleasedAtDestroy) {
  // The host should free everything first; if it does not, plugin_destroy frees and warns
  // (run under ASan to see that nothing leaks).
  Ref r;
  dlrt_device* d = r.open();
  void* p = nullptr;
  ASSERT_OK(r.api().mem_alloc(d, 4096, 64, &p));
}

}  // namespace

// The shared device-services suite on two reference devices (so device-to-device copies run).
using dlrt::testing::DeviceServices;
INSTANTIATE_TEST_SUITE_P(reference, DeviceServices,
                         ::testing::Values(dlrt::testing::DeviceServicesTarget{
                             "reference", DLRT_PLUGIN_FILE, {{"num_devices", "2"}}}),
                         [](const auto& info) { return info.param.label; });
