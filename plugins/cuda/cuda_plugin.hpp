// cuda_plugin.hpp: the CUDA plugin's handle types and the entry points each file defines.
// Internal to plugins/cuda; the ABI these implement is sdk/include/dlrt/plugin.h.
//
// The handles the ABI leaves opaque (dlrt_plugin, dlrt_device, ...) are defined here as plain
// structs. Every entry point is a `noexcept` function that runs its body under
// plugin::guard (or plugin::guard_void for those that return nothing, which log instead), so
// no exception reaches the host.
//
// The current CUDA device is per host thread, and the host may call any entry from any of
// its threads: so every entry that touches a device first makes it current (set_device).
// We never restore the previous device: cudaGetDevice reports 0 on a thread that never chose
// one, and "restoring" 0 would create a context (hundreds of MiB) on GPU 0 for nothing.
#pragma once

#include <cuda_runtime_api.h>
#include <dlrt/plugin.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_options.hpp"
#include "cuda_status.hpp"
#include "plugin_support.hpp"
#include "versioned.hpp"

namespace dlrt::cuda {

// Everything device_get_desc hands out for one device; the plugin owns it until destroy.
struct DeviceInfo {
  dlrt_device_desc desc{};
  std::string name, uuid, pci_bus_id, driver_version, library_versions;
  std::vector<dlrt_attr> attrs;
  std::vector<const dlrt_attr*> attr_ptrs;
};

// The outcome of asking CUDA for devices, decided once per plugin.
struct Enumeration {
  bool ok = false;
  int32_t count = 0;
  std::string reason;  // why there are no devices, when !ok
};

}  // namespace dlrt::cuda

struct dlrt_plugin {
  std::once_flag enumerated;
  dlrt::cuda::Enumeration enumeration;
  std::mutex mu;                                               // guards infos
  std::vector<std::unique_ptr<dlrt::cuda::DeviceInfo>> infos;  // by ordinal, filled lazily
  std::string library_versions;     // "cuDNN 9.13.0, cuBLAS 13.0.0, NCCL 2.28.9"
  dlrt::cuda::CudaOptions options;  // plugin_create's options (cuda_options.hpp)
};

struct dlrt_device {
  dlrt_plugin* plugin = nullptr;
  int ordinal = 0;
  std::string label;  // "GPU:0", for messages
  // Allocations that needed more alignment than cudaMalloc gives: aligned pointer -> the
  // pointer cudaMalloc returned (see memory.cc). Usually empty.
  std::mutex mu;
  std::map<void*, void*> padded;
};

struct dlrt_stream {
  dlrt_device* device = nullptr;
  cudaStream_t stream = nullptr;
};

struct dlrt_event {
  dlrt_device* device = nullptr;
  cudaEvent_t event = nullptr;
};

namespace dlrt::cuda {

// Makes `ordinal` the calling thread's current device.
void set_device(int ordinal);
// Throws INVALID_ARGUMENT unless `stream` belongs to `device`.
void check_same_device(const dlrt_device* device, const dlrt_stream* stream, const char* entry);
// The enumeration result; throws UNAVAILABLE with the reason when there is no device.
int32_t device_count_or_throw(dlrt_plugin* plugin);

// ---- device.cc ----
dlrt_status* device_count(dlrt_plugin* plugin, int32_t* out_count) noexcept;
dlrt_status* device_get_desc(dlrt_plugin* plugin, int32_t ordinal, dlrt_device_desc* out) noexcept;
dlrt_status* device_open(dlrt_plugin* plugin, int32_t ordinal, dlrt_device** out_device) noexcept;
void device_close(dlrt_device* device) noexcept;
std::string library_versions();
// The cached description of `ordinal` (NOT_FOUND if out of range, UNAVAILABLE if no GPU).
const DeviceInfo& device_info(dlrt_plugin* plugin, int32_t ordinal);

// ---- memory.cc ----
dlrt_status* memory_info(dlrt_device* device, uint64_t* out_free, uint64_t* out_total) noexcept;
dlrt_status* mem_alloc(dlrt_device* device, size_t bytes, size_t alignment,
                       void** out_ptr) noexcept;
void mem_free(dlrt_device* device, void* ptr) noexcept;
dlrt_status* memcpy_h2d(dlrt_device* device, void* dst, const void* src, size_t bytes,
                        dlrt_stream* stream) noexcept;
dlrt_status* memcpy_d2h(dlrt_device* device, void* dst, const void* src, size_t bytes,
                        dlrt_stream* stream) noexcept;
dlrt_status* memcpy_d2d(dlrt_device* device, void* dst, const void* src, size_t bytes,
                        dlrt_stream* stream) noexcept;
dlrt_status* memset(dlrt_device* device, void* dst, int32_t byte_value, size_t bytes,
                    dlrt_stream* stream) noexcept;
dlrt_status* host_alloc_pinned(dlrt_device* device, size_t bytes, void** out_ptr) noexcept;
void host_free_pinned(dlrt_device* device, void* ptr) noexcept;

// ---- stream.cc ----
dlrt_status* stream_create(dlrt_device* device, dlrt_stream** out_stream) noexcept;
void stream_destroy(dlrt_stream* stream) noexcept;
dlrt_status* stream_synchronize(dlrt_stream* stream) noexcept;
dlrt_status* event_create(dlrt_device* device, dlrt_event** out_event) noexcept;
void event_destroy(dlrt_event* event) noexcept;
dlrt_status* event_record(dlrt_event* event, dlrt_stream* stream) noexcept;
dlrt_status* stream_wait_event(dlrt_stream* stream, dlrt_event* event) noexcept;
dlrt_status* event_synchronize(dlrt_event* event) noexcept;

// ---- ops.cc ----
dlrt_status* op_supported(dlrt_plugin* plugin, int32_t ordinal, const dlrt_op_desc* op,
                          dlrt_op_cost* out_cost) noexcept;
dlrt_status* kernel_create(dlrt_device* device, const dlrt_op_desc* op, dlrt_kernel** out_kernel,
                           size_t* out_workspace_bytes) noexcept;
dlrt_status* kernel_run(dlrt_kernel* kernel, dlrt_stream* stream,
                        const dlrt_kernel_args* args) noexcept;
void kernel_destroy(dlrt_kernel* kernel) noexcept;

// ---- capture.cc, collectives.cc: the optional tables ----
const dlrt_capture_api* capture_table();
const dlrt_collective_api* collective_table();

}  // namespace dlrt::cuda
