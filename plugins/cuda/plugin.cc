// plugin.cc: the CUDA plugin's entry point and lifetime (name "cuda", platform "cuda").
//
// Loading follows plugin.h's two phases:
//   dlrt_plugin_init  fills the table; touches neither CUDA nor any library;
//   plugin_create     reads options and the library versions; never fails for lack of a GPU
//                     or driver. Whether CUDA is usable is decided (once) by device_count,
//                     which then says why not.
// What this file is not: device enumeration (device.cc), memory (memory.cc), streams and
// events (stream.cc), capture (capture.cc), NCCL (collectives.cc), op kernels (ops.cc).
#include <new>
#include <string>

#include "cuda_plugin.hpp"
#include "ops.hpp"

#ifndef DLRT_CUDA_PLUGIN_VERSION
#define DLRT_CUDA_PLUGIN_VERSION "0.0.0"
#endif

namespace dlrt::cuda {

void set_device(int ordinal) {
  CUDA_CHECK_MSG(cudaSetDevice(ordinal), "GPU:" + std::to_string(ordinal));
}

void check_same_device(const dlrt_device* device, const dlrt_stream* stream, const char* entry) {
  if (stream->device != device)
    plugin::fail(DLRT_INVALID_ARGUMENT, std::string("cuda: ") + entry + ": the stream belongs to " +
                                            stream->device->label + ", expected one of " +
                                            device->label);
}

namespace {

dlrt_status* plugin_create(const dlrt_plugin_create_args* args, dlrt_plugin** out_plugin) noexcept {
  return plugin::guard([&] {
    plugin::require(out_plugin, "out_plugin");
    *out_plugin = nullptr;
    // deterministic and cudnn_workspace_mb (cuda_options.hpp); any other key is an
    // INVALID_ARGUMENT naming it. (Memory limits and growth are the core allocator's.)
    plugin::Options options(args, cuda_option_keys());
    const std::string twice = OpRegistry::duplicate();
    if (!twice.empty())
      plugin::fail(DLRT_INTERNAL, "cuda: two kernel files register op '" + twice + "'");
    auto p = std::make_unique<dlrt_plugin>();
    p->options = parse_cuda_options(options);
    p->library_versions = library_versions();  // the linked libraries answer without a GPU
    *out_plugin = p.release();
  });
}

void plugin_destroy(dlrt_plugin* plugin) noexcept {
  // Devices are closed by now (plugin.h lifetimes). We do not call cudaDeviceReset: the
  // host application, or another library in the process, may still be using the GPU.
  plugin::guard_void("plugin_destroy", [&] { delete plugin; });
}

dlrt_plugin_api make_table() {
  dlrt_plugin_api t{};
  t.struct_size = sizeof(dlrt_plugin_api);
  t.abi_major = DLRT_ABI_MAJOR;
  t.abi_minor = DLRT_ABI_MINOR;
  t.name = "cuda";
  t.platform = "cuda";
  t.version = DLRT_CUDA_PLUGIN_VERSION;
  t.plugin_create = &plugin_create;
  t.plugin_destroy = &plugin_destroy;
  t.device_count = &device_count;
  t.device_get_desc = &device_get_desc;
  t.device_open = &device_open;
  t.device_close = &device_close;
  t.memory_info = &memory_info;
  t.mem_alloc = &mem_alloc;
  t.mem_free = &mem_free;
  t.memcpy_h2d = &memcpy_h2d;
  t.memcpy_d2h = &memcpy_d2h;
  t.memcpy_d2d = &memcpy_d2d;
  t.memset = &dlrt::cuda::memset;
  t.host_alloc_pinned = &host_alloc_pinned;
  t.host_free_pinned = &host_free_pinned;
  t.stream_create = &stream_create;
  t.stream_destroy = &stream_destroy;
  t.stream_synchronize = &stream_synchronize;
  t.event_create = &event_create;
  t.event_destroy = &event_destroy;
  t.event_record = &event_record;
  t.stream_wait_event = &stream_wait_event;
  t.event_synchronize = &event_synchronize;
  t.op_supported = &op_supported;
  t.kernel_create = &kernel_create;
  t.kernel_run = &kernel_run;
  t.kernel_destroy = &kernel_destroy;
  t.capture = capture_table();
  t.collectives = collective_table();
  return t;
}

}  // namespace
}  // namespace dlrt::cuda

extern "C" DLRT_PLUGIN_EXPORT dlrt_status* dlrt_plugin_init(const dlrt_host_api* host,
                                                            dlrt_plugin_api* api) {
  // Without the host's services there is no way to report anything: leave `api` untouched
  // and the host refuses a plugin with no name.
  if (host == nullptr || !DLRT_HAS_FIELD(dlrt_host_api, status_create, host->struct_size))
    return nullptr;
  dlrt::plugin::g_host = host;
  dlrt::plugin::g_plugin_name = "cuda";
  return dlrt::plugin::guard([&] {
    dlrt::plugin::require(api, "api");
    if (host->abi_major != DLRT_ABI_MAJOR)
      dlrt::plugin::fail(DLRT_FAILED_PRECONDITION,
                         "cuda: host ABI major " + std::to_string(host->abi_major) +
                             ", this plugin was built for " + std::to_string(DLRT_ABI_MAJOR));
    static const dlrt_plugin_api table = dlrt::cuda::make_table();
    dlrt_plugin_api_fill(api, &table);
  });
}
