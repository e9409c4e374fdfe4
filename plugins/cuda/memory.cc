// memory.cc: device memory, copies, memset and pinned host memory.
//
// Device memory is plain cudaMalloc: no managed (unified) memory, whose page faults would
// hide transfers, and no pool here: the core's allocator carves its own arenas out of large
// allocations (docs/design.md section 4), so this layer stays thin.
//
// Copies and memset with `stream` NULL are synchronous: they run on the calling thread's
// per-thread stream (cudaStreamPerThread) and return when it has finished. They are NOT
// ordered after work on the plugin's streams (which are non-blocking): a caller that reads a
// buffer some stream writes synchronises that stream (or waits for an event) first.
// With a stream, they are enqueued and ordered with that stream's other work.
#include <cstdint>
#include <cstdio>
#include <string>

#include "cuda_plugin.hpp"

namespace dlrt::cuda {
namespace {

// cudaMalloc returns pointers aligned to at least 256 bytes.
constexpr size_t kCudaMallocAlignment = 256;

std::string gib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(1ull << 30));
  return buf;
}

// One synchronous or stream-ordered transfer of `bytes` of kind `kind`.
void copy(dlrt_device* device, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
          dlrt_stream* stream, const char* entry) {
  plugin::require(device, "device");
  if (bytes == 0) return;
  plugin::require(dst, "dst");
  plugin::require(src, "src");
  set_device(device->ordinal);
  const std::string what = device->label + " " + entry + " of " + std::to_string(bytes) + " bytes";
  if (stream != nullptr) {
    check_same_device(device, stream, entry);
    CUDA_CHECK_MSG(cudaMemcpyAsync(dst, src, bytes, kind, stream->stream), what);
    return;
  }
  CUDA_CHECK_MSG(cudaMemcpyAsync(dst, src, bytes, kind, cudaStreamPerThread), what);
  CUDA_CHECK_MSG(cudaStreamSynchronize(cudaStreamPerThread), what);
}

}  // namespace

dlrt_status* memory_info(dlrt_device* device, uint64_t* out_free, uint64_t* out_total) noexcept {
  return plugin::guard([&] {
    plugin::require(out_free, "out_free");
    plugin::require(out_total, "out_total");
    *out_free = *out_total = 0;
    plugin::require(device, "device");
    set_device(device->ordinal);
    size_t free = 0, total = 0;
    CUDA_CHECK_MSG(cudaMemGetInfo(&free, &total), device->label + " memory_info");
    *out_free = free;
    *out_total = total;
  });
}

dlrt_status* mem_alloc(dlrt_device* device, size_t bytes, size_t alignment,
                       void** out_ptr) noexcept {
  return plugin::guard([&] {
    plugin::require(out_ptr, "out_ptr");
    *out_ptr = nullptr;
    plugin::require(device, "device");
    if (bytes == 0)
      plugin::fail(DLRT_INVALID_ARGUMENT, "cuda: mem_alloc: bytes is 0, expected > 0");
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096)
      plugin::fail(DLRT_INVALID_ARGUMENT, "cuda: mem_alloc: alignment is " +
                                              std::to_string(alignment) +
                                              ", expected a power of two <= 4096");
    set_device(device->ordinal);
    // Alignments above cudaMalloc's are met by over-allocating and remembering the base
    // pointer; cudaMalloc's are in practice far more aligned, so this is rare.
    const size_t pad = alignment > kCudaMallocAlignment ? alignment - 1 : 0;
    if (bytes > SIZE_MAX - pad)
      plugin::fail(DLRT_RESOURCE_EXHAUSTED, "cuda: mem_alloc: " + std::to_string(bytes) +
                                                " bytes cannot be aligned to " +
                                                std::to_string(alignment));
    void* base = nullptr;
    cudaError_t err = cudaMalloc(&base, bytes + pad);
    if (err != cudaSuccess) {
      std::string what = device->label + " mem_alloc of " + std::to_string(bytes) + " bytes";
      size_t free = 0, total = 0;
      if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        if (cudaMemGetInfo(&free, &total) == cudaSuccess)
          what += " (" + gib(free) + " free of " + gib(total) + ")";
        else (void)cudaGetLastError();
      }
      throw_cuda(err, "cudaMalloc(&base, bytes + pad)", __FILE__, __LINE__, what);
    }
    if (pad == 0) {  // cudaMalloc's own alignment suffices
      *out_ptr = base;
      return;
    }
    const auto addr = reinterpret_cast<uintptr_t>(base);
    void* aligned = reinterpret_cast<void*>((addr + alignment - 1) & ~uintptr_t(alignment - 1));
    if (aligned != base) {  // mem_free must find the pointer cudaMalloc returned
      try {
        std::lock_guard<std::mutex> lock(device->mu);
        device->padded[aligned] = base;
      } catch (...) {
        (void)cudaFree(base);
        throw;
      }
    }
    *out_ptr = aligned;
  });
}

