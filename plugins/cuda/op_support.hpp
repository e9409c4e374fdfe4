// op_support.hpp: what the CUDA plugin's op families share on the host side: the checks every
// `check` makes, the cost estimate, the lambda-backed Kernel, operand access in `run`, launch
// geometry, and the host-side builders of kernel_math.hpp's index structs.
//
// How an op is checked (OpEntry::check), in this order:
//   1. the descriptor is read into an OpView (INVALID_ARGUMENT when malformed);
//   2. this plugin's own limits: arithmetic ops compute in f32 only, so any other float dtype
//      is UNIMPLEMENTED with that reason; data-movement ops take every dtype; every operand is
//      dense (ops.cc); conv and pool need explicit pads (a 1.2 host);
//   3. the cost (flops, bytes, and a time from the device's peak numbers).
// Operand counts, shapes and attributes are not re-checked: the core's op schema did that
// before the descriptor arrived (docs/design.md, "What a plugin may trust").
//
// Families (one file each) add their entries with DLRT_CUDA_OPS (ops.hpp).
#pragma once

#include <cuda_runtime_api.h>
#include <dlrt/plugin.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda_status.hpp"
#include "kernel_math.hpp"
#include "op_view.hpp"
#include "ops.hpp"
#include "plugin_support.hpp"

namespace dlrt::cuda {

using plugin::OpView;
using plugin::TensorView;

// ---- launchers shared across families -----------------------------------------------------
// batch_norm.cc's own kernels (activation.cu; the arithmetic is kernel_math.hpp's): the fused
// ReLU after cuDNN's forward pass, in place on y (n elements); and batch_norm_relu_grad's dy
// (math::bn_relu_dy) into `out`, x seen as (outer, c, inner) with n = outer*c*inner.
void launch_relu_in_place(float* y, int64_t n, cudaStream_t s);
void launch_bn_relu_dy(const float* dy, const float* x, const float* scale, const float* bias,
                       const float* mean, const float* inv_std, float* out, int64_t n, int64_t c,
                       int64_t inner, cudaStream_t s);
// batch_norm_add_relu_train's y = max(0, y + residual) in place (math::bn_add_relu), and
// batch_norm_add_relu_grad's dresidual = dy where y > 0 into `out` (n elements each).
void launch_add_relu_in_place(float* y, const float* residual, int64_t n, cudaStream_t s);
void launch_relu_mask_by_y(const float* dy, const float* y, float* out, int64_t n,
                           cudaStream_t s);
// y += x, n elements (math::binary kAdd): conv2d_backward_data_add's addend where conv.cc
// crops dx out of a grown image (activation.cu).
void launch_add_in_place(float* y, const float* x, int64_t n, cudaStream_t s);

// ---- checks -------------------------------------------------------------------------------

// Every float operand of `op` must be f32 (this plugin's arithmetic kernels compute in f32);
// throws UNIMPLEMENTED naming the operand and its dtype otherwise.
void require_f32(const OpView& op);
// Input `i` of `op` must be a float: the schema admits integers for the comparisons, where,
// cumsum and add/sub/mul/div/maximum/minimum, whose CUDA kernels read f32 (the cpu and reference devices run
// them); throws UNIMPLEMENTED naming the input and its dtype otherwise.
void require_float_input(const OpView& op, size_t i);
// Fills `cost` (may be NULL) from flops and bytes moved, with the device's peak numbers.
void fill_cost(dlrt_op_cost* cost, const dlrt_device_desc& device, double flops, double bytes);
// Sum of every operand's bytes: the memory traffic of a streaming op.
double operand_bytes(const OpView& op);
// The check of a plain f32 op whose cost is `flops_per_element` per element of output 0.
void check_f32_streaming(const OpView& op, const dlrt_device_desc& device, dlrt_op_cost* cost,
                         double flops_per_element);

// ---- kernels ------------------------------------------------------------------------------

// A Kernel whose run is a callable (captures what create prepared).
template <typename Fn>
class FnKernel final : public Kernel {
 public:
  explicit FnKernel(Fn fn) : fn_(std::move(fn)) {}
  void run(cudaStream_t stream, const dlrt_kernel_args& args) override { fn_(stream, args); }

