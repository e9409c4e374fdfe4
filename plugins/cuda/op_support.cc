// op_support.cc: the host-side helpers of op_support.hpp.
#include "op_support.hpp"

#include <algorithm>

namespace dlrt::cuda {

void require_f32(const OpView& op) {
  auto scan = [&](const std::vector<TensorView>& list, const char* what) {
    for (size_t i = 0; i < list.size(); ++i) {
      const int32_t d = list[i].dtype;
      if (plugin::dtype_is_float(d) && d != DLRT_F32)
        plugin::fail(DLRT_UNIMPLEMENTED, "cuda: " + op.name() + ": " + what + " " +
                                             std::to_string(i) + " is " + plugin::dtype_name(d) +
                                             "; the CUDA kernels of this op compute in f32 only");
    }
  };
  scan(op.inputs(), "input");
  scan(op.outputs(), "output");
}

void require_float_input(const OpView& op, size_t i) {
  const int32_t d = op.input(i).dtype;
  if (!plugin::dtype_is_float(d))
    plugin::fail(DLRT_UNIMPLEMENTED, "cuda: " + op.name() + ": input " + std::to_string(i) +
                                         " is " + plugin::dtype_name(d) +
                                         "; the CUDA kernels of this op compute in f32 only");
}

double operand_bytes(const OpView& op) {
  double b = 0;
  for (const auto& t : op.inputs()) b += double(t.bytes);
  for (const auto& t : op.outputs()) b += double(t.bytes);
  return b;
}

void fill_cost(dlrt_op_cost* cost, const dlrt_device_desc& device, double flops, double bytes) {
  if (cost == nullptr) return;
  double us = device.launch_overhead_us > 0 ? device.launch_overhead_us : 3.0;
  double compute = device.peak_gflops > 0 ? flops / (device.peak_gflops * 1e3) : 0.0;
  double memory =
      device.memory_bandwidth_gbps > 0 ? bytes / (device.memory_bandwidth_gbps * 1e3) : 0.0;
  cost->estimated_us = us + std::max(compute, memory);
  cost->flops = flops;
  cost->bytes = bytes;
}

void check_f32_streaming(const OpView& op, const dlrt_device_desc& device, dlrt_op_cost* cost,
                         double flops_per_element) {
  require_f32(op);
  double n = op.num_outputs() > 0 ? double(op.output(0).numel) : 1.0;
  fill_cost(cost, device, flops_per_element * n, operand_bytes(op));
}

void check_args(const dlrt_kernel_args& args, size_t num_inputs, size_t num_outputs,
                size_t workspace_bytes, const std::string& op) {
  if (args.num_inputs != num_inputs || args.num_outputs != num_outputs)
    plugin::fail(DLRT_INVALID_ARGUMENT,
                 "cuda: " + op + ": kernel_run got " + std::to_string(args.num_inputs) +
                     " inputs and " + std::to_string(args.num_outputs) + " outputs, the op has " +
                     std::to_string(num_inputs) + " and " + std::to_string(num_outputs));
  for (size_t i = 0; i < num_inputs; ++i)
    if (args.inputs == nullptr || args.inputs[i] == nullptr)
      plugin::fail(DLRT_INVALID_ARGUMENT,
                   "cuda: " + op + ": input " + std::to_string(i) + " is NULL");
  for (size_t i = 0; i < num_outputs; ++i)
    if (args.outputs == nullptr || args.outputs[i] == nullptr)
      plugin::fail(DLRT_INVALID_ARGUMENT,
                   "cuda: " + op + ": output " + std::to_string(i) + " is NULL");
  if (workspace_bytes > 0 && (args.workspace == nullptr || args.workspace_bytes < workspace_bytes))
    plugin::fail(DLRT_INVALID_ARGUMENT, "cuda: " + op + ": needs a workspace of " +
                                            std::to_string(workspace_bytes) + " bytes, got " +
                                            std::to_string(args.workspace_bytes));
}

math::Strided broadcast_view(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                             const std::vector<int64_t>& out, const std::string& op) {
  math::Strided v;
  v.rank = static_cast<int>(out.size());
  std::vector<int64_t> sa = plugin::broadcast_strides(a, out, op);
  std::vector<int64_t> sb = plugin::broadcast_strides(b, out, op);
  for (int d = 0; d < v.rank; ++d) {
    v.dims[d] = out[d];
    v.stride[0][d] = sa[d];
    v.stride[1][d] = sb[d];
  }
  return v;
}

math::Strided transpose_view(const std::vector<int64_t>& x_dims, const std::vector<int64_t>& perm) {
  math::Strided v;
  v.rank = static_cast<int>(perm.size());
  std::vector<int64_t> s = plugin::row_major_strides(x_dims);
  for (int d = 0; d < v.rank; ++d) {
    v.dims[d] = x_dims[perm[d]];
    v.stride[0][d] = s[perm[d]];
  }
  return v;
}

math::Reduction reduction(const std::vector<int64_t>& dims, const std::vector<bool>& reduced) {
  math::Reduction r;
  std::vector<int64_t> s = plugin::row_major_strides(dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (reduced[d]) {
      r.red_dims[r.red_rank] = dims[d];
      r.red_strides[r.red_rank++] = s[d];
      r.group *= dims[d];
    } else {
      r.kept_dims[r.kept_rank] = dims[d];
      r.kept_strides[r.kept_rank++] = s[d];
      r.outputs *= dims[d];
    }
  }
  return r;
}

std::vector<bool> reduced_axes(const OpView& op, const std::vector<int64_t>& dims) {
  const int rank = static_cast<int>(dims.size());
  const auto& axes = op.get_ints("axes");
  std::vector<bool> reduced(dims.size(), axes.empty());
  for (int64_t a : axes) reduced[plugin::normalize_axis(a, rank, op.name())] = true;
  return reduced;
}

int bias_channel_dim(const OpView& op, int rank) {
  return plugin::is_nchw(op.get_string("data_format"), op.name()) ? 1 : rank - 1;
}

math::Act parse_act(const OpView& op) {
  const std::string& a = op.get_string("activation");
  if (a == "relu") return math::Act::kRelu;
  if (a == "sigmoid") return math::Act::kSigmoid;
  if (a == "tanh") return math::Act::kTanh;
  return math::Act::kNone;
}

}  // namespace dlrt::cuda
