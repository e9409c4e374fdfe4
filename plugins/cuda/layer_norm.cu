// layer_norm.cu: the CUDA plugin's kernels for layer_norm and layer_norm_grad (f32, x (..., D)
// normalised over its last axis; core/ops/infer_layer_norm.cc has the arithmetic).
//
//   layer_norm       one block of kLanes threads per row: the row's sum, then (a second pass
//                    over the row, in L1/L2) the sum of squared deviations, each a per-lane
//                    partial in double combined by a fixed shared-memory tree; then every lane
//                    writes its elements of y. mean and rstd are saved per row.
//   layer_norm_grad  the same block per row for dx (sum(g), sum(g*xhat) by the same tree);
//                    then one thread per column for dgamma and dbeta, summing rows in order.
//
// No atomics: the same bits on every run. The per-lane sums, the tree and the per-element
// formulas are kernel_math.hpp's (ln_*), replayed on the host by kernel_math_test.cc.
#include <string>

#include "kernel_math.hpp"
#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kLanes = 256;  // a power of two (the tree halves it)
constexpr int kThreads = 256;

// The block's total of each lane's `v` (every lane gets it back).
__device__ double block_sum(double* s, double v) {
  s[threadIdx.x] = v;
  __syncthreads();
  for (int stride = kLanes / 2; stride > 0; stride /= 2) {
    math::ln_tree_step(s, int(threadIdx.x), stride);
    __syncthreads();
  }
  const double total = s[0];
  __syncthreads();  // s is reused by the next call
  return total;
}

__global__ void layer_norm_kernel(const float* x, const float* gamma, const float* beta,
                                  float* y, float* mean, float* rstd, int64_t d, double eps) {
  __shared__ double s[kLanes];
  const int64_t r = blockIdx.x;
  const int lane = int(threadIdx.x);
  const float* xr = x + r * d;
  const double m = block_sum(s, math::ln_lane_sum(xr, d, lane, kLanes, 0.0, false)) / double(d);
  const double rs =
      math::ln_rstd(block_sum(s, math::ln_lane_sum(xr, d, lane, kLanes, m, true)), d, eps);
  const float fm = float(m), fr = float(rs);
  for (int64_t j = lane; j < d; j += kLanes) y[r * d + j] = (xr[j] - fm) * fr * gamma[j] + beta[j];
  if (lane == 0) {
    mean[r] = fm;
    rstd[r] = fr;
  }
}

__global__ void layer_norm_dx_kernel(const float* dy, const float* x, const float* gamma,
                                     const float* mean, const float* rstd, float* dx, int64_t d) {
  __shared__ double s[kLanes];
  const int64_t r = blockIdx.x;
  const int lane = int(threadIdx.x);
  const double m = double(mean[r]), rs = double(rstd[r]);
  double g = 0, gx = 0;
  for (int64_t j = lane; j < d; j += kLanes) {
    const double gj = double(dy[r * d + j]) * double(gamma[j]);
    g += gj;
    gx += gj * (double(x[r * d + j]) - m) * rs;
  }
  const double sum_g = block_sum(s, g), sum_gx = block_sum(s, gx);
  for (int64_t j = lane; j < d; j += kLanes)
    dx[r * d + j] = math::ln_dx(dy[r * d + j], x[r * d + j], gamma[j], m, rs, d, sum_g, sum_gx);
}

__global__ void layer_norm_param_kernel(const float* dy, const float* x, const float* mean,
                                        const float* rstd, float* dgamma, float* dbeta,
                                        int64_t rows, int64_t d) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < d;
       j += int64_t(gridDim.x) * blockDim.x)
    math::ln_param_grads(dy, x, mean, rstd, rows, d, j, dgamma, dbeta);
}

void check_layer_norm(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  require_f32(op);
  fill_cost(cost, dev, 8.0 * static_cast<double>(op.input(0).numel), operand_bytes(op));
}

std::unique_ptr<Kernel> create_layer_norm(const dlrt_op_desc& desc, const dlrt_device_desc&,
                                          size_t*) {
  OpView op(&desc);
  const bool backward = std::string(op.name()) == "layer_norm_grad";
  const std::vector<int64_t>& xd = op.input(backward ? 1 : 0).dims;
  const int64_t d = xd.back();
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < xd.size(); ++i) rows *= xd[i];
  const double eps = op.get_float("epsilon");
  if (backward)
    return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
      check_args(a, 5, 3, 0, "layer_norm_grad");
      if (rows > 0)
        layer_norm_dx_kernel<<<unsigned(rows), kLanes, 0, s>>>(
            in<float>(a, 0), in<float>(a, 1), in<float>(a, 2), in<float>(a, 3), in<float>(a, 4),
            out<float>(a, 0), d);
      layer_norm_param_kernel<<<grid_for(d), kThreads, 0, s>>>(
          in<float>(a, 0), in<float>(a, 1), in<float>(a, 3), in<float>(a, 4), out<float>(a, 1),
          out<float>(a, 2), rows, d);
      check_launch("layer_norm_grad kernels");
    });
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 3, 3, 0, "layer_norm");
    if (rows > 0)
      layer_norm_kernel<<<unsigned(rows), kLanes, 0, s>>>(in<float>(a, 0), in<float>(a, 1),
                                                           in<float>(a, 2), out<float>(a, 0),
                                                           out<float>(a, 1), out<float>(a, 2),
                                                           d, eps);
    check_launch("layer_norm kernel");
  });
}

}  // namespace

DLRT_CUDA_OPS(t) {
  t.push_back({"layer_norm", &check_layer_norm, &create_layer_norm});
  t.push_back({"layer_norm_grad", &check_layer_norm, &create_layer_norm});
}

}  // namespace dlrt::cuda
