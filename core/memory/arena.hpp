// arena.hpp: per-device memory for the core — every byte the core takes from a plugin goes
// through the DeviceArena of its (logical) device: eager tensors, variables, executable
// buffers, kernel workspaces.
//
// Policy (DESIGN.md section 4, TensorFlow's memory options):
//   - grow on demand (default): allocations go to the plugin as they come and return to it
//     when freed (a caching/best-fit layer may sit here; the contract below does not change);
//   - growth off: the first allocation reserves `preallocate_fraction` of the physical
//     device's free memory (split between logical devices) and serves everything from it;
//   - a hard limit per logical device (logical device configs, DLRT_GPU_MEMORY_LIMIT_MB);
//   - out of memory (limit or plugin) is Error(RESOURCE_EXHAUSTED) naming the device, the
//     request, in-use, peak and limit; the arena stays usable and a smaller request succeeds.
//
// Thread-safe (one mutex per arena).
#pragma once

#include <dlrt/dlrt.h>
#include <dlrt/plugin.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace dlrt::core {

class DeviceArena;

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
  bool allow_growth = true;          // false: preallocate at first use
  double preallocate_fraction = 0.9; // of the physical device's free memory, when growth is off
  uint64_t limit = 0;                // bytes; 0 = none
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
  const std::string& device_name() const { return name_; }
  const dlrt_plugin_api* api() const { return api_; }
  dlrt_device* device() const { return device_; }

 private:
  friend class Buffer;
  void release(void* data, size_t size) noexcept;

  std::string name_;
  const dlrt_plugin_api* api_;
  dlrt_device* device_;
  ArenaOptions options_;
  mutable std::mutex mu_;
  ArenaStats stats_;
  struct Pool;                  // the preallocated block when growth is off
  std::unique_ptr<Pool> pool_;
};

}  // namespace dlrt::core
