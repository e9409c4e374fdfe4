// resize.cu: the CUDA plugin's kernels for resize and resize_grad (f32, NHWC or NCHW, every
// mode of core/ops/infer_resize.cc):
//
//   resize        one thread per y element: its (up to) four taps, weighted (math::resize_at)
//   resize_grad   one thread per dx element: it gathers weight * dy from the output cells
//                 whose taps read it (math::resize_grad_at), in a fixed order; no atomics,
//                 so the result is the same bits on every run
//
// Every index and weight is kernel_math.hpp's, tested on the host against the reference
// kernels (kernel_math_test.cc); this file only launches. cuDNN has no resampling op.
#include <string>

#include "op_support.hpp"
#include "resize_geometry.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 256;

#define GRID_STRIDE(i, n)                                                   \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += int64_t(gridDim.x) * blockDim.x)

__global__ void resize_kernel(const float* x, float* y, int64_t n, math::ResizeGeom g) {
  GRID_STRIDE(j, n) { y[j] = math::resize_at(g, x, j); }
}

__global__ void resize_grad_kernel(const float* dy, float* dx, int64_t n, math::ResizeGeom g) {
  GRID_STRIDE(j, n) { dx[j] = math::resize_grad_at(g, dy, j); }
}

void check_resize(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  require_f32(op);  // the kernels compute in f32 (weights and sums in double)
  fill_cost(cost, dev, 8.0 * static_cast<double>(op.output(0).numel), operand_bytes(op));
}

std::unique_ptr<Kernel> create_resize(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const std::string name = op.name();
  const bool backward = name == "resize_grad";
  const std::vector<int64_t>& x = backward ? op.output(0).dims : op.input(0).dims;
  const std::vector<int64_t>& y = backward ? op.input(0).dims : op.output(0).dims;
  const math::ResizeGeom g = resize_geom(op, x, y);
  const int64_t n = op.output(0).numel;
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, 0, name);
    if (backward)
      resize_grad_kernel<<<grid_for(n), kThreads, 0, s>>>(in<float>(a, 0), out<float>(a, 0), n, g);
    else resize_kernel<<<grid_for(n), kThreads, 0, s>>>(in<float>(a, 0), out<float>(a, 0), n, g);
    check_launch("resize kernel");
  });
}

}  // namespace

DLRT_CUDA_OPS(t) {
  t.push_back({"resize", &check_resize, &create_resize});
  t.push_back({"resize_grad", &check_resize, &create_resize});
}

}  // namespace dlrt::cuda
