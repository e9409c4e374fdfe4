// device_memory.hpp: the executor's allocations — device blocks and host staging buffers.
//
// DeviceMemory is one block of device memory owned by an executable (the planned values of
// one device, a kernel workspace, a constant): a Buffer of the device's arena
// (Context::arena), so it counts against the device's limit and shows in its stats. Every
// block comes from `allocate_device`, so a run can be checked to allocate nothing:
// `device_allocations()` counts the blocks handed out so far.
//
// HostStaging is host memory for copies between devices of different plugins (and feeds or
// fetches that cross plugins): page-locked through the plugin when it offers
// host_alloc_pinned, else malloc. Allocated at compile time, so a run stages without
// allocating.
#pragma once

#include <dlrt/plugin.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "memory/arena.hpp"

namespace dlrt::core {
class Context;
}

namespace dlrt::core::exec {

class DeviceMemory {
 public:
  DeviceMemory() = default;
  void* data() const { return buffer_.data(); }
  size_t size() const { return buffer_.size(); }

 private:
  friend DeviceMemory allocate_device(Context& context, size_t device, size_t bytes,
                                      const char* what);
  Buffer buffer_;  // move-only, so DeviceMemory is too
};

// `bytes` on registry device `device`; `what` names the requester in an out-of-memory error
// ("values of <executable>", "workspace"). bytes == 0 gives an empty block.
// Throws RESOURCE_EXHAUSTED naming the device and the request.
DeviceMemory allocate_device(Context& context, size_t device, size_t bytes, const char* what);

// Device blocks handed out by allocate_device so far, process-wide (for run-time checks).
uint64_t device_allocations();

class HostStaging {
 public:
  HostStaging() = default;
  // Pinned through `api`/`handle` when the plugin offers it; else malloc. bytes > 0.
  HostStaging(const dlrt_plugin_api* api, dlrt_device* handle, size_t bytes);
  HostStaging(HostStaging&& o) noexcept { swap(o); }
  HostStaging& operator=(HostStaging&& o) noexcept {
    HostStaging tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~HostStaging();
  void* data() const { return data_; }

 private:
  void swap(HostStaging& o) noexcept {
    std::swap(api_, o.api_);
    std::swap(handle_, o.handle_);
    std::swap(data_, o.data_);
    std::swap(pinned_, o.pinned_);
  }
  const dlrt_plugin_api* api_ = nullptr;
  dlrt_device* handle_ = nullptr;
  void* data_ = nullptr;
  bool pinned_ = false;
};

}  // namespace dlrt::core::exec
