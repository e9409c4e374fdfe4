// ops.cc: op_supported and the kernel_* entries, dispatching through the op table.
// See ops.hpp for how a kernel joins the table; op_support.hpp for what every check does.
// Every op of docs/ops.md has a row (README.md lists them with their implementation).
#include "ops.hpp"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cuda_plugin.hpp"
#include "op_support.hpp"
#include "widening.hpp"

struct dlrt_kernel {
  dlrt_device* device = nullptr;
  std::string op;
  size_t num_inputs = 0;  // operand counts of the descriptor, checked on every run
  size_t num_outputs = 0;
  std::unique_ptr<dlrt::cuda::Kernel> impl;
};

namespace dlrt::cuda {
namespace {

const OpEntry& entry_or_throw(const dlrt_op_desc* op) {
  plugin::require(op, "op");
  plugin::require(op->op, "op->op");
  const OpEntry* e = find_op(op->op);
  if (e == nullptr)
    plugin::fail(DLRT_UNIMPLEMENTED, std::string("cuda: no kernel for op '") + op->op + "' yet");
  const plugin::OpView view(op);
  plugin::require_known_version(view);
  for (const auto* list : {&view.inputs(), &view.outputs()})
    for (const plugin::TensorView& t : *list)
      if (!t.dense())
        plugin::fail(DLRT_UNIMPLEMENTED, "cuda: " + view.name() +
                                             " supports dense layouts only, got layout " +
                                             std::to_string(t.layout));
  return *e;
}

// Runs the row's check on `op`; when the row declines its f16/bf16 operands, on the op
// widened to f32 instead (widening.hpp). Returns whether the op runs widened.
bool check_or_widen(const OpEntry& e, const dlrt_op_desc& op, const dlrt_device_desc& device,
                    dlrt_op_cost* cost) {
  if (!has_narrow_operand(op)) {
    e.check(op, device, cost);
    return false;
  }
  try {
    e.check(op, device, cost);
    return false;
  } catch (const plugin::Error& err) {
    if (err.code() != DLRT_UNIMPLEMENTED) throw;
  }
  const WideDesc wide(op);
  e.check(wide.desc(), device, cost);
  return true;
}

}  // namespace

const OpEntry* find_op(const char* op) { return OpRegistry::find(op); }

dlrt_status* op_supported(dlrt_plugin* plugin, int32_t ordinal, const dlrt_op_desc* op,
                          dlrt_op_cost* out_cost) noexcept {
  return plugin::guard([&] {
    plugin::require(plugin, "plugin");
    // The table does not depend on the device: an op without a kernel is UNIMPLEMENTED
    // everywhere, even on a machine without a GPU.
    const OpEntry& e = entry_or_throw(op);
    check_or_widen(e, *op, device_info(plugin, ordinal).desc, out_cost);
  });
}

dlrt_status* kernel_create(dlrt_device* device, const dlrt_op_desc* op, dlrt_kernel** out_kernel,
                           size_t* out_workspace_bytes) noexcept {
  return plugin::guard([&] {
    plugin::require(out_kernel, "out_kernel");
    *out_kernel = nullptr;
    if (out_workspace_bytes != nullptr) *out_workspace_bytes = 0;
    plugin::require(device, "device");
    plugin::require(out_workspace_bytes, "out_workspace_bytes");
    const OpEntry& e = entry_or_throw(op);
    const dlrt_device_desc& desc = device_info(device->plugin, device->ordinal).desc;
    const bool widen = check_or_widen(e, *op, desc, nullptr);
    set_device(device->ordinal);
    auto k = std::make_unique<dlrt_kernel>();
    k->device = device;
    k->op = op->op;
    k->num_inputs = op->num_inputs;
    k->num_outputs = op->num_outputs;
    size_t workspace = 0;
    CreatingScope scope(device->plugin->options);  // create reads creating_options()
    if (widen) {
      const WideDesc wide(*op);
      size_t inner_workspace = 0;
      std::unique_ptr<Kernel> inner = e.create(wide.desc(), desc, &inner_workspace);
      k->impl = make_widening_kernel(*op, std::move(inner), inner_workspace, &workspace);
    } else {
      k->impl = e.create(*op, desc, &workspace);
    }
    *out_kernel = k.release();
    *out_workspace_bytes = workspace;
  });
}

dlrt_status* kernel_run(dlrt_kernel* kernel, dlrt_stream* stream,
                        const dlrt_kernel_args* args) noexcept {
  return plugin::guard([&] {
    plugin::require(kernel, "kernel");
    plugin::require(stream, "stream");
    plugin::check_kernel_args(kernel->op, kernel->num_inputs, kernel->num_outputs, args);
    check_same_device(kernel->device, stream, "kernel_run");
    set_device(kernel->device->ordinal);
    kernel->impl->run(stream->stream, *args);
  });
}

void kernel_destroy(dlrt_kernel* kernel) noexcept {
  plugin::guard_void("kernel_destroy", [&] {
    if (kernel == nullptr) return;
    std::unique_ptr<dlrt_kernel> owned(kernel);
    set_device(kernel->device->ordinal);  // a kernel may free device-side state
  });
}

}  // namespace dlrt::cuda
