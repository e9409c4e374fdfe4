// memory.cc: reference device memory. It is host memory from plugin::aligned_allocate, accounted per
// device against the device's limit (option memory_mb, default the host's MemTotal), and every
// live allocation is remembered (start -> bytes) so that copies, memset and frees can check
// that the pointers they are given really are this device's memory: an oracle that silently
// accepted a wild pointer would hide the very bugs it is there to find.
//
// Copies are memcpy and memset is memset, done before the call returns whether or not a stream
// is given (streams are synchronous: see stream.cc) — unless the stream is capturing, when the
// copy is recorded with its pointers and size and done at each launch of the graph (capture.cc).
// Pointers are checked when the work is enqueued.
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "aligned_memory.hpp"
#include "host_info.hpp"
#include "reference.hpp"

namespace dlrt::reference {

using plugin::fail;
using plugin::guard;

namespace {

// Every allocation is aligned to at least this (cache line, and what vectorised loops like).
constexpr size_t kMinAlignment = 64;
constexpr size_t kMaxAlignment = 4096;  // plugin.h: alignment is a power of two <= 4096

std::string hex(const void* p) {
  std::ostringstream s;
  s << p;
  return s.str();
}

Device& device_of(dlrt_device* device) {
  plugin::require(device, "device");
  return *device->dev;
}

}  // namespace

void check_device_range(Device& dev, const void* ptr, size_t bytes, const char* what) {
  if (ptr == nullptr)
    fail(DLRT_INVALID_ARGUMENT, prefix() + what + " is NULL (" + std::to_string(bytes) + " bytes)");
  const auto p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(dev.mu);
  // The allocation starting at or before p, if any.
  auto it = dev.allocations.upper_bound(p);
  if (it != dev.allocations.begin()) {
    --it;
    const uintptr_t start = it->first, end = it->first + it->second;
    if (p < end) {
      if (bytes <= end - p) return;
      fail(DLRT_OUT_OF_RANGE, prefix() + what + " [" + hex(ptr) + ", +" + std::to_string(bytes) +
                                  ") runs past the end of its allocation on device " + dev.label +
                                  " (" + std::to_string(it->second) + " bytes at " +
                                  hex(reinterpret_cast<void*>(start)) + ", " +
                                  std::to_string(end - p) + " bytes left)");
    }
  }
  fail(DLRT_INVALID_ARGUMENT, prefix() + what + " " + hex(ptr) +
                                  " is not memory allocated on device " + dev.label +
                                  " (freed, from another device, or a host pointer?)");
}

void release_leftovers(Device& dev) {
  std::lock_guard<std::mutex> lock(dev.mu);
  if (dev.allocations.empty()) return;
  plugin::log(DLRT_LOG_WARNING, "device " + dev.label + ": " +
                                    std::to_string(dev.allocations.size()) + " allocation(s) of " +
                                    std::to_string(dev.in_use) +
                                    " bytes still live at plugin_destroy; freeing them");
  for (const auto& [start, bytes] : dev.allocations) plugin::aligned_release(reinterpret_cast<void*>(start));
  dev.allocations.clear();
  dev.in_use = 0;
}

// free = what is left of the device's budget, and never more than the host has available.
dlrt_status* memory_info(dlrt_device* device, uint64_t* out_free, uint64_t* out_total) {
  if (out_free != nullptr) *out_free = 0;
  if (out_total != nullptr) *out_total = 0;
  return guard([&] {
    Device& dev = device_of(device);
    plugin::require(out_free, "out_free");
    plugin::require(out_total, "out_total");
    uint64_t in_use;
    {
      std::lock_guard<std::mutex> lock(dev.mu);
      in_use = dev.in_use;
    }
    uint64_t free_bytes = dev.limit - in_use;  // in_use <= limit always holds
    const uint64_t available = plugin::host::memory_available();
    if (available != 0 && available < free_bytes) free_bytes = available;
    *out_free = free_bytes;
    *out_total = dev.desc.memory_total;
  });
}

dlrt_status* mem_alloc(dlrt_device* device, size_t bytes, size_t alignment, void** out_ptr) {
  if (out_ptr != nullptr) *out_ptr = nullptr;
  return guard([&] {
    Device& dev = device_of(device);
    plugin::require(out_ptr, "out_ptr");
    if (bytes == 0)
      fail(DLRT_INVALID_ARGUMENT,
           prefix() + "mem_alloc of 0 bytes on device " + dev.label + ", expected bytes > 0");
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > kMaxAlignment)
      fail(DLRT_INVALID_ARGUMENT,
           prefix() + "mem_alloc alignment " + std::to_string(alignment) + " on device " +
               dev.label + ", expected a power of two <= " + std::to_string(kMaxAlignment));
    const size_t align = alignment < kMinAlignment ? kMinAlignment : alignment;
    // aligned_allocate (std::aligned_alloc) wants a size that is a multiple of the alignment.
    if (bytes > SIZE_MAX - align)
      fail(DLRT_RESOURCE_EXHAUSTED, prefix() + "mem_alloc of " + std::to_string(bytes) +
                                        " bytes on device " + dev.label + " is too large");
    const size_t rounded = (bytes + align - 1) / align * align;

    // Reserve in the budget first, so concurrent allocations cannot both squeeze past it.
    {
      std::lock_guard<std::mutex> lock(dev.mu);
      if (rounded > dev.limit - dev.in_use)
        fail(DLRT_RESOURCE_EXHAUSTED,
             prefix() + "device " + dev.label + ": cannot allocate " + std::to_string(bytes) +
                 " bytes (" + std::to_string(rounded) + " aligned): " + std::to_string(dev.in_use) +
                 " bytes in use of a limit of " + std::to_string(dev.limit) + " bytes" +
                 (device->plugin->config.memory_limit_from_option
                      ? " (option memory_mb=" + std::to_string(dev.limit >> 20) + ")"
                      : " (the host's memory)"));
      dev.in_use += rounded;
    }
    void* p = plugin::aligned_allocate(align, rounded);
    std::lock_guard<std::mutex> lock(dev.mu);
    if (p == nullptr) {
      dev.in_use -= rounded;
      fail(DLRT_RESOURCE_EXHAUSTED, prefix() + "device " + dev.label +
                                        ": the host could not allocate " + std::to_string(rounded) +
                                        " bytes (aligned_alloc failed)");
    }
    try {
      dev.allocations.emplace(reinterpret_cast<uintptr_t>(p), rounded);
    } catch (...) {
      dev.in_use -= rounded;
      plugin::aligned_release(p);
      throw;
    }
    *out_ptr = p;
  });
}

