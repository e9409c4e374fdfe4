// plugins/null: the skeleton backend. It loads, creates an instance, and answers every other
// entry with UNIMPLEMENTED naming that entry. It has no devices and runs nothing.
//
// It exists to be copied (see README.md): a new backend starts as this file with its name and
// platform changed, and grows entry by entry until `dlprobe` stops showing UNIMPLEMENTED.
// Every entry already follows the ABI's rules (plugin.h), so a copy keeps them by default:
//   - each body runs inside guard()/guard_void(), so no C++ exception crosses the boundary;
//   - out-parameters are set to NULL/0 on entry, before anything can fail;
//   - errors are statuses made by the host (host->status_create), never allocated here.
// When it grows, split it the way plugins/reference is split: plugin.cc (init, create,
// options), device.cc, memory.cc, stream.cc, ops.cc.
#include <dlrt/plugin.h>

#include <string>

#include "plugin_support.hpp"

namespace {

using dlrt::plugin::fail;
using dlrt::plugin::guard;
using dlrt::plugin::guard_void;

// The name and platform the host lists this plugin under. Change both in a copy.
constexpr const char* kName = "null";
constexpr const char* kPlatform = "null";

// The error every unimplemented entry returns: it names the entry, so `dlprobe` and a failing
// test say exactly what to implement next.
[[noreturn]] void unimplemented(const char* entry) {
  fail(DLRT_UNIMPLEMENTED, std::string(kName) + " plugin: " + entry + " is not implemented");
}

// The plugin instance. A real backend keeps its options, library handles and device list here.
struct Instance {
  int unused = 0;
};

}  // namespace

// The opaque ABI handle is defined by the plugin; here it simply wraps Instance.
struct dlrt_plugin {
  Instance instance;
};

namespace {

// ---- plugin lifetime -------------------------------------------------------------------
// Succeeds, so the host shows the plugin as loaded (and then asks device_count, below).

dlrt_status* plugin_create(const dlrt_plugin_create_args* args, dlrt_plugin** out_plugin) {
  if (out_plugin != nullptr) *out_plugin = nullptr;
  return guard([&] {
    dlrt::plugin::require(out_plugin, "out_plugin");
    // Reject every option: a skeleton accepts none (a copy lists its keys here).
    dlrt::plugin::Options options(args, {});
    *out_plugin = new dlrt_plugin{};
  });
}

void plugin_destroy(dlrt_plugin* plugin) {
  guard_void("plugin_destroy", [&] { delete plugin; });
}

// ---- devices ---------------------------------------------------------------------------

dlrt_status* device_count(dlrt_plugin*, int32_t* out_count) {
  if (out_count != nullptr) *out_count = 0;
  return guard([&] {
    fail(DLRT_UNIMPLEMENTED, std::string(kName) +
                                 " plugin: a skeleton with no devices; copy plugins/null to "
                                 "start a backend (device_count is not implemented)");
  });
}

dlrt_status* device_get_desc(dlrt_plugin*, int32_t, dlrt_device_desc*) {
  return guard([] { unimplemented("device_get_desc"); });
}

dlrt_status* device_open(dlrt_plugin*, int32_t, dlrt_device** out_device) {
  if (out_device != nullptr) *out_device = nullptr;
  return guard([] { unimplemented("device_open"); });
}

void device_close(dlrt_device*) {}  // nothing can have been opened

// ---- memory ----------------------------------------------------------------------------

dlrt_status* memory_info(dlrt_device*, uint64_t* out_free, uint64_t* out_total) {
  if (out_free != nullptr) *out_free = 0;
  if (out_total != nullptr) *out_total = 0;
  return guard([] { unimplemented("memory_info"); });
}

dlrt_status* mem_alloc(dlrt_device*, size_t, size_t, void** out_ptr) {
  if (out_ptr != nullptr) *out_ptr = nullptr;
  return guard([] { unimplemented("mem_alloc"); });
}

void mem_free(dlrt_device*, void*) {}

dlrt_status* memcpy_h2d(dlrt_device*, void*, const void*, size_t, dlrt_stream*) {
  return guard([] { unimplemented("memcpy_h2d"); });
}

dlrt_status* memcpy_d2h(dlrt_device*, void*, const void*, size_t, dlrt_stream*) {
  return guard([] { unimplemented("memcpy_d2h"); });
}

dlrt_status* memcpy_d2d(dlrt_device*, void*, const void*, size_t, dlrt_stream*) {
  return guard([] { unimplemented("memcpy_d2d"); });
}

dlrt_status* memset_entry(dlrt_device*, void*, int32_t, size_t, dlrt_stream*) {
  return guard([] { unimplemented("memset"); });
}

// ---- streams and events ----------------------------------------------------------------

dlrt_status* stream_create(dlrt_device*, dlrt_stream** out_stream) {
  if (out_stream != nullptr) *out_stream = nullptr;
  return guard([] { unimplemented("stream_create"); });
}

void stream_destroy(dlrt_stream*) {}

dlrt_status* stream_synchronize(dlrt_stream*) {
  return guard([] { unimplemented("stream_synchronize"); });
}

dlrt_status* event_create(dlrt_device*, dlrt_event** out_event) {
  if (out_event != nullptr) *out_event = nullptr;
  return guard([] { unimplemented("event_create"); });
}

void event_destroy(dlrt_event*) {}

dlrt_status* event_record(dlrt_event*, dlrt_stream*) {
  return guard([] { unimplemented("event_record"); });
}

dlrt_status* stream_wait_event(dlrt_stream*, dlrt_event*) {
  return guard([] { unimplemented("stream_wait_event"); });
}

dlrt_status* event_synchronize(dlrt_event*) {
  return guard([] { unimplemented("event_synchronize"); });
}

// ---- ops -------------------------------------------------------------------------------

dlrt_status* op_supported(dlrt_plugin*, int32_t, const dlrt_op_desc*, dlrt_op_cost*) {
  return guard([] { unimplemented("op_supported"); });
}

dlrt_status* kernel_create(dlrt_device*, const dlrt_op_desc*, dlrt_kernel** out_kernel,
                           size_t* out_workspace_bytes) {
  if (out_kernel != nullptr) *out_kernel = nullptr;
  if (out_workspace_bytes != nullptr) *out_workspace_bytes = 0;
  return guard([] { unimplemented("kernel_create"); });
}

dlrt_status* kernel_run(dlrt_kernel*, dlrt_stream*, const dlrt_kernel_args*) {
  return guard([] { unimplemented("kernel_run"); });
}

void kernel_destroy(dlrt_kernel*) {}

}  // namespace

