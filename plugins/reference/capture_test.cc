// capture_test.cc: the reference plugin's capture test double (capture.cc) at device level,
// through its C table and the fake host: off unless option capture=1; while capturing nothing
// runs and synchronising is refused; a launch replays the recorded work with the arguments
// frozen at enqueue time but the memory contents of launch time; random ops read the offset
// through rng_offset_device when they execute; a 1.0 host is not offered the table.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "philox.hpp"
#include "testing/fake_host.hpp"
#include "testing/status_checks.hpp"

namespace {

using dlrt::testing::LoadedPlugin;
using dlrt::testing::take_status;
using Opts = std::map<std::string, std::string>;

using dlrt::testing::contains;

// One plugin instance, device `ordinal` opened, one stream on it; frees what it allocated.
struct Dev {
  explicit Dev(const Opts& options) : lib(DLRT_PLUGIN_FILE) {
    if (!lib.ok()) return;
    inst = lib.create(options);
    if (inst == nullptr) return;
    take_status(api().device_open(inst, 0, &device));
    if (device != nullptr) take_status(api().stream_create(device, &stream));
  }
  ~Dev() {
    for (dlrt_kernel* k : kernels) api().kernel_destroy(k);
    for (void* p : blocks) api().mem_free(device, p);
    if (stream != nullptr) api().stream_destroy(stream);
    if (device != nullptr) api().device_close(device);
  }
  const dlrt_plugin_api& api() const { return lib.api(); }
  const dlrt_capture_api& cap() const { return *lib.api().capture; }
  void* alloc(size_t bytes) {
    void* p = nullptr;
    take_status(api().mem_alloc(device, bytes, 64, &p));
    blocks.push_back(p);
    return p;
  }
  dlrt_kernel* kernel(const dlrt_op_desc& desc) {
    dlrt_kernel* k = nullptr;
    size_t ws = 0;
    auto [code, msg] = take_status(api().kernel_create(device, &desc, &k, &ws));
    EXPECT_EQ(code, DLRT_OK) << msg;
    if (k != nullptr) kernels.push_back(k);
    return k;
  }
  std::vector<float> read(const void* p, size_t n) {
    std::vector<float> v(n);
    auto [code, msg] =
        take_status(api().memcpy_d2h(device, v.data(), p, n * sizeof(float), nullptr));
    EXPECT_EQ(code, DLRT_OK) << msg;
    return v;
  }

  LoadedPlugin lib;
  dlrt_plugin* inst = nullptr;
  dlrt_device* device = nullptr;
  dlrt_stream* stream = nullptr;
  std::vector<dlrt_kernel*> kernels;
  std::vector<void*> blocks;
};

// An op descriptor with its storage: f32 dense operands of the given shapes, attributes.
struct Op {
  Op(const char* name, const std::vector<std::vector<int64_t>>& in,
     const std::vector<std::vector<int64_t>>& out) {
    for (const auto& dims : in) descs_in.push_back(tensor(dims));
    for (const auto& dims : out) descs_out.push_back(tensor(dims));
    for (auto& d : descs_in) ins.push_back(&d);
    for (auto& d : descs_out) outs.push_back(&d);
    desc.struct_size = sizeof(desc);
    desc.op = name;
    desc.num_inputs = ins.size();
    desc.inputs = ins.data();
    desc.num_outputs = outs.size();
    desc.outputs = outs.data();
  }
  static dlrt_tensor_desc tensor(const std::vector<int64_t>& dims) {
    dlrt_tensor_desc t{};
    t.struct_size = sizeof(t);
    t.dtype = DLRT_F32;
    t.rank = static_cast<int32_t>(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i];
    t.layout = DLRT_LAYOUT_DENSE;
    return t;
  }
  void attr(const char* name, dlrt_attr_type type, int64_t i, double f = 0) {
    dlrt_attr a{};
    a.struct_size = sizeof(a);
    a.name = name;
    a.type = type;
    a.i = i;
    a.f = f;
    attrs.push_back(a);
  }
  void ints(const char* name, const std::vector<int64_t>* values) {
    dlrt_attr a{};
    a.struct_size = sizeof(a);
    a.name = name;
    a.type = DLRT_ATTR_INTS;
    a.ints = values->data();
    a.count = values->size();
    attrs.push_back(a);
  }
  const dlrt_op_desc& finish() {
    for (auto& a : attrs) attr_ptrs.push_back(&a);
    desc.num_attrs = attr_ptrs.size();
    desc.attrs = attr_ptrs.data();
    return desc;
  }
  std::vector<dlrt_tensor_desc> descs_in, descs_out;
  std::vector<const dlrt_tensor_desc*> ins, outs;
  std::vector<dlrt_attr> attrs;
  std::vector<const dlrt_attr*> attr_ptrs;
  dlrt_op_desc desc{};
};

TEST(ReferenceCapture, OffByDefaultAndSaysHowToTurnItOn) {
  Dev d(Opts{});
  ASSERT_NE(d.stream, nullptr) << d.lib.error();
  ASSERT_NE(d.api().capture, nullptr);  // the table is per library; the option per instance
  auto [code, msg] = take_status(d.cap().capture_begin(d.stream));
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED);
  EXPECT_TRUE(contains(msg, "capture=1")) << msg;
  // Not capturing, so the stream still synchronises and runs work at once.
  ASSERT_OK(d.api().stream_synchronize(d.stream));

