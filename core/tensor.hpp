// tensor.hpp: what a dlrt_tensor is inside: one device buffer and its descriptor.
//
// A tensor lives on one visible (possibly logical) device of one context. Its memory comes
// from the device's arena (Context::arena: alignment 256, the logical device's limit) through
// the context's Eager state, which counts live tensors. write/read are synchronous copies
// (memcpy_h2d / memcpy_d2h with stream NULL).
//
// A tensor may instead borrow caller memory (the second constructor, dlrt_tensor_wrap_host):
// only on a device whose memory is the host's (device attribute "host_memory" = 1, plugin.h),
// where kernels and copies can take any host pointer. Nothing is allocated then; the caller's
// release function runs when the tensor is destroyed.
//
// Lifetime: tensors must be destroyed before their context (dlrt.h says so); a context that
// is destroyed with tensors alive logs a warning, and their memory goes with the devices.
// Threads: a tensor is externally synchronised (one thread writes it at a time); creating and
// destroying tensors of one context from several threads is safe.
#pragma once

#include <dlrt/dlrt.h>
#include <dlrt/plugin.h>

#include <cstddef>

#include "memory/arena.hpp"
#include "ops/op_def.hpp"

namespace dlrt::core {

class Context;

// Bytes of one element of `dtype`; 0 for an invalid dtype.
size_t dtype_size(dlrt_dtype dtype);

// The type a caller's descriptor describes, checked for a tensor to be made of it: readable
// struct_size, rank 0..DLRT_MAX_RANK, a valid dtype, every dim >= 1, a dense layout, and a
// byte size that fits in size_t. Throws INVALID_ARGUMENT starting with `who`.
ops::TensorType tensor_type_for_create(const char* who, const dlrt_tensor_desc& desc);

// Bytes of a dense tensor of `type` (checked against overflow; throws INVALID_ARGUMENT).
size_t dense_byte_size(const ops::TensorType& type);

class Tensor {
 public:
  // Allocates a tensor of `type` on registry device `device`. Throws OUT_OF_RANGE for a bad
  // device, RESOURCE_EXHAUSTED naming the device and the request, or the plugin's open error.
  Tensor(Context& context, size_t device, ops::TensorType type);
  // Borrows `data` (byte_size() bytes of caller memory, aligned to the element size) on
  // registry device `device`, which must have host memory. `release(release_arg)` is called
  // once when the tensor is destroyed (release may be null). Throws OUT_OF_RANGE for a bad
  // device, FAILED_PRECONDITION naming a device without host memory, INVALID_ARGUMENT for a
  // null or misaligned pointer; on a throw `release` is not called (the caller keeps it).
  Tensor(Context& context, size_t device, ops::TensorType type, void* data, void (*release)(void*),
         void* release_arg);
  ~Tensor();
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  Context& context() const { return *context_; }
  size_t device() const { return device_; }
  const ops::TensorType& type() const { return type_; }
  const dlrt_tensor_desc& desc() const { return desc_; }
  size_t byte_size() const { return bytes_; }
  void* data() const { return borrowed_ != nullptr ? borrowed_ : buffer_.data(); }
  bool borrowed() const { return borrowed_ != nullptr; }
  // The bytes themselves when the device's memory is the host's (readable in place, valid
  // while the tensor lives); FAILED_PRECONDITION naming the device otherwise.
  void* host_data() const;

  // Synchronous copies of exactly byte_size() bytes; INVALID_ARGUMENT for another count.
  void write(const void* src, size_t bytes);
  void read(void* dst, size_t bytes) const;

 private:
  void describe();  // bytes_ and desc_ from type_ (dense); throws for a type too large

  Context* context_;
  size_t device_;
  ops::TensorType type_;
  dlrt_tensor_desc desc_{};
  size_t bytes_ = 0;
  const dlrt_plugin_api* api_ = nullptr;
  dlrt_device* handle_ = nullptr;
  Buffer buffer_;
  void* borrowed_ = nullptr;  // caller memory (the borrowing constructor), else null
  void (*release_)(void*) = nullptr;
  void* release_arg_ = nullptr;
};

// True when registry device `device` of `context` declares host memory (the device
// attribute "host_memory", an int or bool equal to 1; plugin.h).
bool device_has_host_memory(const Context& context, size_t device);

}  // namespace dlrt::core

// The opaque handle of dlrt.h is the Tensor itself.
struct dlrt_tensor : dlrt::core::Tensor {
  using dlrt::core::Tensor::Tensor;
};
