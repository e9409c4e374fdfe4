// memory.cc: cpu device memory. The device is the host, so device memory is host memory:
// aligned_allocate (plugins/common/aligned_memory.hpp: std::aligned_alloc, or _aligned_malloc on
// Windows) with at least 64-byte (cache line, AVX-512 vector) alignment, and copies in any
// direction are memcpy, done before the call returns (streams are synchronous: cpu.hpp).
// memory_info reports the host's MemAvailable and MemTotal.
//
// Unlike the reference plugin, nothing is tracked per allocation: this is the fast path, and
// the reference plugin is where a host's pointer bugs are caught.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "aligned_memory.hpp"
#include "cpu.hpp"
#include "host_info.hpp"

namespace dlrt::cpu {

using plugin::fail;
using plugin::guard;

namespace {

constexpr size_t kMinAlignment = 64;
constexpr size_t kMaxAlignment = 4096;  // plugin.h: alignment is a power of two <= 4096

void check_device(dlrt_device* device) { plugin::require(device, "device"); }

// Shared checks of copies and memset: device, stream (if any) of that device, non-NULL buffers.
void prelude(dlrt_device* device, dlrt_stream* stream, const char* entry, const void* dst,
             const void* src, size_t bytes) {
  check_device(device);
  if (stream != nullptr) check_stream_device(stream, device, entry);
  if (bytes > 0 && (dst == nullptr || src == nullptr))
    fail(DLRT_INVALID_ARGUMENT, prefix() + entry + ": " + (dst == nullptr ? "dst" : "src") +
                                    " is NULL (" + std::to_string(bytes) + " bytes)");
}

}  // namespace

dlrt_status* memory_info(dlrt_device* device, uint64_t* out_free, uint64_t* out_total) {
  if (out_free != nullptr) *out_free = 0;
  if (out_total != nullptr) *out_total = 0;
  return guard([&] {
    check_device(device);
    plugin::require(out_free, "out_free");
    plugin::require(out_total, "out_total");
    *out_total = plugin::host::memory_total();
    *out_free = plugin::host::memory_available();
  });
}

dlrt_status* mem_alloc(dlrt_device* device, size_t bytes, size_t alignment, void** out_ptr) {
  if (out_ptr != nullptr) *out_ptr = nullptr;
  return guard([&] {
    check_device(device);
    plugin::require(out_ptr, "out_ptr");
    if (bytes == 0)
      fail(DLRT_INVALID_ARGUMENT, prefix() + "mem_alloc of 0 bytes, expected bytes > 0");
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > kMaxAlignment)
      fail(DLRT_INVALID_ARGUMENT,
           prefix() + "mem_alloc alignment " + std::to_string(alignment) +
               ", expected a power of two <= " + std::to_string(kMaxAlignment));
    const size_t align = alignment < kMinAlignment ? kMinAlignment : alignment;
    // aligned_alloc wants a size that is a multiple of the alignment: at most align - 1
    // bytes more.
    if (bytes > SIZE_MAX - align)
      fail(DLRT_RESOURCE_EXHAUSTED, prefix() + "mem_alloc of " + std::to_string(bytes) +
                                        " bytes: more than the address space holds");
    const size_t rounded = (bytes + align - 1) / align * align;
    void* p = plugin::aligned_allocate(align, rounded);
    if (p == nullptr)
      fail(DLRT_RESOURCE_EXHAUSTED,
           prefix() + "device CPU:0: cannot allocate " + std::to_string(bytes) + " bytes (" +
               std::to_string(plugin::host::memory_available()) +
               " bytes of host memory available)");
    *out_ptr = p;
  });
}

void mem_free(dlrt_device*, void* ptr) {
  plugin::guard_void("mem_free", [&] { plugin::aligned_release(ptr); });
}

dlrt_status* memcpy_h2d(dlrt_device* device, void* dst, const void* src, size_t bytes,
                        dlrt_stream* stream) {
  return guard([&] {
    prelude(device, stream, "memcpy_h2d", dst, src, bytes);
    if (bytes > 0) std::memcpy(dst, src, bytes);
  });
}

dlrt_status* memcpy_d2h(dlrt_device* device, void* dst, const void* src, size_t bytes,
                        dlrt_stream* stream) {
  return guard([&] {
    prelude(device, stream, "memcpy_d2h", dst, src, bytes);
    if (bytes > 0) std::memcpy(dst, src, bytes);
  });
}

// memmove: the host may copy between overlapping parts of one allocation.
dlrt_status* memcpy_d2d(dlrt_device* device, void* dst, const void* src, size_t bytes,
                        dlrt_stream* stream) {
  return guard([&] {
    prelude(device, stream, "memcpy_d2d", dst, src, bytes);
    if (bytes > 0) std::memmove(dst, src, bytes);
  });
}

dlrt_status* memset_device(dlrt_device* device, void* dst, int32_t byte_value, size_t bytes,
                           dlrt_stream* stream) {
  return guard([&] {
    prelude(device, stream, "memset", dst, dst, bytes);
    if (byte_value < 0 || byte_value > 255)
      fail(DLRT_INVALID_ARGUMENT,
           prefix() + "memset byte_value " + std::to_string(byte_value) + ", expected 0..255");
    if (bytes > 0) std::memset(dst, byte_value, bytes);
  });
}

}  // namespace dlrt::cpu