// Freeing NULL is a no-op; freeing a pointer this device did not allocate is logged and
// ignored (never a crash, never a double free).
void mem_free(dlrt_device* device, void* ptr) {
  plugin::guard_void("mem_free", [&] {
    if (ptr == nullptr) return;
    Device& dev = device_of(device);
    std::lock_guard<std::mutex> lock(dev.mu);
    auto it = dev.allocations.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == dev.allocations.end())
      fail(DLRT_INVALID_ARGUMENT, prefix() + hex(ptr) +
                                      " is not the start of a live allocation on device " +
                                      dev.label + " (double free, or another device's memory?)");
    dev.in_use -= it->second;
    dev.allocations.erase(it);
    plugin::aligned_release(ptr);
  });
}

namespace {

// Shared checks of every copy: device, stream (if any) on that device.
Device& copy_prelude(dlrt_device* device, dlrt_stream* stream, const char* entry) {
  Device& dev = device_of(device);
  if (stream != nullptr) check_stream_device(stream, device, entry);
  return dev;
}

// Whether `ptr` lies inside one of `dev`'s live allocations.
bool owns(Device& dev, const void* ptr) {
  const auto p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(dev.mu);
  auto it = dev.allocations.upper_bound(p);
  if (it == dev.allocations.begin()) return false;
  --it;
  return p < it->first + it->second;
}

// The device whose memory a device-to-device copy reads. The source may be another device of
// this plugin instance: the host copies between two of a plugin's devices with memcpy_d2d on
// the destination (after waiting for the source stream's event), as cudaMemcpyAsync does
// between GPUs. A pointer no device owns is reported against the copy's own device.
Device& source_device(dlrt_device* device, const void* src) {
  for (auto& d : device->plugin->devices)
    if (owns(*d, src)) return *d;
  return *device->dev;
}

void check_host(const void* p, size_t bytes, const char* what) {
  if (p == nullptr)
    fail(DLRT_INVALID_ARGUMENT, prefix() + what + " is NULL (" + std::to_string(bytes) + " bytes)");
}

}  // namespace

dlrt_status* memcpy_h2d(dlrt_device* device, void* dst, const void* src, size_t bytes,
                        dlrt_stream* stream) {
  return guard([&] {
    Device& dev = copy_prelude(device, stream, "memcpy_h2d");
    if (bytes == 0) return;
    check_device_range(dev, dst, bytes, "memcpy_h2d dst");
    check_host(src, bytes, "memcpy_h2d src");
    run_or_record(stream, [=] { std::memcpy(dst, src, bytes); });
  });
}

dlrt_status* memcpy_d2h(dlrt_device* device, void* dst, const void* src, size_t bytes,
                        dlrt_stream* stream) {
  return guard([&] {
    Device& dev = copy_prelude(device, stream, "memcpy_d2h");
    if (bytes == 0) return;
    check_host(dst, bytes, "memcpy_d2h dst");
    check_device_range(dev, src, bytes, "memcpy_d2h src");
    run_or_record(stream, [=] { std::memcpy(dst, src, bytes); });
  });
}

// memmove, not memcpy: the host may copy between overlapping parts of one allocation.
dlrt_status* memcpy_d2d(dlrt_device* device, void* dst, const void* src, size_t bytes,
                        dlrt_stream* stream) {
  return guard([&] {
    Device& dev = copy_prelude(device, stream, "memcpy_d2d");
    if (bytes == 0) return;
    check_device_range(dev, dst, bytes, "memcpy_d2d dst");
    check_device_range(source_device(device, src), src, bytes, "memcpy_d2d src");
    run_or_record(stream, [=] { std::memmove(dst, src, bytes); });
  });
}

dlrt_status* memset_device(dlrt_device* device, void* dst, int32_t byte_value, size_t bytes,
                           dlrt_stream* stream) {
  return guard([&] {
    Device& dev = copy_prelude(device, stream, "memset");
    if (byte_value < 0 || byte_value > 255)
      fail(DLRT_INVALID_ARGUMENT,
           prefix() + "memset byte_value " + std::to_string(byte_value) + ", expected 0..255");
    if (bytes == 0) return;
    check_device_range(dev, dst, bytes, "memset dst");
    run_or_record(stream, [=] { std::memset(dst, byte_value, bytes); });
  });
}

}  // namespace dlrt::reference
