// eager.hpp: running one op at a time, synchronously, on a named device (dlrt_op_run), and
// the device-side state that needs: tensor memory accounting, a kernel cache and a stream
// per physical device, and the random-number offset.
//
//   dlrt_op_run(op, device, inputs, attrs, outputs)
//     1. instantiate the op on the inputs' types and the attributes (core/ops: validation,
//        defaults, shape inference) -> the complete dlrt_op_desc;
//     2. check that every input and every caller-provided output lives on `device`, and that
//        each such output has the inferred type (aliasing an input only where the op allows);
//     3. ask the device's plugin op_supported (its UNIMPLEMENTED reason passes through);
//     4. create the missing outputs; get the kernel from the device's cache (kernel_create on
//        the first run of this exact descriptor, with its workspace allocated once);
//     5. kernel_run on the device's eager stream (created on first use) with rng_offset from
//        the context's counter, advanced by every run; stream_synchronize.
//   Anything that fails frees the outputs made in step 4 and leaves the caller's slots NULL.
//
// Threads: eager runs of one context are serialised by one mutex (the kernel caches, streams
// and counter are shared state; plugin streams are externally synchronised). Validation,
// op_supported, and tensor create/destroy do not take it. Finer locking (per device) is for
// the executor, which runs compiled graphs without this path.
//
// Lifetime: the context destroys its Eager state (kernels, workspaces, streams) before it
// closes its devices.
#pragma once

#include <dlrt/dlrt.h>
#include <dlrt/plugin.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "kernel_cache.hpp"
#include "memory/arena.hpp"
#include "ops/op_instance.hpp"

namespace dlrt::core {

class Context;

class Eager {
 public:
  explicit Eager(Context& context);
  ~Eager();
  Eager(const Eager&) = delete;
  Eager& operator=(const Eager&) = delete;

  // ---- tensor memory, per registry (logical) device ----
  // From the device's arena (Context::arena), which enforces the limit: RESOURCE_EXHAUSTED
  // names the device, the request, the bytes in use, the peak and the limit. Eager only
  // counts the live tensors.
  Buffer allocate(size_t device, size_t bytes);
  void release(Buffer& buffer) noexcept;  // gives it back to its arena, uncounted
  // The arena's in_use: every live allocation of the device (tensors, variables, executables).
  uint64_t bytes_in_use(size_t device) const;
  size_t live_tensors() const;

  // ---- runs ----
  // Steps 4-5 above for an instance already checked (steps 1-3): buffers in the order of the
  // descriptor. Throws Error naming the op and device.
  void run(const ops::OpInstance& instance, size_t device, const std::vector<const void*>& inputs,
           const std::vector<void*>& outputs);

  // For tests and tools: kernels created and cached on the physical device behind registry
  // device `device` (0 before its first run), and how many runs the context has made.
  size_t kernels_created(size_t device) const;
  size_t kernels_cached(size_t device) const;
  uint64_t runs() const;

 private:
  struct DeviceState {
    const dlrt_plugin_api* api = nullptr;
    dlrt_stream* stream = nullptr;
    std::unique_ptr<KernelCache> cache;
  };
  DeviceState& state_of(size_t device);  // caller holds run_mutex_

  Context& context_;
  mutable std::mutex run_mutex_;
  std::map<size_t, DeviceState> states_;  // by physical device index
  uint64_t rng_offset_ = 0;

  std::atomic<size_t> live_tensors_{0};
};

// ---- the C API's operations (c_api_eager.cc): each throws Error ----

// The TensorTypes of caller descriptors (dense layout required), messages naming `op`.
std::vector<ops::TensorType> input_types_from_c(const char* op,
                                                const dlrt_tensor_desc* const* inputs,
                                                size_t num_inputs);
// Converts the attributes (attr_from_c; a NULL entry or a name given twice is an error) and
// instantiates. Codes as ops::instantiate: NOT_FOUND for an unknown op, else INVALID_ARGUMENT.
ops::OpInstance instantiate_from_c(const char* op, const std::vector<ops::TensorType>& inputs,
                                   const dlrt_attr* const* attrs, size_t num_attrs);
// The device's op_supported for `instance`; an error carries the plugin's code and reason,
// prefixed "<op> on <device>: ".
void check_supported(Context& context, const ops::OpInstance& instance, size_t device);
// dlrt_op_run, steps 1-5.
void run_op(Context& context, const char* op, size_t device, const dlrt_tensor* const* inputs,
            size_t num_inputs, const dlrt_attr* const* attrs, size_t num_attrs,
            dlrt_tensor** outputs, size_t num_outputs);

}  // namespace dlrt::core