// The one exported symbol. Phase one of loading: fill the table, touch nothing else.
extern "C" DLRT_PLUGIN_EXPORT dlrt_status* dlrt_plugin_init(const dlrt_host_api* host,
                                                            dlrt_plugin_api* api) {
  dlrt::plugin::g_host = host;
  dlrt::plugin::g_plugin_name = kName;
  return guard([&] {
    dlrt::plugin::require(host, "host");
    dlrt::plugin::require(api, "api");
    static const dlrt_plugin_api filled = {
        .struct_size = sizeof(dlrt_plugin_api),
        .abi_major = DLRT_ABI_MAJOR,
        .abi_minor = DLRT_ABI_MINOR,
        .name = kName,
        .platform = kPlatform,
        .version = "0.1.0",
        .plugin_create = plugin_create,
        .plugin_destroy = plugin_destroy,
        .device_count = device_count,
        .device_get_desc = device_get_desc,
        .device_open = device_open,
        .device_close = device_close,
        .memory_info = memory_info,
        .mem_alloc = mem_alloc,
        .mem_free = mem_free,
        .memcpy_h2d = memcpy_h2d,
        .memcpy_d2h = memcpy_d2h,
        .memcpy_d2d = memcpy_d2d,
        .memset = memset_entry,
        .host_alloc_pinned = nullptr,  // optional: the host falls back to malloc
        .host_free_pinned = nullptr,
        .stream_create = stream_create,
        .stream_destroy = stream_destroy,
        .stream_synchronize = stream_synchronize,
        .event_create = event_create,
        .event_destroy = event_destroy,
        .event_record = event_record,
        .stream_wait_event = stream_wait_event,
        .event_synchronize = event_synchronize,
        .op_supported = op_supported,
        .kernel_create = kernel_create,
        .kernel_run = kernel_run,
        .kernel_destroy = kernel_destroy,
        .capture = nullptr,      // optional: no graph capture
        .collectives = nullptr,  // optional: no collectives
    };
    dlrt_plugin_api_fill(api, &filled);
  });
}
