// test_plugin.cc: one small, working plugin, compiled once per loader-test case with a macro
// that breaks it in exactly one way (tests/loader/CMakeLists.txt lists the cases):
//
//   (none)                 good: `devices` host-memory devices (option devices=N, default 2;
//                          type=, class=cpu|gpu|accel, memory_mb=)
//   CASE_WRONG_MAJOR       declares ABI 2.0
//   CASE_OLD_MINOR         declares minor 0 and a struct_size that stops before `capture`,
//                          with junk written past it (the host must read those as absent)
//   CASE_NEW_MINOR         declares 1.7 with a larger table (two extra trailing entries)
//   CASE_NO_ENTRY          exports no dlrt_plugin_init at all
//   CASE_INIT_ERROR        dlrt_plugin_init returns an error
//   CASE_INIT_THROWS       dlrt_plugin_init throws a C++ exception (what plugins must not do)
//   CASE_INIT_SEGFAULT     dlrt_plugin_init dies of SIGSEGV (hostile: for isolation tests)
//   CASE_INIT_ABORT        dlrt_plugin_init calls abort()
//   CASE_INIT_EXIT         dlrt_plugin_init calls exit(3)
//   CASE_INIT_HANG         dlrt_plugin_init never returns
//   CASE_CREATE_FAILS      plugin_create returns INVALID_ARGUMENT
//   CASE_NULL_ENTRY        leaves the required device_open NULL
//   CASE_COUNT_FAILS       device_count returns UNAVAILABLE (like CUDA without a GPU)
//   CASE_MINOR_1           declares minor 1 (built before dlrt_op_desc.op_version existed) and
//                          reads op descriptors only as far as 1.1 laid them out
//   CASE_OP_VERSION        declares the current minor; op_supported declines every op with a
//                          reason that reports the op_version and struct_size it was given
//   CASE_HUGE_MEMORY       hostile for auto placement: GPU-class devices of type GPU that claim
//                          2^62 bytes each and decline every op (placement_auto_test.cc)
//   CASE_RANDOM_1_0        declares minor 0 and runs relu and random_uniform through the ABI
//                          1.0 kernel arguments, with a capture table (random_1_0.hpp)
//
// Devices are plain host memory with synchronous "streams": enough for the loader, registry
// and memory queries, nothing more (no ops: op_supported says UNIMPLEMENTED, except in
// CASE_RANDOM_1_0).
#include <dlrt/plugin.h>
#include <aligned_memory.hpp>
#include <plugin_support.hpp>

#if defined(_WIN32)
#include <windows.h>
#else
#include <unistd.h>
#endif

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef TEST_PLUGIN_NAME
#define TEST_PLUGIN_NAME "loader_good"
#endif

#ifdef CASE_RANDOM_1_0
#include "random_1_0.hpp"
#endif

using dlrt::plugin::Error;
using dlrt::plugin::fail;
using dlrt::plugin::guard;

struct dlrt_plugin {
  int32_t count = 2;
  std::string type = "CPU";
  int32_t device_class = DLRT_DEVICE_CLASS_CPU;
  uint64_t memory_bytes = 64ull << 20;
  std::vector<std::string> names;
  dlrt_attr attr{};  // one attribute per plugin, to test that attrs are copied
  const dlrt_attr* attr_list[1] = {&attr};
};
struct dlrt_device {
  dlrt_plugin* plugin;
  int32_t ordinal;
  std::atomic<uint64_t> used{0};
};
struct dlrt_stream {
  dlrt_device* device;
#ifdef CASE_RANDOM_1_0
  random_1_0::Capture capture;
#endif
};
struct dlrt_event {
  dlrt_device* device;
};

