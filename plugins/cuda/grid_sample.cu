// grid_sample.cu: the CUDA plugin's kernels for grid_sample and grid_sample_grad (f32, NHWC or
// NCHW, every mode and padding_mode of core/ops/infer_grid_sample.cc):
//
//   grid_sample       one thread per y element: its point's taps, weighted (y_at)
//   grid_sample_grad  dx: one thread per (n, channel, band of rows); it zeroes its rows and
//                     walks the points of its image in order, adding the taps that land in
//                     them (dx_band): no atomics, the same bits on every run, each cell summed
//                     in point order as the reference sums it. Bands: enough threads to fill
//                     the device (about 16K) without walking the points more often than needed.
//                     dgrid: one thread per grid point, summed over channels (dgrid_at).
//
// Every index and weight is plugins/common/grid_sample_math.hpp's, the cpu plugin's too, and
// tested on the host against the reference kernels (kernel_math_test.cc); this file only
// launches. cuDNN's spatial transformer sampler is bilinear, zeros-padded and NCHW only.
#include <string>

#include "grid_sample_geom.hpp"
#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

namespace gs = plugin::grid_sample;

constexpr int kThreads = 256;

#define GRID_STRIDE(i, n)                                                   \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += int64_t(gridDim.x) * blockDim.x)

__global__ void grid_sample_kernel(gs::Geom g, const float* x, const float* grid, float* y,
                                   int64_t n) {
  GRID_STRIDE(j, n) { y[j] = static_cast<float>(gs::y_at(g, x, grid, j)); }
}

__global__ void grid_sample_dx_kernel(gs::Geom g, const float* dy, const float* grid, float* dx,
                                      int64_t bands) {
  GRID_STRIDE(t, gs::dx_threads(g, bands)) { gs::dx_band(g, dy, grid, dx, t, bands); }
}

__global__ void grid_sample_dgrid_kernel(gs::Geom g, const float* dy, const float* x,
                                         const float* grid, float* dgrid) {
  GRID_STRIDE(p, g.points()) {
    double gx, gy;
    gs::dgrid_at(g, dy, x, grid, p, &gx, &gy);
    dgrid[2 * p] = static_cast<float>(gx);
    dgrid[2 * p + 1] = static_cast<float>(gy);
  }
}

// Bands of dx rows per (n, channel) plane: about 16K threads in all, at most one per row.
int64_t dx_bands(const gs::Geom& g) {
  const int64_t planes = std::max<int64_t>(1, g.n * g.c);
  return std::max<int64_t>(1, std::min<int64_t>(g.h, (16384 + planes - 1) / planes));
}

void check_grid_sample(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  require_f32(op);  // the kernels read and write f32 (coordinates, weights and sums in double)
  const double taps = op.get_string("mode") == "bicubic" ? 16 : 4;
  fill_cost(cost, dev, 3.0 * taps * static_cast<double>(op.input(0).numel), operand_bytes(op));
}

std::unique_ptr<Kernel> create_grid_sample(const dlrt_op_desc& d, const dlrt_device_desc&,
                                           size_t*) {
  OpView op(&d);
  const std::string name = op.name();
  const gs::Geom g = gs::geom_of(op);
  if (name == "grid_sample") {
    const int64_t n = op.output(0).numel;
    return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
      check_args(a, 2, 1, 0, name);
      grid_sample_kernel<<<grid_for(n), kThreads, 0, s>>>(g, in<float>(a, 0), in<float>(a, 1),
                                                          out<float>(a, 0), n);
      check_launch("grid_sample kernel");
    });
  }
  const int64_t bands = dx_bands(g);
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 3, 2, 0, name);
    grid_sample_dx_kernel<<<grid_for(gs::dx_threads(g, bands)), kThreads, 0, s>>>(
        g, in<float>(a, 0), in<float>(a, 2), out<float>(a, 0), bands);
    check_launch("grid_sample_grad dx kernel");
    grid_sample_dgrid_kernel<<<grid_for(g.points()), kThreads, 0, s>>>(
        g, in<float>(a, 0), in<float>(a, 1), in<float>(a, 2), out<float>(a, 1));
    check_launch("grid_sample_grad dgrid kernel");
  });
}

}  // namespace

DLRT_CUDA_OPS(t) {
  t.push_back({"grid_sample", &check_grid_sample, &create_grid_sample});
  t.push_back({"grid_sample_grad", &check_grid_sample, &create_grid_sample});
}

}  // namespace dlrt::cuda
