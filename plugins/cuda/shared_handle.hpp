// shared_handle.hpp: one library handle (cuDNN, cuBLASLt) per GPU, shared by every kernel of
// the plugin on that GPU, instead of one per kernel.
//
// Why: a handle is not free (cudnnCreate loads kernels and allocates device memory; a model
// has dozens of convolution, pooling and matmul kernels), and NVIDIA's guidance is one per
// thread/device, reused. Ownership: a kernel holds a shared_ptr to its device's handle,
// taken in create; the handle is destroyed with the last kernel that holds it, and made
// again by the next create. Concurrency: kernels are externally synchronised one by one, but
// two kernels of one GPU may run at the same time from two host threads on two streams, and
// a cuDNN handle carries its stream (cudnnSetStream) between calls. So every use — the
// algorithm queries in create and the calls of one run — holds the handle's mutex; it only
// serialises the host-side enqueue, which is microseconds, never the GPU work.
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <mutex>

#include "cuda_status.hpp"

namespace dlrt::cuda {

template <typename H>
class SharedHandle {
 public:
  // The current device's handle, made on first use. `create` fails by throwing.
  template <typename Create, typename Destroy>
  static SharedHandle for_current_device(Create&& create, Destroy destroy) {
    int ordinal = 0;
    CUDA_CHECK(cudaGetDevice(&ordinal));
    static std::mutex registry_mu;
    static std::map<int, std::weak_ptr<PerDevice>> registry;
    std::lock_guard<std::mutex> lock(registry_mu);
    std::shared_ptr<PerDevice> d = registry[ordinal].lock();
    if (!d) {
      d = std::make_shared<PerDevice>();
      d->handle = create();  // throws on failure: nothing registered
      d->destroy = destroy;
      registry[ordinal] = d;
    }
    SharedHandle h;
    h.d_ = std::move(d);
    return h;
  }

  H get() const { return d_->handle; }
  operator H() const { return d_->handle; }  // NOLINT: passes straight into library calls
  // Holds the handle for a sequence of calls (create's queries, one run's calls).
  std::unique_lock<std::mutex> lock() const { return std::unique_lock<std::mutex>(d_->mu); }

 private:
  struct PerDevice {
    H handle{};
    void (*destroy)(H) = nullptr;
    std::mutex mu;
    ~PerDevice() {
      if (destroy != nullptr) destroy(handle);
    }
  };
  std::shared_ptr<PerDevice> d_;
};

}  // namespace dlrt::cuda