namespace {

dlrt_status* plugin_create(const dlrt_plugin_create_args* args, dlrt_plugin** out) {
  *out = nullptr;
  return guard([&] {
#ifdef CASE_CREATE_FAILS
    fail(DLRT_INVALID_ARGUMENT, "loader_create_fails: this plugin always fails to create");
#endif
    dlrt::plugin::Options o(args, {"devices", "type", "class", "memory_mb"});
    auto p = std::make_unique<dlrt_plugin>();
    p->count = static_cast<int32_t>(o.get_int("devices", 2, 0, 64));
    p->type = o.get("type", "CPU");
    std::string cls = o.get("class", "cpu");
    if (cls == "cpu") p->device_class = DLRT_DEVICE_CLASS_CPU;
    else if (cls == "gpu") p->device_class = DLRT_DEVICE_CLASS_GPU;
    else if (cls == "accel") p->device_class = DLRT_DEVICE_CLASS_ACCEL;
    else fail(DLRT_INVALID_ARGUMENT, "option 'class' is '" + cls + "', expected cpu, gpu or accel");
    p->memory_bytes = static_cast<uint64_t>(o.get_int("memory_mb", 64, 1, 1 << 20)) << 20;
#ifdef CASE_HUGE_MEMORY
    p->type = "GPU";
    p->device_class = DLRT_DEVICE_CLASS_GPU;
    p->memory_bytes = 1ull << 62;
#endif
    for (int32_t i = 0; i < p->count; ++i)
      p->names.push_back(std::string(TEST_PLUGIN_NAME) + " device " + std::to_string(i));
    p->attr.struct_size = sizeof(dlrt_attr);
    p->attr.name = "test_attr";
    p->attr.type = DLRT_ATTR_STRING;
    p->attr.s = "hello";
    *out = p.release();
  });
}

void plugin_destroy(dlrt_plugin* p) { delete p; }

dlrt_status* device_count(dlrt_plugin* p, int32_t* out) {
  *out = 0;
#ifdef CASE_COUNT_FAILS
  (void)p;
  return dlrt::plugin::make_status(DLRT_UNAVAILABLE, "no test hardware in this machine");
#else
  *out = p->count;
  return nullptr;
#endif
}

dlrt_status* device_get_desc(dlrt_plugin* p, int32_t ordinal, dlrt_device_desc* out) {
  return guard([&] {
    if (ordinal < 0 || ordinal >= p->count) fail(DLRT_OUT_OF_RANGE, "no such device");
    dlrt_device_desc d{};
    d.struct_size = sizeof d;
    d.device_class = p->device_class;
    d.ordinal = ordinal;
    d.type = p->type.c_str();
    d.name = p->names[ordinal].c_str();
    d.vendor = "dlrt tests";
    d.core_count = 1;
    d.memory_total = p->memory_bytes;
    d.num_attrs = 1;
    d.attrs = p->attr_list;  // lives until plugin_destroy, as plugin.h requires
    size_t n = out->struct_size < sizeof d ? out->struct_size : sizeof d;
    std::memcpy(reinterpret_cast<char*>(out) + sizeof(size_t),
                reinterpret_cast<const char*>(&d) + sizeof(size_t), n - sizeof(size_t));
  });
}

dlrt_status* device_open(dlrt_plugin* p, int32_t ordinal, dlrt_device** out) {
  *out = nullptr;
  return guard([&] {
    if (ordinal < 0 || ordinal >= p->count) fail(DLRT_OUT_OF_RANGE, "no such device");
    *out = new dlrt_device{p, ordinal};
  });
}
void device_close(dlrt_device* d) { delete d; }

dlrt_status* memory_info(dlrt_device* d, uint64_t* out_free, uint64_t* out_total) {
  *out_total = d->plugin->memory_bytes;
  *out_free = d->plugin->memory_bytes - d->used.load();
  return nullptr;
}
// Each block keeps its size just before the returned pointer (aligned to 4096).
dlrt_status* mem_alloc(dlrt_device* d, size_t bytes, size_t alignment, void** out) {
  *out = nullptr;
  (void)alignment;
  if (d->used.load() + bytes > d->plugin->memory_bytes)
    return dlrt::plugin::make_status(DLRT_RESOURCE_EXHAUSTED, "test device is full");
  void* base = dlrt::plugin::aligned_allocate(4096, 4096 + ((bytes + 4095) / 4096) * 4096);
  if (base == nullptr) return dlrt::plugin::make_status(DLRT_RESOURCE_EXHAUSTED, "malloc failed");
  std::memcpy(base, &bytes, sizeof bytes);
  d->used += bytes;
  *out = static_cast<char*>(base) + 4096;
  return nullptr;
}
void mem_free(dlrt_device* d, void* ptr) {
  if (ptr == nullptr) return;
  char* base = static_cast<char*>(ptr) - 4096;
  size_t bytes;
  std::memcpy(&bytes, base, sizeof bytes);
  d->used -= bytes;
  dlrt::plugin::aligned_release(base);
}
dlrt_status* copy(dlrt_device*, void* dst, const void* src, size_t bytes, dlrt_stream*) {
  std::memcpy(dst, src, bytes);
  return nullptr;
}
dlrt_status* fill(dlrt_device*, void* dst, int32_t value, size_t bytes, dlrt_stream*) {
  std::memset(dst, value, bytes);
  return nullptr;
}
dlrt_status* stream_create(dlrt_device* d, dlrt_stream** out) {
  *out = new dlrt_stream{d};
  return nullptr;
}
void stream_destroy(dlrt_stream* s) { delete s; }
dlrt_status* stream_synchronize(dlrt_stream*) { return nullptr; }
dlrt_status* event_create(dlrt_device* d, dlrt_event** out) {
  *out = new dlrt_event{d};
  return nullptr;
}
void event_destroy(dlrt_event* e) { delete e; }
dlrt_status* event_record(dlrt_event*, dlrt_stream*) { return nullptr; }
dlrt_status* stream_wait_event(dlrt_stream*, dlrt_event*) { return nullptr; }
dlrt_status* event_synchronize(dlrt_event*) { return nullptr; }
#if defined(CASE_OP_VERSION)
// What the host handed over, for the ABI test (tests/loader/abi_1_2_test.cc).
dlrt_status* op_supported(dlrt_plugin*, int32_t, const dlrt_op_desc* d, dlrt_op_cost*) {
  const bool has_version = d->struct_size >= offsetof(dlrt_op_desc, op_version) + sizeof(int32_t);
  return dlrt::plugin::make_status(
      DLRT_UNIMPLEMENTED, std::string(TEST_PLUGIN_NAME) + " saw " + d->op + " op_version " +
                              (has_version ? std::to_string(d->op_version) : "absent") +
                              " struct_size " + std::to_string(d->struct_size));
}
#elif defined(CASE_MINOR_1)
// dlrt_op_desc as ABI 1.1 shipped it: 64 bytes, no op_version. A 1.1 plugin reads only
// these, whatever struct_size a newer host gives.
struct OpDesc11 {
  size_t struct_size;
  const char* op;
  size_t num_inputs;
  const dlrt_tensor_desc* const* inputs;
  size_t num_outputs;
  const dlrt_tensor_desc* const* outputs;
  size_t num_attrs;
  const dlrt_attr* const* attrs;
};
static_assert(sizeof(OpDesc11) == 64, "OpDesc11 must be the ABI 1.1 layout");
dlrt_status* op_supported(dlrt_plugin*, int32_t, const dlrt_op_desc* d, dlrt_op_cost*) {
  OpDesc11 v{};
  std::memcpy(&v, d, sizeof v);
  return dlrt::plugin::make_status(
      DLRT_UNIMPLEMENTED, std::string(TEST_PLUGIN_NAME) + " (ABI 1.1) saw " + v.op + " with " +
                              std::to_string(v.num_inputs) + " inputs");
}
#else
dlrt_status* op_supported(dlrt_plugin*, int32_t, const dlrt_op_desc*, dlrt_op_cost*) {
  return dlrt::plugin::make_status(DLRT_UNIMPLEMENTED, "the loader test plugin runs no ops");
}
#endif
dlrt_status* kernel_create(dlrt_device*, const dlrt_op_desc*, dlrt_kernel** out, size_t* ws) {
  *out = nullptr;
  *ws = 0;
  return dlrt::plugin::make_status(DLRT_UNIMPLEMENTED, "the loader test plugin runs no ops");
}
dlrt_status* kernel_run(dlrt_kernel*, dlrt_stream*, const dlrt_kernel_args*) {
  return dlrt::plugin::make_status(DLRT_UNIMPLEMENTED, "the loader test plugin runs no ops");
}
void kernel_destroy(dlrt_kernel*) {}

// A table as a newer minor would have it: ours, plus entries appended at the end.
struct plugin_api_v1_7 {
  dlrt_plugin_api base;
  void* future_entry_a;
  void* future_entry_b;
};

}  // namespace