void mem_free(dlrt_device* device, void* ptr) noexcept {
  plugin::guard_void("mem_free", [&] {
    if (device == nullptr || ptr == nullptr) return;
    void* base = ptr;
    {
      std::lock_guard<std::mutex> lock(device->mu);
      auto it = device->padded.find(ptr);
      if (it != device->padded.end()) {
        base = it->second;
        device->padded.erase(it);
      }
    }
    set_device(device->ordinal);
    CUDA_CHECK_MSG(cudaFree(base), device->label + " mem_free");
  });
}

dlrt_status* memcpy_h2d(dlrt_device* device, void* dst, const void* src, size_t bytes,
                        dlrt_stream* stream) noexcept {
  return plugin::guard(
      [&] { copy(device, dst, src, bytes, cudaMemcpyHostToDevice, stream, "memcpy_h2d"); });
}

dlrt_status* memcpy_d2h(dlrt_device* device, void* dst, const void* src, size_t bytes,
                        dlrt_stream* stream) noexcept {
  return plugin::guard(
      [&] { copy(device, dst, src, bytes, cudaMemcpyDeviceToHost, stream, "memcpy_d2h"); });
}

dlrt_status* memcpy_d2d(dlrt_device* device, void* dst, const void* src, size_t bytes,
                        dlrt_stream* stream) noexcept {
  return plugin::guard(
      [&] { copy(device, dst, src, bytes, cudaMemcpyDeviceToDevice, stream, "memcpy_d2d"); });
}

dlrt_status* memset(dlrt_device* device, void* dst, int32_t byte_value, size_t bytes,
                    dlrt_stream* stream) noexcept {
  return plugin::guard([&] {
    plugin::require(device, "device");
    if (bytes == 0) return;
    plugin::require(dst, "dst");
    set_device(device->ordinal);
    const std::string what = device->label + " memset of " + std::to_string(bytes) + " bytes";
    const int value = byte_value & 0xff;  // like memset(3): the low byte of the value
    if (stream != nullptr) {
      check_same_device(device, stream, "memset");
      CUDA_CHECK_MSG(cudaMemsetAsync(dst, value, bytes, stream->stream), what);
      return;
    }
    CUDA_CHECK_MSG(cudaMemsetAsync(dst, value, bytes, cudaStreamPerThread), what);
    CUDA_CHECK_MSG(cudaStreamSynchronize(cudaStreamPerThread), what);
  });
}

dlrt_status* host_alloc_pinned(dlrt_device* device, size_t bytes, void** out_ptr) noexcept {
  return plugin::guard([&] {
    plugin::require(out_ptr, "out_ptr");
    *out_ptr = nullptr;
    plugin::require(device, "device");
    if (bytes == 0)
      plugin::fail(DLRT_INVALID_ARGUMENT, "cuda: host_alloc_pinned: bytes is 0, expected > 0");
    set_device(device->ordinal);
    // cudaMallocHost with the "portable" flag: page-locked for every GPU of the process, not
    // only the current one, since the host may hand the buffer to any device of this plugin.
    CUDA_CHECK_MSG(cudaHostAlloc(out_ptr, bytes, cudaHostAllocPortable),
                   device->label + " host_alloc_pinned of " + std::to_string(bytes) + " bytes");
  });
}

void host_free_pinned(dlrt_device* device, void* ptr) noexcept {
  plugin::guard_void("host_free_pinned", [&] {
    if (ptr == nullptr) return;
    if (device != nullptr) set_device(device->ordinal);
    CUDA_CHECK(cudaFreeHost(ptr));
  });
}

}  // namespace dlrt::cuda
