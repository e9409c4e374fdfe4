// kernel_cache.hpp: prepared kernels of one physical device, keyed by the complete op
// descriptor.
//
// Preparing a kernel is the expensive part of running an op (a oneDNN primitive, a cuDNN
// plan, an algorithm search), so eager execution does it once per distinct descriptor: the
// op name, every input and output dtype, dims and layout, and every attribute value (the core
// always hands over complete attribute sets, so equal calls give equal keys). Each entry
// keeps its workspace, allocated once with the size kernel_create asked for.
//
// Not thread-safe: the owner (core::Eager) holds its context's eager mutex around every use.
// Kernels and workspaces are released by the destructor, which must run before the device
// is closed.
#pragma once

#include <dlrt/plugin.h>

#include <cstddef>
#include <map>
#include <string>

namespace dlrt::core {

// The cache key of `desc`: a string equal for two descriptors exactly when they describe the
// same op instance (strings are length-prefixed, floats printed to round trip).
std::string kernel_key(const dlrt_op_desc& desc);

struct CachedKernel {
  dlrt_kernel* kernel = nullptr;
  void* workspace = nullptr;  // NULL when workspace_bytes is 0
  size_t workspace_bytes = 0;
};

class KernelCache {
 public:
  // `device_name` ("/device:CPU:0") only names the device in error messages.
  KernelCache(const dlrt_plugin_api* api, dlrt_device* device, std::string device_name);
  ~KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The kernel for `desc`, created (kernel_create + workspace allocation) on first use.
  // Throws Error with the plugin's code, naming the op and the device; nothing is cached then.
  const CachedKernel& get(const dlrt_op_desc& desc);

  size_t size() const { return kernels_.size(); }
  // How many kernels this cache has created in its life (size() plus none evicted: the cache
  // never evicts today). Tests use it to see that repeated runs reuse one kernel.
  size_t created() const { return created_; }

 private:
  const dlrt_plugin_api* api_;
  dlrt_device* device_;
  std::string device_name_;
  std::map<std::string, CachedKernel> kernels_;
  size_t created_ = 0;
};

}  // namespace dlrt::core