#ifndef CASE_NO_ENTRY
extern "C" DLRT_PLUGIN_EXPORT dlrt_status* dlrt_plugin_init(const dlrt_host_api* host,
                                                            dlrt_plugin_api* api) {
  dlrt::plugin::g_host = host;
  dlrt::plugin::g_plugin_name = TEST_PLUGIN_NAME;
#ifdef CASE_INIT_SEGFAULT
#if defined(_WIN32)
  // Windows' raise(SIGSEGV) only calls the C runtime's handler (exit code 3); a wild pointer
  // raises this exception.
  ::RaiseException(EXCEPTION_ACCESS_VIOLATION, EXCEPTION_NONCONTINUABLE, 0, nullptr);
#else
  std::raise(SIGSEGV);  // as a wild pointer would, without UB the compiler may remove
#endif
#endif
#ifdef CASE_INIT_ABORT
  std::abort();
#endif
#ifdef CASE_INIT_EXIT
  std::exit(3);
#endif
#ifdef CASE_INIT_HANG
#if defined(_WIN32)
  for (;;) ::Sleep(INFINITE);
#else
  for (;;) pause();
#endif
#endif
#ifdef CASE_INIT_THROWS
  throw std::runtime_error("loader_init_throws: thrown on purpose");
#endif
#ifdef CASE_INIT_ERROR
  return host->status_create(DLRT_INTERNAL, "loader_init_error: this plugin refuses to start");
#endif
  plugin_api_v1_7 t{};
  dlrt_plugin_api& a = t.base;
  a.struct_size = sizeof(dlrt_plugin_api);
  a.abi_major = DLRT_ABI_MAJOR;
  a.abi_minor = DLRT_ABI_MINOR;
  a.name = TEST_PLUGIN_NAME;
  a.platform = "loader-test";
  a.version = "0.0.1";
  a.plugin_create = plugin_create;
  a.plugin_destroy = plugin_destroy;
  a.device_count = device_count;
  a.device_get_desc = device_get_desc;
  a.device_open = device_open;
  a.device_close = device_close;
  a.memory_info = memory_info;
  a.mem_alloc = mem_alloc;
  a.mem_free = mem_free;
  a.memcpy_h2d = copy;
  a.memcpy_d2h = copy;
  a.memcpy_d2d = copy;
  a.memset = fill;
  a.stream_create = stream_create;
  a.stream_destroy = stream_destroy;
  a.stream_synchronize = stream_synchronize;
  a.event_create = event_create;
  a.event_destroy = event_destroy;
  a.event_record = event_record;
  a.stream_wait_event = stream_wait_event;
  a.event_synchronize = event_synchronize;
  a.op_supported = op_supported;
  a.kernel_create = kernel_create;
  a.kernel_run = kernel_run;
  a.kernel_destroy = kernel_destroy;
#ifdef CASE_WRONG_MAJOR
  a.abi_major = 2;
  a.abi_minor = 0;
#endif
#ifdef CASE_NULL_ENTRY
  a.device_open = nullptr;
#endif
#ifdef CASE_MINOR_1
  a.abi_minor = 1;
#endif
#if defined(CASE_NO_DEVICES) || defined(CASE_NO_DEVICES_NO_COLLECTIVES)
  // A transport without devices (plugin.h, ABI 1.2): every device entry NULL. With a
  // collectives table the host must accept it and never call those entries; without one it
  // must refuse it. The table's entries are never called by the loader.
  a.device_count = nullptr;
  a.device_get_desc = nullptr;
  a.device_open = nullptr;
  a.device_close = nullptr;
  a.memory_info = nullptr;
  a.mem_alloc = nullptr;
  a.mem_free = nullptr;
  a.memcpy_h2d = a.memcpy_d2h = a.memcpy_d2d = nullptr;
  a.memset = nullptr;
  a.stream_create = nullptr;
  a.stream_destroy = nullptr;
  a.stream_synchronize = nullptr;
  a.event_create = nullptr;
  a.event_destroy = nullptr;
  a.event_record = nullptr;
  a.stream_wait_event = nullptr;
  a.event_synchronize = nullptr;
  a.op_supported = nullptr;
  a.kernel_create = nullptr;
  a.kernel_run = nullptr;
  a.kernel_destroy = nullptr;
#endif
#ifdef CASE_NO_DEVICES
  static const dlrt_collective_api collectives = {sizeof(dlrt_collective_api)};
  a.collectives = &collectives;
#endif
#ifdef CASE_OLD_MINOR
  // Built before `capture`/`collectives` existed: junk where they would be, which the host
  // must never read because it lies past our struct_size.
  a.abi_minor = 0;
  a.capture = reinterpret_cast<const dlrt_capture_api*>(0x1);
  a.collectives = reinterpret_cast<const dlrt_collective_api*>(0x1);
  std::memcpy(reinterpret_cast<char*>(api) + sizeof(size_t),
              reinterpret_cast<char*>(&a) + sizeof(size_t),
              sizeof(dlrt_plugin_api) - sizeof(size_t));
  api->struct_size = offsetof(dlrt_plugin_api, capture);
  return nullptr;
#endif
#ifdef CASE_RANDOM_1_0
  a.abi_minor = 0;  // and every struct read as 1.0 laid it out (random_1_0.hpp)
  a.op_supported = random_1_0::op_supported;
  a.kernel_create = random_1_0::kernel_create;
  a.kernel_run = random_1_0::kernel_run<dlrt_stream>;
  a.kernel_destroy = random_1_0::kernel_destroy;
  static const dlrt_capture_api capture = {
      sizeof(dlrt_capture_api), random_1_0::capture_begin<dlrt_stream>,
      random_1_0::capture_end<dlrt_stream>, random_1_0::graph_launch<dlrt_stream>,
      random_1_0::graph_destroy};
  a.capture = &capture;
#endif
#ifdef CASE_NEW_MINOR
  a.abi_minor = 7;
  a.struct_size = sizeof(plugin_api_v1_7);
  t.future_entry_a = reinterpret_cast<void*>(&plugin_destroy);
  t.future_entry_b = reinterpret_cast<void*>(&plugin_destroy);
#endif
  // Writes min(host size, our size) and reports it: the contract's helper.
  dlrt_plugin_api_fill(api, &a);
  return nullptr;
}
#else
// Looks like a plugin but exports no entry point (cmake/plugin.map hides everything else).
extern "C" int loader_no_entry_marker(void) { return 42; }
#endif