  LoadedPlugin lib(DLRT_PLUGIN_FILE);
  EXPECT_EQ(lib.create({{"capture", "2"}}), nullptr);
  EXPECT_TRUE(contains(lib.error(), "option 'capture' is '2'")) << lib.error();
}

// What CUDA Graphs do with a copy-kernel-copy sequence: record without running, replay the
// same pointers with the frozen arguments, read memory as it is at launch time.
TEST(ReferenceCapture, RecordsWithoutRunningAndReplaysFrozenArguments) {
  Dev d(Opts{{"capture", "1"}});
  ASSERT_NE(d.stream, nullptr) << d.lib.error();
  Op relu_op("relu", {{4}}, {{4}});
  dlrt_kernel* relu = d.kernel(relu_op.finish());
  ASSERT_NE(relu, nullptr);
  void* dx = d.alloc(16);
  void* dy = d.alloc(16);
  void* other = d.alloc(16);
  std::vector<float> host_x = {-1.f, 2.f, -3.f, 4.f};
  std::vector<float> host_y(4, 9.f);
  ASSERT_OK(d.api().memset(d.device, dy, 0, 16, nullptr));

  ASSERT_OK(d.cap().capture_begin(d.stream));
  auto [code, msg] = take_status(d.cap().capture_begin(d.stream));
  EXPECT_EQ(code, DLRT_FAILED_PRECONDITION);
  EXPECT_TRUE(contains(msg, "already capturing")) << msg;
  ASSERT_OK(d.api().memcpy_h2d(d.device, dx, host_x.data(), 16, d.stream));
  const void* ins[] = {dx};
  void* outs[] = {dy};
  dlrt_kernel_args args{};
  args.struct_size = sizeof(args);
  args.num_inputs = 1;
  args.inputs = ins;
  args.num_outputs = 1;
  args.outputs = outs;
  ASSERT_OK(d.api().kernel_run(relu, d.stream, &args));
  ASSERT_OK(d.api().memcpy_d2h(d.device, host_y.data(), dy, 16, d.stream));
  // Nothing ran: y is still zero on the device, the host buffer untouched.
  EXPECT_EQ(d.read(dy, 4), std::vector<float>(4, 0.f));
  EXPECT_EQ(host_y, std::vector<float>(4, 9.f));
  std::tie(code, msg) = take_status(d.api().stream_synchronize(d.stream));
  EXPECT_EQ(code, DLRT_FAILED_PRECONDITION);
  EXPECT_TRUE(contains(msg, "capturing")) << msg;

  dlrt_graph_exec* g = nullptr;
  ASSERT_OK(d.cap().capture_end(d.stream, &g));
  ASSERT_NE(g, nullptr);
  dlrt_graph_exec* none = reinterpret_cast<dlrt_graph_exec*>(0x1);
  std::tie(code, msg) = take_status(d.cap().capture_end(d.stream, &none));
  EXPECT_EQ(code, DLRT_FAILED_PRECONDITION);
  EXPECT_TRUE(contains(msg, "not capturing")) << msg;
  EXPECT_EQ(none, nullptr);                         // out-parameters are cleared on entry
  ASSERT_OK(d.api().stream_synchronize(d.stream));  // capture over: synchronising is fine

  ASSERT_OK(d.cap().graph_launch(g, d.stream));
  EXPECT_EQ(host_y, (std::vector<float>{0.f, 2.f, 0.f, 4.f}));
  // The host's source buffer is read at launch time; the kernel's operands stay the captured
  // ones even though the caller's args now point elsewhere (arguments are frozen).
  host_x = {5.f, -6.f, 7.f, -8.f};
  outs[0] = other;
  args.num_inputs = 0;
  ASSERT_OK(d.cap().graph_launch(g, d.stream));
  EXPECT_EQ(host_y, (std::vector<float>{5.f, 0.f, 7.f, 0.f}));
  EXPECT_EQ(d.read(dy, 4), (std::vector<float>{5.f, 0.f, 7.f, 0.f}));
  ASSERT_OK(d.api().stream_synchronize(d.stream));
  d.cap().graph_destroy(g);
}

