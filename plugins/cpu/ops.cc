// ops.cc: op_supported and the kernel_* entries of the cpu plugin, over the kernel table (the
// rows the kernel files add, ops.hpp). An op without a row is answered UNIMPLEMENTED "no oneDNN kernel for op 'X' yet".
#include <string>
#include <vector>

#include "dnnl_status.hpp"
#include "ops.hpp"
#include "narrow_float.hpp"
#include "versioned.hpp"
#include "widening_kernel.hpp"

namespace dlrt::cpu {

using plugin::fail;
using plugin::guard;
using plugin::OpView;

namespace {

// A row, and whether it runs the op on f32 copies of its f16/bf16 operands
// (widening_kernel.hpp).
struct Resolved {
  const KernelDef* def = nullptr;
  bool widen = false;
};

// The descriptor is the schema's (docs/design.md, "What a plugin may trust"): a row's check
// answers only what its kernel can run (dtype, attribute values, sizes), and fills the cost.
// An op with f16/bf16 operands goes to the row's own 16-bit path when its check accepts them
// (oneDNN's bf16 primitives, the byte-moving loops), else to its f32 kernel between
// conversions; the reasons of both refusals are kept when neither runs it.
Resolved resolve(const dlrt_plugin& p, const OpView& op, dlrt_op_cost* cost) {
  plugin::require_known_version(op);
  for (const auto* list : {&op.inputs(), &op.outputs()})
    for (const plugin::TensorView& t : *list)
      if (!t.dense())
        fail(DLRT_UNIMPLEMENTED, prefix() + op.name() +
                                     " supports dense layouts only, got layout " +
                                     std::to_string(t.layout));
  if (const KernelDef* row = KernelRegistry::find(op.name())) {
    const KernelDef& k = *row;
    if (!op.has_narrow_float()) {
      k.check(op, p, cost);
      return {&k, false};
    }
    try {
      k.check(op, p, cost);
      return {&k, false};
    } catch (const plugin::Error& e) {
      if (e.code() != DLRT_UNIMPLEMENTED) throw;
    }
    const OpView wide = op.with_narrow_floats_as(DLRT_F32);
    k.check(wide, p, cost);
    // The conversions read and write every 16-bit operand once more, in f32 and 16 bits.
    for (const auto* list : {&op.inputs(), &op.outputs()})
      for (const plugin::TensorView& t : *list)
        if (plugin::is_narrow_float(t.dtype)) cost->bytes += 3.0 * static_cast<double>(t.bytes);
    return {&k, true};
  }
  fail(DLRT_UNIMPLEMENTED, prefix() + "no oneDNN kernel for op '" + op.name() + "' yet");
}

}  // namespace

dlrt_status* op_supported(dlrt_plugin* p, int32_t ordinal, const dlrt_op_desc* op,
                          dlrt_op_cost* out_cost) {
  return guard([&] {
    plugin::require(p, "plugin");
    if (!p->unavailable.empty()) fail(DLRT_UNAVAILABLE, p->unavailable);
    if (ordinal != 0)
      fail(DLRT_INVALID_ARGUMENT,
           prefix() + "device ordinal " + std::to_string(ordinal) + " is out of range, expected 0");
    const OpView view(op);
    dlrt_op_cost cost{};
    cost.struct_size = sizeof(dlrt_op_cost);
    resolve(*p, view, &cost);
    if (out_cost != nullptr) plugin::write_versioned(out_cost, cost, "out_cost");
  });
}

dlrt_status* kernel_create(dlrt_device* device, const dlrt_op_desc* op, dlrt_kernel** out_kernel,
                           size_t* out_workspace_bytes) {
  if (out_kernel != nullptr) *out_kernel = nullptr;
  if (out_workspace_bytes != nullptr) *out_workspace_bytes = 0;
  return guard([&] {
    plugin::require(device, "device");
    plugin::require(out_kernel, "out_kernel");
    plugin::require(out_workspace_bytes, "out_workspace_bytes");
    OpView view(op);
    dlrt_op_cost cost{};
    cost.struct_size = sizeof(dlrt_op_cost);
    const Resolved r = resolve(*device->plugin, view, &cost);
    // unique_ptr until handed over: a failure below releases the primitive.
    std::unique_ptr<Kernel> impl = dnnl_call("create the primitive", __FILE__, __LINE__, [&] {
      auto widened = [&] {
        std::unique_ptr<Kernel> inner =
            r.def->create(*device->plugin, view.with_narrow_floats_as(DLRT_F32));
        return std::unique_ptr<Kernel>(new WideningKernel(
            view, std::move(inner), device->plugin->threads, convert_isa(*device->plugin)));
      };
      if (r.widen) return widened();
      if (!view.has_narrow_float()) return r.def->create(*device->plugin, view);
      // A native 16-bit row whose primitive oneDNN has no implementation for after all (a
      // shape or attribute its bf16 kernels lack) still runs, on f32 between conversions.
      try {
        return r.def->create(*device->plugin, view);
      } catch (const dnnl::error& e) {
        if (e.status != dnnl_unimplemented) throw;
        return widened();
      }
    });
    const size_t ws = impl->workspace_bytes();
    *out_kernel = new dlrt_kernel{device, std::move(view), std::move(impl), ws};
    *out_workspace_bytes = ws;
  });
}

dlrt_status* kernel_run(dlrt_kernel* kernel, dlrt_stream* stream, const dlrt_kernel_args* args) {
  return guard([&] {
    plugin::require(kernel, "kernel");
    check_stream_device(stream, kernel->device, "kernel_run");
    const OpView& op = kernel->op;
    plugin::check_kernel_args(op.name(), op.num_inputs(), op.num_outputs(), args);
    if (args->workspace_bytes < kernel->workspace_bytes)
      fail(DLRT_INVALID_ARGUMENT,
           prefix() + "kernel_run of '" + op.name() + "' got a workspace of " +
               std::to_string(args->workspace_bytes) + " bytes, expected at least " +
               std::to_string(kernel->workspace_bytes));
    dnnl_call("execute the primitive", __FILE__, __LINE__,
              [&] { kernel->impl->run(stream->stream, *args); });
  });
}

void kernel_destroy(dlrt_kernel* kernel) {
  plugin::guard_void("kernel_destroy", [&] { delete kernel; });
}

}  // namespace dlrt::cpu
