// ops.cc: op_supported and the kernel_* entries of the reference plugin.
//
// The answers come in a fixed order, so placement tests get the reason they expect:
//   1. malformed descriptor or ordinal             -> INVALID_ARGUMENT
//   2. op outside the device's `ops` option subset -> UNIMPLEMENTED "reference device REF:1 is
//                                                     restricted to ops {...}"
//   3. the kernels' own answer (op known? dtype, shapes, attributes) -> UNIMPLEMENTED or
//      INVALID_ARGUMENT, or yes with a cost estimate.
// Step 3 goes through the two functions in "the kernel seam" below and nothing else: the
// reference kernels library (kernels/, docs/ops.md as plain loops accumulating in double).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "narrow_float.hpp"
#include "reference_kernels.hpp"

#include "reference.hpp"
#include "versioned.hpp"

namespace dlrt::reference {

using plugin::fail;
using plugin::guard;
using plugin::OpView;

namespace {

// ---- the kernel seam ---------------------------------------------------------------------
// The reference kernels (kernels/reference_kernels.hpp) are plain loops over host buffers in
// descriptor order, which is exactly what reference device memory is.

// f16/bf16 operands (docs/ops.md, "16-bit floats"): the oracle computes in double whatever
// the dtype, so an op with 16-bit operands runs as the same op on f64 — its 16-bit inputs
// widened exactly, its 16-bit outputs rounded once (to nearest, ties to even) at the end. That
// is the best answer the dtype can hold, which is what a device is compared with.

// Returns when kernel_run can compute `op`; otherwise throws UNIMPLEMENTED (no kernel, or not
// for this dtype/layout). The descriptor itself is the schema's (docs/design.md, "What a
// plugin may trust"), so nothing here re-checks shapes.
void check_kernel(const OpView& op) {
  reference::check_supported(op.has_narrow_float() ? op.with_narrow_floats_as(DLRT_F64) : op);
}

// The f64 copy of one operand: widened from `narrow` (16-bit elements) when given.
std::vector<double> widened(const plugin::TensorView& t, const void* narrow) {
  std::vector<double> out(static_cast<size_t>(t.numel));
  if (narrow != nullptr)
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = plugin::narrow_to_double(t.dtype, static_cast<const uint16_t*>(narrow)[i]);
  return out;
}

// Computes `op` synchronously; correct even when an output aliases an input.
void run_kernel(const OpView& op, const void* const* inputs, void* const* outputs,
                uint64_t rng_offset) {
  if (!op.has_narrow_float()) {
    reference::run(op, inputs, outputs, rng_offset);
    return;
  }
  // f64 buffers for the 16-bit operands. An output that aliases an input (the in-place
  // optimizer updates) shares that input's f64 buffer, so the kernel sees the alias too.
  const OpView wide = op.with_narrow_floats_as(DLRT_F64);
  std::vector<std::vector<double>> buffers;
  buffers.reserve(op.num_inputs() + op.num_outputs());
  std::vector<const void*> in(inputs, inputs + op.num_inputs());
  std::vector<void*> out(outputs, outputs + op.num_outputs());
  std::vector<size_t> in_buffer(op.num_inputs(), SIZE_MAX);
  for (size_t i = 0; i < op.num_inputs(); ++i) {
    if (!plugin::is_narrow_float(op.input(i).dtype)) continue;
    buffers.push_back(widened(op.input(i), inputs[i]));
    in_buffer[i] = buffers.size() - 1;
    in[i] = buffers.back().data();
  }
  for (size_t o = 0; o < op.num_outputs(); ++o) {
    if (!plugin::is_narrow_float(op.output(o).dtype)) continue;
    void* alias = nullptr;
    for (size_t i = 0; i < op.num_inputs() && alias == nullptr; ++i)
      if (in_buffer[i] != SIZE_MAX && inputs[i] == outputs[o]) alias = buffers[in_buffer[i]].data();
    if (alias == nullptr) {
      buffers.push_back(widened(op.output(o), nullptr));
      alias = buffers.back().data();
    }
    out[o] = alias;
  }
  reference::run(wide, in.data(), out.data(), rng_offset);
  for (size_t o = 0; o < op.num_outputs(); ++o) {
    if (!plugin::is_narrow_float(op.output(o).dtype)) continue;
    const double* v = static_cast<const double*>(out[o]);
    uint16_t* dst = static_cast<uint16_t*>(outputs[o]);
    for (int64_t k = 0; k < op.output(o).numel; ++k)
      dst[k] = plugin::double_to_narrow(op.output(o).dtype, v[k]);
  }
}

// ---- shared by op_supported and kernel_create ----------------------------------------------

// Steps 2 and 3 above for an already copied descriptor.
void resolve(const dlrt_plugin* p, const Device& dev, const OpView& op) {
  plugin::require_known_version(op);
  if (p->config.ops_restricted && p->config.ops.count(op.name()) == 0)
    fail(DLRT_UNIMPLEMENTED, "reference device " + dev.label + " is restricted to ops " +
                                 p->ops_text + " (option 'ops'); op '" + op.name() +
                                 "' is not among them");
  check_kernel(op);
}

// What placement may weigh: the bytes the op moves (every operand read or written once, which
// is exact for naive loops over dense tensors). No flop count or time: the reference device is
// never chosen for speed.
dlrt_op_cost estimate_cost(const OpView& op) {
  dlrt_op_cost cost{};
  cost.struct_size = sizeof(dlrt_op_cost);
  for (const auto& t : op.inputs()) cost.bytes += static_cast<double>(t.bytes);
  for (const auto& t : op.outputs()) cost.bytes += static_cast<double>(t.bytes);
  return cost;
}

}  // namespace

dlrt_status* op_supported(dlrt_plugin* p, int32_t ordinal, const dlrt_op_desc* op,
                          dlrt_op_cost* out_cost) {
  return guard([&] {
    Device& dev = device_at(p, ordinal);
    const OpView view(op);
    resolve(p, dev, view);
    if (out_cost != nullptr) plugin::write_versioned(out_cost, estimate_cost(view), "out_cost");
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
    resolve(device->plugin, *device->dev, view);
    // Naive loops need no scratch from the host: workspace 0.
    *out_kernel = new dlrt_kernel{device, std::move(view)};
  });
}

namespace {

// The arguments of one kernel_run as they were at enqueue time: what a capturing stream keeps
// (CUDA Graphs freeze kernel parameters the same way). The pointer arrays are copied, since
// the caller's args and arrays are only valid during the call.
struct FrozenArgs {
  explicit FrozenArgs(const dlrt_kernel_args& a)
      : inputs(a.inputs, a.inputs + a.num_inputs), outputs(a.outputs, a.outputs + a.num_outputs) {
    std::memcpy(&args, &a, std::min(a.struct_size, sizeof args));
    args.struct_size = std::min(a.struct_size, sizeof args);
    args.inputs = inputs.data();
    args.outputs = outputs.data();
  }
  std::vector<const void*> inputs;
  std::vector<void*> outputs;
  dlrt_kernel_args args{};
};

}  // namespace

// Checks the operands against the descriptor the kernel was made for (counts, and that each
// dense buffer and the rng offset lie inside this device's memory), then runs the loop before
// returning — or, on a capturing stream, records it with its arguments frozen. Either way the
// random ops read their offset when the loop runs (plugin_support.hpp).
dlrt_status* kernel_run(dlrt_kernel* kernel, dlrt_stream* stream, const dlrt_kernel_args* args) {
  return guard([&] {
    plugin::require(kernel, "kernel");
    check_stream_device(stream, kernel->device, "kernel_run");
    const OpView& op = kernel->op;
    plugin::check_kernel_args(op.name(), op.num_inputs(), op.num_outputs(), args);
    if (op.num_inputs() > 0) plugin::require(args->inputs, "args->inputs");
    if (op.num_outputs() > 0) plugin::require(args->outputs, "args->outputs");
    Device& dev = *kernel->device->dev;
    for (size_t i = 0; i < op.num_inputs(); ++i) {
      const std::string what = "kernel_run '" + op.name() + "' input " + std::to_string(i);
      if (op.input(i).dense() && op.input(i).bytes > 0)
        check_device_range(dev, args->inputs[i], op.input(i).bytes, what.c_str());
    }
    for (size_t i = 0; i < op.num_outputs(); ++i) {
      const std::string what = "kernel_run '" + op.name() + "' output " + std::to_string(i);
      if (op.output(i).dense() && op.output(i).bytes > 0)
        check_device_range(dev, args->outputs[i], op.output(i).bytes, what.c_str());
    }
    if (const uint64_t* offset = plugin::rng_offset_device(*args))
      check_device_range(dev, offset, sizeof(uint64_t), "kernel_run args->rng_offset_device");
    if (!stream->recording) {
      run_kernel(op, args->inputs, args->outputs, plugin::rng_offset_at_execution(*args));
      ++stream->completed;
      return;
    }
    // shared_ptr: a std::function must be copyable; the recording is its only owner.
    auto frozen = std::make_shared<const FrozenArgs>(*args);
    run_or_record(stream, [kernel, frozen] {
      const dlrt_kernel_args& a = frozen->args;
      run_kernel(kernel->op, a.inputs, a.outputs, plugin::rng_offset_at_execution(a));
    });
  });
}

void kernel_destroy(dlrt_kernel* kernel) {
  plugin::guard_void("kernel_destroy", [&] { delete kernel; });
}

}  // namespace dlrt::reference
