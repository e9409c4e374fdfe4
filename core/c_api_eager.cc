// c_api_eager.cc: the exported tensor and eager-op functions of dlrt.h. Thin shells over
// tensor.hpp and eager.hpp, each `guarded` so nothing throws out (see c_api_util.hpp).
#include <dlrt/dlrt.h>

#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "c_api_util.hpp"
#include "context.hpp"
#include "eager.hpp"
#include "ops/op_examples.hpp"
#include "ops/op_registry.hpp"
#include "status.hpp"
#include "tensor.hpp"

using dlrt::core::fail;
using dlrt::core::guarded;
using dlrt::core::require;
using dlrt::core::write_out;

namespace {

// The registry's ops, sorted by name; OpDefs live as long as the process.
const std::vector<const dlrt::ops::OpDef*>& op_list() {
  static const std::vector<const dlrt::ops::OpDef*> ops = dlrt::ops::all_ops();
  return ops;
}

}  // namespace

extern "C" {

// ---- tensors --------------------------------------------------------------------------------

DLRT_API dlrt_status* dlrt_tensor_create(dlrt_context* context, size_t device_index,
                                         const dlrt_tensor_desc* desc, dlrt_tensor** out_tensor) {
  if (out_tensor != nullptr) *out_tensor = nullptr;
  return guarded([&] {
    require(context, "context");
    require(desc, "desc");
    require(out_tensor, "out_tensor");
    context->check_device(device_index);
    dlrt::ops::TensorType type = dlrt::core::tensor_type_for_create("dlrt_tensor_create", *desc);
    *out_tensor = new dlrt_tensor(*context, device_index, std::move(type));
  });
}

DLRT_API void dlrt_tensor_destroy(dlrt_tensor* tensor) {
  try {
    delete tensor;
  } catch (...) {  // destructors do not throw; this is the belt to their braces
  }
}

DLRT_API dlrt_status* dlrt_tensor_get_desc(const dlrt_tensor* tensor, dlrt_tensor_desc* out) {
  return guarded([&] {
    require(tensor, "tensor");
    require(out, "out");
    write_out(out, tensor->desc(), "out");
  });
}

DLRT_API size_t dlrt_tensor_device_index(const dlrt_tensor* tensor) {
  return tensor == nullptr ? 0 : tensor->device();
}

DLRT_API size_t dlrt_tensor_byte_size(const dlrt_tensor* tensor) {
  return tensor == nullptr ? 0 : tensor->byte_size();
}

DLRT_API dlrt_status* dlrt_tensor_write(dlrt_tensor* tensor, const void* src, size_t bytes) {
  return guarded([&] {
    require(tensor, "tensor");
    require(src, "src");
    tensor->write(src, bytes);
  });
}

DLRT_API dlrt_status* dlrt_tensor_read(const dlrt_tensor* tensor, void* dst, size_t bytes) {
  return guarded([&] {
    require(tensor, "tensor");
    require(dst, "dst");
    tensor->read(dst, bytes);
  });
}

DLRT_API dlrt_status* dlrt_tensor_host_data(const dlrt_tensor* tensor, void** out_data) {
  if (out_data != nullptr) *out_data = nullptr;
  return guarded([&] {
    require(tensor, "tensor");
    require(out_data, "out_data");
    *out_data = tensor->host_data();
  });
}

DLRT_API dlrt_status* dlrt_tensor_wrap_host(dlrt_context* context, size_t device_index,
                                            const dlrt_tensor_desc* desc, void* data,
                                            void (*release)(void*), void* release_arg,
                                            dlrt_tensor** out_tensor) {
  if (out_tensor != nullptr) *out_tensor = nullptr;
  return guarded([&] {
    require(context, "context");
    require(desc, "desc");
    require(out_tensor, "out_tensor");
    context->check_device(device_index);
    dlrt::ops::TensorType type = dlrt::core::tensor_type_for_create("dlrt_tensor_wrap_host", *desc);
    *out_tensor =
        new dlrt_tensor(*context, device_index, std::move(type), data, release, release_arg);
  });
}

// ---- ops ------------------------------------------------------------------------------------

DLRT_API dlrt_status* dlrt_op_infer(dlrt_context* context, const char* op,
                                    const dlrt_tensor_desc* const* inputs, size_t num_inputs,
                                    const dlrt_attr* const* attrs, size_t num_attrs,
                                    dlrt_tensor_desc* out_descs, size_t max_outputs,
                                    size_t* out_num_outputs) {
  if (out_num_outputs != nullptr) *out_num_outputs = 0;
  return guarded([&] {
    require(context, "context");
    require(out_num_outputs, "out_num_outputs");
    const dlrt::ops::OpInstance inst = dlrt::core::instantiate_from_c(
        op, dlrt::core::input_types_from_c(op, inputs, num_inputs), attrs, num_attrs);
    const size_t n = inst.outputs().size();
    *out_num_outputs = n;
    if (n > max_outputs)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("{}: the op has {} outputs, max_outputs is {}", op, n, max_outputs));
    if (n > 0) require(out_descs, "out_descs");
    for (size_t o = 0; o < n; ++o)
      write_out(&out_descs[o], *inst.desc().outputs[o], "out_descs[i]");
  });
}

DLRT_API dlrt_status* dlrt_op_supported(dlrt_context* context, const char* op, size_t device_index,
                                        const dlrt_tensor_desc* const* inputs, size_t num_inputs,
                                        const dlrt_attr* const* attrs, size_t num_attrs) {
  return guarded([&] {
    require(context, "context");
    context->check_device(device_index);
    const dlrt::ops::OpInstance inst = dlrt::core::instantiate_from_c(
        op, dlrt::core::input_types_from_c(op, inputs, num_inputs), attrs, num_attrs);
    dlrt::core::check_supported(*context, inst, device_index);
  });
}

DLRT_API dlrt_status* dlrt_op_run(dlrt_context* context, const char* op, size_t device_index,
                                  const dlrt_tensor* const* inputs, size_t num_inputs,
                                  const dlrt_attr* const* attrs, size_t num_attrs,
                                  dlrt_tensor** outputs, size_t num_outputs) {
  return guarded([&] {
    require(context, "context");
    dlrt::core::run_op(*context, op, device_index, inputs, num_inputs, attrs, num_attrs, outputs,
                       num_outputs);
  });
}

DLRT_API size_t dlrt_op_count(void) {
  try {
    return op_list().size();
  } catch (...) {
    return 0;
  }
}

DLRT_API const char* dlrt_op_name(size_t index) {
  try {
    return index < op_list().size() ? op_list()[index]->name.c_str() : nullptr;
  } catch (...) {
    return nullptr;
  }
}

DLRT_API const char* dlrt_op_doc(size_t index) {
  try {
    return index < op_list().size() ? op_list()[index]->doc.c_str() : nullptr;
  } catch (...) {
    return nullptr;
  }
}

DLRT_API dlrt_status* dlrt_op_probe(dlrt_context* context, const char* op, size_t device_index) {
  return guarded([&] {
    require(context, "context");
    require(op, "op");
    context->check_device(device_index);
    dlrt::ops::Result<dlrt::ops::OpInstance> inst = dlrt::ops::instantiate_example(op);
    if (!inst.ok()) {
      if (dlrt::ops::find_op(op) == nullptr)
        fail(DLRT_NOT_FOUND, fmt::format("unknown op '{}'", op));
      fail(inst.status());
    }
    dlrt::core::check_supported(*context, *inst, device_index);
  });
}

}  // extern "C"
