// loop_grid_sample.cc: the cpu plugin's loop kernels for grid_sample and grid_sample_grad
// (core/ops/infer_grid_sample.cc); oneDNN has no such primitive. f32 and f64, NHWC or NCHW.
// Every weight and index is plugins/common/grid_sample_math.hpp's (the CUDA kernels' too).
//
//   grid_sample       parallel over grid points: each point's taps once, then every channel
//   grid_sample_grad  dx: parallel over (n, channel) planes; a thread zeroes its planes, then
//                     walks the points of their image in order and adds each tap's share:
//                     every dx cell sums in point order whatever the thread count (the same
//                     bits on every run). dgrid: parallel over points, summed over channels.
#include <algorithm>

#include "grid_sample_geom.hpp"
#include "loop_util.hpp"

namespace dlrt::cpu::loops {
namespace {

namespace gs = plugin::grid_sample;

void check_grid_sample(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  for (const TensorView& t : op.inputs()) expect_float(op, t);
  const int64_t taps = op.get_string("mode") == "bicubic" ? 16 : 4;
  fill_cost(op, 3.0 * static_cast<double>(taps), cost);
}

// x: (N,H,W,C), grid: (N,OH,OW,2) -> y: (N,OH,OW,C) (NCHW likewise)
class GridSampleKernel : public LoopKernel {
 public:
  GridSampleKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), dtype_(op.input(0).dtype), g_(gs::geom_of(op)) {}

  void execute(const dlrt_kernel_args& args) override {
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      const T* x = static_cast<const T*>(args.inputs[0]);
      const T* grid = static_cast<const T*>(args.inputs[1]);
      T* y = static_cast<T*>(args.outputs[0]);
      const gs::Geom g = g_;
      const int64_t plane = g.oh * g.ow;
      parallel_for(g.points(), std::max<int64_t>(1, kGrainHeavy / g.c), threads_,
                   [&](int64_t b, int64_t e) {
                     for (int64_t p = b; p < e; ++p) {
                       gs::Taps tx, ty;
                       gs::point_taps(g, grid, p, &tx, &ty);
                       for (int64_t ch = 0; ch < g.c; ++ch)
                         y[g.y_index(p, ch)] = static_cast<T>(gs::sample(g, x, p / plane, ch, tx, ty));
                     }
                   });
    });
  }

 private:
  int32_t dtype_;
  gs::Geom g_;
};

// dy: y's dims, x, grid -> dx: x's dims, dgrid: grid's dims
class GridSampleGradKernel : public LoopKernel {
 public:
  GridSampleGradKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), dtype_(op.input(0).dtype), g_(gs::geom_of(op)) {}

  void execute(const dlrt_kernel_args& args) override {
    with_float(dtype_, [&](auto t) { run<decltype(t)>(args); });
  }

 private:
  template <typename T>
  void run(const dlrt_kernel_args& args) const {
    const T* dy = static_cast<const T*>(args.inputs[0]);
    const T* x = static_cast<const T*>(args.inputs[1]);
    const T* grid = static_cast<const T*>(args.inputs[2]);
    T* dx = static_cast<T*>(args.outputs[0]);
    T* dgrid = static_cast<T*>(args.outputs[1]);
    const gs::Geom g = g_;
    const int64_t plane = g.oh * g.ow;
    // dx: planes q = n*C + ch in [b, e), one image's run of channels at a time, so each
    // point's taps are computed once per run.
    parallel_for(g.n * g.c, std::max<int64_t>(1, kGrainHeavy / std::max<int64_t>(1, plane)),
                 threads_, [&](int64_t b, int64_t e) {
                   for (int64_t q = b; q < e; ++q)
                     for (int64_t row = 0; row < g.h; ++row)
                       for (int64_t col = 0; col < g.w; ++col)
                         dx[g.x_index(q / g.c, row, col, q % g.c)] = T(0);
                   for (int64_t q = b; q < e;) {
                     const int64_t in = q / g.c, c0 = q % g.c;
                     const int64_t c1 = std::min(g.c, c0 + (e - q));
                     for (int64_t p = in * plane; p < (in + 1) * plane; ++p) {
                       gs::Taps tx, ty;
                       gs::point_taps(g, grid, p, &tx, &ty);
                       for (int64_t ch = c0; ch < c1; ++ch)
                         gs::scatter(g, dx, in, ch, tx, ty, static_cast<double>(dy[g.y_index(p, ch)]),
                                     0, g.h);
                     }
                     q += c1 - c0;
                   }
                 });
    parallel_for(g.points(), std::max<int64_t>(1, kGrainHeavy / g.c), threads_,
                 [&](int64_t b, int64_t e) {
                   for (int64_t p = b; p < e; ++p) {
                     double gx, gy;
                     gs::dgrid_at(g, dy, x, grid, p, &gx, &gy);
                     dgrid[2 * p] = static_cast<T>(gx);
                     dgrid[2 * p + 1] = static_cast<T>(gy);
                   }
                 });
  }

  int32_t dtype_;
  gs::Geom g_;
};

}  // namespace

DLRT_CPU_KERNELS(t) {
  t.push_back({"grid_sample", check_grid_sample, make<GridSampleKernel>});
  t.push_back({"grid_sample_grad", check_grid_sample, make<GridSampleGradKernel>});
}

}  // namespace dlrt::cpu::loops