 private:
  Fn fn_;
};
template <typename Fn>
std::unique_ptr<Kernel> make_kernel(Fn fn) {
  return std::make_unique<FnKernel<Fn>>(std::move(fn));
}

// Operand access in run: checks the counts against what create saw (INVALID_ARGUMENT).
void check_args(const dlrt_kernel_args& args, size_t num_inputs, size_t num_outputs,
                size_t workspace_bytes, const std::string& op);
template <typename T = void>
const T* in(const dlrt_kernel_args& args, size_t i) {
  return static_cast<const T*>(args.inputs[i]);
}
template <typename T = void>
T* out(const dlrt_kernel_args& args, size_t i) {
  return static_cast<T*>(args.outputs[i]);
}

// Grid for a grid-stride loop over n elements with `threads` per block.
inline unsigned grid_for(int64_t n, int threads = 256) {
  int64_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(blocks, 65536)));
}
// After a launch: reports a bad configuration at once (does not synchronise).
inline void check_launch(const char* what) { CUDA_CHECK_MSG(cudaGetLastError(), what); }

// 256-byte aligned sub-buffers of one workspace: add() returns each part's offset.
struct WorkspacePlan {
  size_t bytes = 0;
  size_t add(size_t n) {
    size_t off = (bytes + 255) / 256 * 256;
    bytes = off + n;
    return off;
  }
};
inline void* at(void* workspace, size_t offset) { return static_cast<char*>(workspace) + offset; }

// ---- index builders (host) ----------------------------------------------------------------

// Source 0 = a, source 1 = b, both broadcast to `out` (NumPy rules).
math::Strided broadcast_view(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                             const std::vector<int64_t>& out, const std::string& op);
// y = transpose(x, perm): source 0 strides are x's strides permuted.
math::Strided transpose_view(const std::vector<int64_t>& x_dims, const std::vector<int64_t>& perm);
// A reduction of `dims` over the axes where `reduced` is true.
math::Reduction reduction(const std::vector<int64_t>& dims, const std::vector<bool>& reduced);
// The reduced-axes mask of a reduce op's "axes" attribute (empty = all).
std::vector<bool> reduced_axes(const OpView& op, const std::vector<int64_t>& dims);
// bias_add's channel dim: last (NHWC) or 1 (NCHW).
int bias_channel_dim(const OpView& op, int rank);

// Launchers shared across families (defined in misc.cu): y = strided gather of x with element
// size `esize` (1, 2, 4 or 8 bytes); used by transpose, broadcast_to and the filter transposes.
void launch_strided_copy(cudaStream_t stream, const void* x, void* y, int64_t n, size_t esize,
                         const math::Strided& view);
// Defined in misc.cu: y = x (n,h,w,c) grown by extra_h rows and extra_w columns of zeros after
// the image (NHWC or NCHW storage).
void launch_pad_image(cudaStream_t stream, const float* x, float* y, bool nchw, int64_t n,
                      int64_t h, int64_t w, int64_t c, int64_t extra_h, int64_t extra_w);
// Defined in elementwise.cu: y[i] = act(y[i] + b[channel_of(i)]) in place (conv/matmul epilogues).
void launch_bias_act(cudaStream_t stream, float* y, const float* b, int64_t n, int64_t channels,
                     int64_t inner, math::Act act);
// Defined in elementwise.cu: y[i] = act(y[i]) in place.
void launch_act(cudaStream_t stream, float* y, int64_t n, math::Act act);

// Defined in pool.cu: this plugin's own pooling kernels (any padding). x may be NULL for
// average pooling's backward.
void launch_pool_forward(cudaStream_t stream, const math::Pool2D& g, const float* x, float* y,
                         bool is_max);
// relu_mask: max_pool2d_backward_relu_bias's dz, 0 where x <= 0 (math::act_grad kRelu).
void launch_pool_backward(cudaStream_t stream, const math::Pool2D& g, const float* x,
                          const float* dy, float* dx, bool is_max, bool relu_mask = false);

// Defined in reduce.cu: bias_add_grad's split reduction (the sum over every dim of `dims` but
// `channel_dim`) as a launcher, for fused ops that end in a bias gradient; *workspace gets the
// bytes its partials need (the launcher's `workspace` argument).
using ChannelSum =
    std::function<void(cudaStream_t, const float* in, float* out, void* workspace)>;
ChannelSum make_channel_sum(const std::vector<int64_t>& dims, int channel_dim, size_t* workspace);

math::Act parse_act(const OpView& op);

}  // namespace dlrt::cuda