// The reason rng_offset_device exists: the offset in the frozen args stays what it was at
// capture, the one in device memory is read at every launch.
TEST(ReferenceCapture, RandomOpsReadTheOffsetWhenTheyExecute) {
  Dev d(Opts{{"capture", "1"}});
  ASSERT_NE(d.stream, nullptr) << d.lib.error();
  const std::vector<int64_t> shape = {6};
  Op uniform("random_uniform", {}, {shape});
  uniform.attr("dtype", DLRT_ATTR_DTYPE, DLRT_F32);
  uniform.ints("shape", &shape);
  uniform.attr("seed", DLRT_ATTR_INT, 42);
  uniform.attr("minval", DLRT_ATTR_FLOAT, 0, 0.0);
  uniform.attr("maxval", DLRT_ATTR_FLOAT, 0, 1.0);
  dlrt_kernel* k = d.kernel(uniform.finish());
  ASSERT_NE(k, nullptr);
  void* dy = d.alloc(6 * sizeof(float));
  auto* offset = static_cast<uint64_t*>(d.alloc(sizeof(uint64_t)));
  auto expected = [](uint64_t off) {
    std::vector<float> v;
    for (uint64_t i = 0; i < 6; ++i)
      v.push_back(static_cast<float>(dlrt::philox::uniform(42, off, i)));
    return v;
  };

  void* outs[] = {dy};
  dlrt_kernel_args args{};
  args.struct_size = sizeof(args);
  args.num_outputs = 1;
  args.outputs = outs;
  args.rng_offset = 1;  // frozen at capture: must not matter
  args.rng_offset_device = offset;
  ASSERT_OK(d.cap().capture_begin(d.stream));
  ASSERT_OK(d.api().kernel_run(k, d.stream, &args));
  dlrt_graph_exec* g = nullptr;
  ASSERT_OK(d.cap().capture_end(d.stream, &g));
  for (uint64_t run : {1u, 2u, 3u, 7u}) {
    ASSERT_OK(d.api().memcpy_h2d(d.device, offset, &run, sizeof run, d.stream));
    ASSERT_OK(d.cap().graph_launch(g, d.stream));
    EXPECT_EQ(d.read(dy, 6), expected(run)) << "replay with offset " << run;
  }
  EXPECT_NE(expected(2), expected(3));
  d.cap().graph_destroy(g);

  // Uncaptured: the pointer still wins over rng_offset; NULL means rng_offset.
  const uint64_t five = 5;
  ASSERT_OK(d.api().memcpy_h2d(d.device, offset, &five, sizeof five, nullptr));
  ASSERT_OK(d.api().kernel_run(k, d.stream, &args));
  EXPECT_EQ(d.read(dy, 6), expected(5));
  args.rng_offset_device = nullptr;
  ASSERT_OK(d.api().kernel_run(k, d.stream, &args));
  EXPECT_EQ(d.read(dy, 6), expected(1));
  // A pointer that is not this device's memory is caught at enqueue.
  uint64_t on_host = 3;
  args.rng_offset_device = &on_host;
  auto [code, msg] = take_status(d.api().kernel_run(k, d.stream, &args));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "rng_offset_device")) << msg;
  // A 1.0 host's args (no such field) draw with rng_offset.
  args.rng_offset_device = offset;
  args.struct_size = offsetof(dlrt_kernel_args, rng_offset_device);
  ASSERT_OK(d.api().kernel_run(k, d.stream, &args));
  EXPECT_EQ(d.read(dy, 6), expected(1));
}

TEST(ReferenceCapture, GraphsReplayOnlyOnTheirDevice) {
  Dev d(Opts{{"capture", "1"}, {"num_devices", "2"}});
  ASSERT_NE(d.stream, nullptr) << d.lib.error();
  dlrt_device* d1 = nullptr;
  ASSERT_OK(d.api().device_open(d.inst, 1, &d1));
  dlrt_stream* s1 = nullptr;
  ASSERT_OK(d.api().stream_create(d1, &s1));
  ASSERT_OK(d.cap().capture_begin(d.stream));
  dlrt_graph_exec* g = nullptr;
  ASSERT_OK(d.cap().capture_end(d.stream, &g));
  auto [code, msg] = take_status(d.cap().graph_launch(g, s1));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "captured on REF:0")) << msg;
  d.cap().graph_destroy(g);
  d.api().stream_destroy(s1);
  d.api().device_close(d1);
}

// A host of ABI 1.0 would take capture_begin's UNIMPLEMENTED as a failed run: it gets no table.
TEST(ReferenceCapture, NoTableForAHostOlderThan1_1) {
  static const dlrt_host_api old_host = {sizeof(dlrt_host_api),
                                         DLRT_ABI_MAJOR,
                                         0,
                                         &dlrt::testing::fake_status_create,
                                         &dlrt::testing::fake_status_free,
                                         &dlrt::testing::fake_log};
  LoadedPlugin lib(DLRT_PLUGIN_FILE);  // initialises the library for the fake 1.1 host
  ASSERT_TRUE(lib.ok()) << lib.error();
  EXPECT_NE(lib.api().capture, nullptr);
  auto init = reinterpret_cast<dlrt_plugin_init_fn>(
      dlsym(dlopen(DLRT_PLUGIN_FILE, RTLD_NOW | RTLD_LOCAL), DLRT_PLUGIN_INIT_SYMBOL));
  ASSERT_NE(init, nullptr);
  dlrt_plugin_api api{};
  api.struct_size = sizeof(api);
  ASSERT_OK(init(&old_host, &api));
  EXPECT_EQ(api.capture, nullptr);
  ASSERT_OK(init(dlrt::testing::fake_host(), &api));  // give the library its host back
}

}  // namespace
