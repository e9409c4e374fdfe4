// plugins/mpi: libdlrt-mpi.so, collectives over MPI for multi-worker CPU runs (docs/design.md
// section 7). It owns no device: device_count is 0, and its one offer is the collectives
// table (collectives.cc) with communicators over host memory (plugin.h). The other required
// entries exist so that the host accepts the plugin; those that could only be reached with a
// device say so by name (UNIMPLEMENTED), the release entries do nothing.
//
// Loading it costs nothing: plugin_create does not touch MPI (every dlrt program loads every
// plugin, and most are not MPI jobs). MPI is initialised by the first comm_create and
// finalised by the last plugin_destroy when that is safe (runtime.hpp).
#include <dlrt/plugin.h>

#include <string>

#include "collectives.hpp"
#include "plugin_support.hpp"
#include "runtime.hpp"

namespace {

using dlrt::plugin::fail;
using dlrt::plugin::guard;
using dlrt::plugin::guard_void;

constexpr const char* kName = "mpi";
constexpr const char* kPlatform = "mpi";

// The answer of every entry that needs a device: there is none to pass.
[[noreturn]] void no_devices(const char* entry) {
  fail(DLRT_UNIMPLEMENTED, std::string("mpi plugin: ") + entry +
                               " is not implemented: this plugin owns no devices (it offers "
                               "collectives over host memory only)");
}

}  // namespace

// One plugin instance. MPI state is per process, not per instance (runtime.hpp), so the
// instance itself holds nothing.
struct dlrt_plugin {
  int unused = 0;
};

namespace {

// ---- plugin lifetime -----------------------------------------------------------------------

dlrt_status* plugin_create(const dlrt_plugin_create_args* args, dlrt_plugin** out_plugin) {
  if (out_plugin != nullptr) *out_plugin = nullptr;
  return guard([&] {
    dlrt::plugin::require(out_plugin, "out_plugin");
    dlrt::plugin::Options options(args, {});  // no options
    *out_plugin = new dlrt_plugin{};
    dlrt::mpi::instance_created();
  });
}

void plugin_destroy(dlrt_plugin* plugin) {
  guard_void("plugin_destroy", [&] {
    if (plugin == nullptr) return;
    delete plugin;
    dlrt::mpi::instance_destroyed();  // MPI_Finalize, when ours and safe
  });
}

// ---- devices: none ---------------------------------------------------------------------------

dlrt_status* device_count(dlrt_plugin*, int32_t* out_count) {
  if (out_count != nullptr) *out_count = 0;
  return guard([&] { dlrt::plugin::require(out_count, "out_count"); });
}

dlrt_status* device_get_desc(dlrt_plugin*, int32_t, dlrt_device_desc*) {
  return guard([] { no_devices("device_get_desc"); });
}

dlrt_status* device_open(dlrt_plugin*, int32_t, dlrt_device** out_device) {
  if (out_device != nullptr) *out_device = nullptr;
  return guard([] { no_devices("device_open"); });
}

void device_close(dlrt_device*) {}  // nothing can have been opened

// ---- memory, streams, events, ops: unreachable without a device ------------------------------

dlrt_status* memory_info(dlrt_device*, uint64_t* out_free, uint64_t* out_total) {
  if (out_free != nullptr) *out_free = 0;
  if (out_total != nullptr) *out_total = 0;
  return guard([] { no_devices("memory_info"); });
}

dlrt_status* mem_alloc(dlrt_device*, size_t, size_t, void** out_ptr) {
  if (out_ptr != nullptr) *out_ptr = nullptr;
  return guard([] { no_devices("mem_alloc"); });
}

void mem_free(dlrt_device*, void*) {}

dlrt_status* memcpy_h2d(dlrt_device*, void*, const void*, size_t, dlrt_stream*) {
  return guard([] { no_devices("memcpy_h2d"); });
}

dlrt_status* memcpy_d2h(dlrt_device*, void*, const void*, size_t, dlrt_stream*) {
  return guard([] { no_devices("memcpy_d2h"); });
}

dlrt_status* memcpy_d2d(dlrt_device*, void*, const void*, size_t, dlrt_stream*) {
  return guard([] { no_devices("memcpy_d2d"); });
}

dlrt_status* memset_entry(dlrt_device*, void*, int32_t, size_t, dlrt_stream*) {
  return guard([] { no_devices("memset"); });
}

dlrt_status* stream_create(dlrt_device*, dlrt_stream** out_stream) {
  if (out_stream != nullptr) *out_stream = nullptr;
  return guard([] { no_devices("stream_create"); });
}

void stream_destroy(dlrt_stream*) {}

dlrt_status* stream_synchronize(dlrt_stream*) {
  return guard([] { no_devices("stream_synchronize"); });
}

dlrt_status* event_create(dlrt_device*, dlrt_event** out_event) {
  if (out_event != nullptr) *out_event = nullptr;
  return guard([] { no_devices("event_create"); });
}

void event_destroy(dlrt_event*) {}

dlrt_status* event_record(dlrt_event*, dlrt_stream*) {
  return guard([] { no_devices("event_record"); });
}

dlrt_status* stream_wait_event(dlrt_stream*, dlrt_event*) {
  return guard([] { no_devices("stream_wait_event"); });
}

dlrt_status* event_synchronize(dlrt_event*) {
  return guard([] { no_devices("event_synchronize"); });
}

dlrt_status* op_supported(dlrt_plugin*, int32_t, const dlrt_op_desc*, dlrt_op_cost*) {
  return guard([] { no_devices("op_supported"); });
}

dlrt_status* kernel_create(dlrt_device*, const dlrt_op_desc*, dlrt_kernel** out_kernel,
                           size_t* out_workspace_bytes) {
  if (out_kernel != nullptr) *out_kernel = nullptr;
  if (out_workspace_bytes != nullptr) *out_workspace_bytes = 0;
  return guard([] { no_devices("kernel_create"); });
}

dlrt_status* kernel_run(dlrt_kernel*, dlrt_stream*, const dlrt_kernel_args*) {
  return guard([] { no_devices("kernel_run"); });
}

void kernel_destroy(dlrt_kernel*) {}

}  // namespace

// The one exported symbol. Phase one of loading: fill the table, touch nothing else (no MPI).
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
        .host_alloc_pinned = nullptr,  // optional: no devices, nothing to pin for
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
        .capture = nullptr,  // optional: no graph capture
        .collectives = dlrt::mpi::collective_table(),
    };
    dlrt_plugin_api_fill(api, &filled);
  });
}
