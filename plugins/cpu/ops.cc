// ops.cc: op_supported and the kernel_* entries of the cpu plugin, over the kernel table below.
// An op without a row is answered UNIMPLEMENTED "no oneDNN kernel for op 'X' yet".
#include <string>
#include <vector>

#include "dnnl_status.hpp"
#include "ops.hpp"
#include "versioned.hpp"

namespace dlrt::cpu {

using plugin::fail;
using plugin::guard;
using plugin::OpView;

namespace {

// The kernel table: one row per op, pointing at functions in kernels/<family>.cc.
const std::vector<KernelDef>& kernel_table() {
  static const std::vector<KernelDef> table = [] {
    std::vector<KernelDef> t = primitive_kernel_defs();
    const std::vector<KernelDef>& loops = loop_kernel_defs();
    t.insert(t.end(), loops.begin(), loops.end());
    return t;
  }();
  return table;
}

// The descriptor is the schema's (docs/design.md, "What a plugin may trust"): a row's check
// answers only what its kernel can run (dtype, attribute values, sizes), and fills the cost.
const KernelDef& resolve(const dlrt_plugin& p, const OpView& op, dlrt_op_cost* cost) {
  plugin::require_known_version(op);
  for (const auto* list : {&op.inputs(), &op.outputs()})
    for (const plugin::TensorView& t : *list)
      if (!t.dense())
        fail(DLRT_UNIMPLEMENTED, prefix() + op.name() +
                                     " supports dense layouts only, got layout " +
                                     std::to_string(t.layout));
  for (const KernelDef& k : kernel_table()) {
    if (op.name() != k.op) continue;
    k.check(op, p, cost);
    return k;
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
    const KernelDef& def = resolve(*device->plugin, view, &cost);
    // unique_ptr until handed over: a failure below releases the primitive.
    std::unique_ptr<Kernel> impl = dnnl_call("create the primitive", __FILE__, __LINE__,
                                             [&] { return def.create(*device->plugin, view); });
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
