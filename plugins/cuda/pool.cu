// pool.cu: this plugin's own 2-D pooling kernels, NHWC or NCHW, f32: max_pool2d and
// avg_pool2d, forward and backward. pool.cc uses cuDNN where it can (symmetric padding) and
// these kernels where cuDNN cannot: TensorFlow's SAME padding puts the odd cell after
// (before != after), and cuDNN pads both sides alike. Window math is kernel_math.hpp's Pool2D
// (tested on the host against the reference kernels).
//
// Backward kernels gather (one thread per input cell, over the outputs whose windows cover
// it), so they need no atomics and no zeroing pass, and are deterministic.
#include <math_constants.h>

#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 256;

#define GRID_STRIDE(i, n)                                                   \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += int64_t(gridDim.x) * blockDim.x)

// x: (N,H,W,C) -> y: (N,OH,OW,C) [or NCHW]
__global__ void pool_forward_kernel(math::Pool2D g, const float* x, float* y, bool is_max) {
  GRID_STRIDE(i, g.n * g.oh * g.ow * g.c) {
    int64_t n, oh, ow, c;
    math::image_coords(g.nchw, g.oh, g.ow, g.c, i, &n, &oh, &ow, &c);
    if (is_max) {
      const int64_t k = math::pool_argmax(g, x, n, oh, ow, c);
      y[i] = k < 0 ? -CUDART_INF_F : x[k];
    } else {
      double sum = 0.0;
      for (int64_t a = 0; a < g.kh; ++a) {
        const int64_t ih = oh * g.sh - g.pad_top + a;
        if (ih < 0 || ih >= g.h) continue;
        for (int64_t b = 0; b < g.kw; ++b) {
          const int64_t iw = ow * g.sw - g.pad_left + b;
          if (iw >= 0 && iw < g.w)
            sum += double(x[math::image_offset(g.nchw, g.h, g.w, g.c, n, ih, iw, c)]);
        }
      }
      y[i] = float(sum / double(math::pool_count(g, oh, ow)));
    }
  }
}

// x (max only), dy: (N,OH,OW,C) -> dx: (N,H,W,C) [or NCHW]
// relu_mask (max_pool2d_backward_relu_bias): dx is then relu_grad's, 0 where x <= 0.
__global__ void pool_backward_kernel(math::Pool2D g, const float* x, const float* dy, float* dx,
                                     bool is_max, bool relu_mask) {
  GRID_STRIDE(i, g.n * g.h * g.w * g.c) {
    int64_t n, ih, iw, c;
    math::image_coords(g.nchw, g.h, g.w, g.c, i, &n, &ih, &iw, &c);
    int64_t oh0, oh1, ow0, ow1;
    math::covering_outputs(ih, g.pad_top, g.kh, g.sh, g.oh, &oh0, &oh1);
    math::covering_outputs(iw, g.pad_left, g.kw, g.sw, g.ow, &ow0, &ow1);
    double acc = 0.0;
    for (int64_t oh = oh0; oh < oh1; ++oh)
      for (int64_t ow = ow0; ow < ow1; ++ow) {
        const double d = double(dy[math::image_offset(g.nchw, g.oh, g.ow, g.c, n, oh, ow, c)]);
        if (is_max) {
          if (math::pool_argmax(g, x, n, oh, ow, c) == i) acc += d;
        } else {
          acc += d / double(math::pool_count(g, oh, ow));
        }
      }
    dx[i] = relu_mask ? math::act_grad(math::ActGrad::kRelu, float(acc), x[i]) : float(acc);
  }
}

}  // namespace

void launch_pool_forward(cudaStream_t stream, const math::Pool2D& g, const float* x, float* y,
                         bool is_max) {
  pool_forward_kernel<<<grid_for(g.n * g.oh * g.ow * g.c), kThreads, 0, stream>>>(g, x, y, is_max);
  check_launch("pooling kernel");
}

void launch_pool_backward(cudaStream_t stream, const math::Pool2D& g, const float* x,
                          const float* dy, float* dx, bool is_max, bool relu_mask) {
  pool_backward_kernel<<<grid_for(g.n * g.h * g.w * g.c), kThreads, 0, stream>>>(g, x, dy, dx,
                                                                                 is_max, relu_mask);
  check_launch("pooling backward kernel");
}

}  // namespace dlrt::cuda
