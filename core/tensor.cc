// tensor.cc: see tensor.hpp.
#include "tensor.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <utility>

#include "context.hpp"
#include "eager.hpp"
#include "ops/shape_util.hpp"
#include "plugin_call.hpp"
#include "status.hpp"

namespace dlrt::core {

size_t dtype_size(dlrt_dtype dtype) { return dlrt_dtype_size(dtype); }

size_t dense_byte_size(const ops::TensorType& type) {
  size_t bytes = dtype_size(type.dtype);
  if (bytes == 0)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{} is not a valid dtype", ops::dtype_name(type.dtype)));
  for (int64_t d : type.dims) {
    if (d < 1 || __builtin_mul_overflow(bytes, static_cast<size_t>(d), &bytes))
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("a tensor of {} does not fit in memory", ops::to_string(type)));
  }
  return bytes;
}

ops::TensorType tensor_type_for_create(const char* who, const dlrt_tensor_desc& desc) {
  ops::Result<ops::TensorType> t = ops::tensor_type_from_c(who, "desc", desc);
  if (!t.ok()) fail(t.status());
  if (!ops::is_valid_dtype(t->dtype))
    fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: desc has dtype {}, not a valid dlrt_dtype", who,
                                            static_cast<int32_t>(t->dtype)));
  for (int a = 0; a < t->rank(); ++a)
    if (t->dims[a] < 1)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: desc has dim {} = {} in {}, expected >= 1 "
                                              "(dlrt has no empty tensors)",
                                              who, a, t->dims[a], ops::format_dims(t->dims)));
  if (DLRT_HAS_FIELD(dlrt_tensor_desc, layout, desc.struct_size) &&
      desc.layout != DLRT_LAYOUT_DENSE)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: desc has layout {}; tensors made through the "
                                            "API are dense (DLRT_LAYOUT_DENSE)",
                                            who, desc.layout));
  dense_byte_size(*t);  // throws when it overflows
  return std::move(*t);
}

void Tensor::describe() {
  bytes_ = dense_byte_size(type_);
  desc_.struct_size = sizeof desc_;
  desc_.dtype = type_.dtype;
  desc_.rank = type_.rank();
  for (int a = 0; a < type_.rank(); ++a) desc_.dims[a] = type_.dims[a];
  desc_.layout = DLRT_LAYOUT_DENSE;
}

Tensor::Tensor(Context& context, size_t device, ops::TensorType type)
    : context_(&context), device_(device), type_(std::move(type)) {
  describe();
  auto [api, handle] = context.device_handle(device);
  api_ = api;
  handle_ = handle;
  buffer_ = context.eager().allocate(device, bytes_);
}

Tensor::Tensor(Context& context, size_t device, ops::TensorType type, void* data,
               void (*release)(void*), void* release_arg)
    : context_(&context), device_(device), type_(std::move(type)) {
  describe();
  auto [api, handle] = context.device_handle(device);  // OUT_OF_RANGE for a bad device
  if (!device_has_host_memory(context, device))
    fail(DLRT_FAILED_PRECONDITION,
         fmt::format("dlrt_tensor_wrap_host: {} does not declare host memory (device attribute "
                     "host_memory = 1), so its kernels cannot read caller memory; make a tensor "
                     "with dlrt_tensor_create and dlrt_tensor_write the bytes into it",
                     context.device_name(device)));
  if (data == nullptr) fail(DLRT_INVALID_ARGUMENT, "dlrt_tensor_wrap_host: data is NULL");
  const size_t align = dtype_size(type_.dtype);
  if (reinterpret_cast<uintptr_t>(data) % align != 0)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("dlrt_tensor_wrap_host: data {} is not aligned to its {}-byte elements ({}); "
                     "copy it into an aligned buffer or a dlrt_tensor_create tensor",
                     data, align, ops::dtype_name(type_.dtype)));
  api_ = api;
  handle_ = handle;
  borrowed_ = data;
  release_ = release;
  release_arg_ = release_arg;
}

Tensor::~Tensor() {
  if (borrowed_ == nullptr) {
    context_->eager().release(buffer_);
  } else if (release_ != nullptr) {
    release_(release_arg_);
  }
}

void* Tensor::host_data() const {
  if (!device_has_host_memory(*context_, device_))
    fail(DLRT_FAILED_PRECONDITION,
         fmt::format("dlrt_tensor_host_data: the tensor lives on {}, which does not declare host "
                     "memory (device attribute host_memory = 1); read it with dlrt_tensor_read",
                     context_->device_name(device_)));
  return data();
}

bool device_has_host_memory(const Context& context, size_t device) {
  for (const dlrt_attr* a : context.desc_of(device).attr_ptrs)
    if (a != nullptr && a->name != nullptr && std::string(a->name) == "host_memory")
      return (a->type == DLRT_ATTR_INT || a->type == DLRT_ATTR_BOOL) && a->i == 1;
  return false;
}

void Tensor::write(const void* src, size_t bytes) {
  if (bytes != bytes_)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("dlrt_tensor_write: {} bytes given, the tensor {} "
                                            "holds {}",
                                            bytes, ops::to_string(type_), bytes_));
  plugin_call(fmt::format("dlrt_tensor_write to {}: memcpy_h2d", context_->device_name(device_)),
              [&] { return api_->memcpy_h2d(handle_, data(), src, bytes, nullptr); });
}

void Tensor::read(void* dst, size_t bytes) const {
  if (bytes != bytes_)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("dlrt_tensor_read: {} bytes asked for, the tensor "
                                            "{} holds {}",
                                            bytes, ops::to_string(type_), bytes_));
  plugin_call(fmt::format("dlrt_tensor_read from {}: memcpy_d2h", context_->device_name(device_)),
              [&] { return api_->memcpy_d2h(handle_, dst, data(), bytes, nullptr); });
}

}  // namespace dlrt::core
