// device_memory.cc: see device_memory.hpp.
//
// allocate_device is the executor's one door to the context's per-device arenas.
#include "exec/device_memory.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>

#include "context.hpp"
#include "plugin_call.hpp"
#include "status.hpp"

namespace dlrt::core::exec {

namespace {
std::atomic<uint64_t> g_device_allocations{0};
}

uint64_t device_allocations() { return g_device_allocations.load(); }

DeviceMemory allocate_device(Context& context, size_t device, size_t bytes, const char* what) {
  DeviceMemory m;
  if (bytes == 0) return m;
  m.buffer_ = context.arena(device).allocate(bytes, what);
  ++g_device_allocations;
  return m;
}

HostStaging::HostStaging(const dlrt_plugin_api* api, dlrt_device* handle, size_t bytes) {
  if (api != nullptr && api->host_alloc_pinned != nullptr && api->host_free_pinned != nullptr) {
    void* p = nullptr;
    const StatusValue s = plugin_status("host_alloc_pinned",
                                        [&] { return api->host_alloc_pinned(handle, bytes, &p); });
    if (s.ok() && p != nullptr) {
      api_ = api;
      handle_ = handle;
      data_ = p;
      pinned_ = true;
      return;
    }
    // Pinned memory is an optimisation: fall back to pageable memory.
  }
  data_ = std::malloc(bytes);
  if (data_ == nullptr)
    fail(DLRT_RESOURCE_EXHAUSTED, fmt::format("host staging buffer of {} bytes", bytes));
}

HostStaging::~HostStaging() {
  if (data_ == nullptr) return;
  if (pinned_) plugin_call_noexcept([&] { api_->host_free_pinned(handle_, data_); });
  else std::free(data_);
}

}  // namespace dlrt::core::exec
