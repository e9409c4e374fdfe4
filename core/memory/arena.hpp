// arena.hpp: per-device memory for the core — every byte the core takes from a plugin goes
// through the DeviceArena of its (logical) device: eager tensors, variables, executable
// buffers, kernel workspaces.
//
// Policy (docs/design.md section 4, TensorFlow's memory options):
//   - grow on demand (default): allocations go to the plugin as they come and return to it
//     when freed (a caching/best-fit layer may sit here; the contract below does not change);
//   - growth off: the first allocation reserves `preallocate_fraction` of the physical
//     device's free memory (split between logical devices) and serves everything from it;
//   - a hard limit per logical device (logical device configs, DLRT_GPU_MEMORY_LIMIT_MB);
//   - out of memory (limit or plugin) is Error(RESOURCE_EXHAUSTED) naming the device, the
//     request, in-use, peak and limit; the arena stays usable and a smaller request succeeds.
//
// Accounting (ArenaStats, dlrt_memory_stats): `in_use` counts the bytes callers asked for (a
// tensor of 800 bytes is 800 bytes in use), and the limit applies to it; every block is
// rounded up to kArenaAlignment inside, which `reserved` shows. Growth on keeps freed blocks
// in a small exact-size cache (sizes in kArenaAlignment steps, at most kArenaCacheBytes) so a
// training loop that frees and remakes the same shapes stops calling the plugin; the cache is
// emptied before the limit or the plugin would refuse a new block.
//
// Thread-safe (one mutex per arena). Plugin calls of growth mode run outside the mutex.
//
// Lifetime: the Context owns one arena per logical device (Context::arena) and destroys them
// after everything that holds a Buffer of theirs (eager state, graphs, executables, tensors
// must be gone by then) and before the devices close.
#pragma once

#include <dlrt/dlrt.h>
#include <dlrt/plugin.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace dlrt::core {

class DeviceArena;

// Every block starts on this boundary (what cuDNN/cuBLAS and oneDNN like best) and is a
// multiple of it.
inline constexpr size_t kArenaAlignment = 256;
// The most bytes of freed blocks a growing arena keeps for reuse.
inline constexpr uint64_t kArenaCacheBytes = uint64_t{64} << 20;

// "1572864 bytes (1.50 MiB)", "800 bytes": for messages.
std::string format_bytes(uint64_t bytes);

// A device allocation owned by its holder; returns to its arena when destroyed. Move-only.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  void* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return data_ == nullptr; }
  void reset();  // give the memory back now

 private:
  friend class DeviceArena;
  Buffer(DeviceArena* arena, void* data, size_t size) : arena_(arena), data_(data), size_(size) {}
  DeviceArena* arena_ = nullptr;
  void* data_ = nullptr;
  size_t size_ = 0;
};

struct ArenaOptions {
  bool allow_growth = true;           // false: preallocate at first use
  double preallocate_fraction = 0.9;  // of the physical device's free memory, when growth is off
  uint64_t limit = 0;                 // bytes; 0 = none
  // Growth off only: the logical devices sharing the physical device (each reserves 1/share
  // of the fraction), and the physical device's free bytes measured before any of them
  // reserved (0: ask the plugin's memory_info at first use). The reservation is
  //   min(limit or infinity, preallocate_fraction * physical_free / share).
  int32_t share = 1;
  uint64_t physical_free = 0;
};

struct ArenaStats {
  uint64_t in_use = 0;
  uint64_t peak = 0;
  uint64_t reserved = 0;  // taken from the plugin
  uint64_t limit = 0;
  uint64_t num_allocs = 0;  // calls to the plugin's mem_alloc
};

class DeviceArena {
 public:
  // `device_name` for messages ("/device:GPU:0"); api/device from Context::device_handle.
  DeviceArena(std::string device_name, const dlrt_plugin_api* api, dlrt_device* device,
              ArenaOptions options);
  ~DeviceArena();  // frees what it reserved; live Buffers must be gone (logged otherwise)
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  // `bytes` > 0, alignment 64 at least. `what` names the requester in an OOM message
  // ("tensor", "variable dense/kernel", "workspace of conv2d_1"). Throws RESOURCE_EXHAUSTED.
  Buffer allocate(size_t bytes, const char* what);
  ArenaStats stats() const;
  const ArenaOptions& options() const { return options_; }
  // Gives the cached free blocks (growth on) back to the plugin. The pool stays.
  void trim() noexcept;
  const std::string& device_name() const { return name_; }
  const dlrt_plugin_api* api() const { return api_; }
  dlrt_device* device() const { return device_; }

 private:
  friend class Buffer;
  void release(void* data, size_t size) noexcept;

  void* allocate_growing(size_t bytes, size_t rounded, const char* what);
  void* allocate_pooled(size_t bytes, size_t rounded, const char* what);  // mu_ held
  void reserve_pool(size_t bytes, const char* what);                      // mu_ held
  // Frees every cached block; returns how many bytes went back. mu_ must not be held.
  uint64_t drop_cache() noexcept;
  // RESOURCE_EXHAUSTED naming the device, the request, in-use, peak and limit (from `at`, a
  // snapshot read under mu_), and `why`.
  // "4096 bytes (4.00 KiB)", "none", or the limit and that it is larger than the device.
  std::string limit_text(uint64_t limit) const;
  [[noreturn]] void out_of_memory(const ArenaStats& at, size_t bytes, const char* what,
                                  const std::string& why) const;

  std::string name_;
  const dlrt_plugin_api* api_;
  dlrt_device* device_;
  ArenaOptions options_;
  mutable std::mutex mu_;
  ArenaStats stats_;
  // Growth on: freed blocks by their rounded size, kept for reuse; cached_ bytes in all.
  std::multimap<size_t, void*> cache_;
  uint64_t cached_ = 0;
  struct Pool;  // the preallocated block when growth is off
  std::unique_ptr<Pool> pool_;
};

}  // namespace dlrt::core
