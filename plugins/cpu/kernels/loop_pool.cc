// loop_pool.cc: max pooling as plain loops, for max_pool2d and max_pool2d_backward
// (prim_pool.cc sends them here; average pooling stays on oneDNN). NHWC, the default layout,
// is vectorised along C; NCHW runs scalar loops per plane.
//
// Why not oneDNN: (1) oneDNN 2.6's max pooling does not follow the spec for NaN (a NaN in x
// must win its window; primitive_kernels_test MaxPool2dBackwardNanIsTheMax). (2) Its backward max pooling needs the forward pass's workspace, and the op's
// inputs are (x, dy) (docs/ops.md), so the primitive kernel ran a training forward pass into
// an owned y and workspace and then the backward pass: three passes over the large tensors.
// Measured with `dlbench ops` (docs/benchmarks.md) that was the costliest op of the reference
// workload's step (pool1.backward, (64,26,26,32)). Here the backward pass finds each window's
// first maximum itself and scatters dy into dx in one sweep per image, and the forward pass
// is one read of x and one write of y.
//
//   max_pool2d           x (N,H,W,C)               -> y (N,OH,OW,C)
//   max_pool2d_backward  x (N,H,W,C), dy (N,OH,OW,C) -> dx (N,H,W,C)
// Semantics as the reference (plugins/reference/kernels/pool.cc): windows scan their cells in
// row-major order; a cell wins when it is strictly greater than the best so far, or is the
// first NaN (a NaN counts as larger than everything); padded cells (SAME) are skipped, which
// is the spec's -inf; dy goes to the first maximum, summed where windows overlap.
//
// Threads: the forward pass splits the N*OH output rows; the backward pass splits the images
// (each thread zeroes and writes only its own images' dx, so overlapping windows need no
// atomics). Per-thread scratch (the running best value and winning tap per channel) is
// allocated in create; run allocates nothing.
#include "loop_pool.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "loop_util.hpp"

namespace dlrt::cpu::loops {
namespace {

using plugin::ImageShape;
using plugin::Window1D;

// Scans one window: for each in-bounds tap (row-major), folds x's C channels into best/arg.
// `x_img` is image n of x, `tap` counts every tap of the window (in bounds or not), so arg
// identifies (kh, kw) as tap = kh*KW + kw.
inline void scan_window(const float* __restrict x_img, const ImageShape& xs, const Window1D& wh,
                        const Window1D& ww, int64_t oh, int64_t ow, float* __restrict best,
                        int32_t* __restrict arg) {
  const int64_t C = xs.c;
  bool first = true;
  for (int64_t kh = 0; kh < wh.k; ++kh) {
    const int64_t ih = wh.input_at(oh, kh);
    if (ih < 0 || ih >= xs.h) continue;
    for (int64_t kw = 0; kw < ww.k; ++kw) {
      const int64_t iw = ww.input_at(ow, kw);
      if (iw < 0 || iw >= xs.w) continue;
      const float* __restrict row = x_img + (ih * xs.w + iw) * C;
      const int32_t tap = static_cast<int32_t>(kh * ww.k + kw);
      if (first) {
        for (int64_t c = 0; c < C; ++c) best[c] = row[c], arg[c] = tap;
        first = false;
        continue;
      }
      for (int64_t c = 0; c < C; ++c) {
        const float v = row[c], b = best[c];
        // v > b, or v is NaN while b is not (the first NaN wins; later ones do not).
        const bool take = (v > b) | ((v != v) & (b == b));
        best[c] = take ? v : b;
        arg[c] = take ? tap : arg[c];
      }
    }
  }
  if (first)  // no in-bounds cell: SAME/VALID never make one, kept for safety
    for (int64_t c = 0; c < C; ++c) best[c] = -std::numeric_limits<float>::infinity(), arg[c] = -1;
}

// d[c] += g[c] for the channels whose window maximum is at `tap`.
inline void scatter_tap(float* __restrict d, const float* __restrict g, const int32_t* __restrict arg, int32_t tap,
                        int64_t C) {
  for (int64_t c = 0; c < C; ++c) {
    const float gv = g[c];  // loaded unconditionally, so the select vectorises
    d[c] += arg[c] == tap ? gv : 0.0f;
  }
}

// NCHW: one plane (n, c) of H*W cells; returns the offset in the plane of the window's first
// maximum (-1 when no cell is in bounds), with the same rule as scan_window.
inline int64_t scan_plane(const float* plane, const ImageShape& xs, const Window1D& wh, const Window1D& ww,
                          int64_t oh, int64_t ow) {
  int64_t best_at = -1;
  float best = 0;
  for (int64_t kh = 0; kh < wh.k; ++kh) {
    const int64_t ih = wh.input_at(oh, kh);
    if (ih < 0 || ih >= xs.h) continue;
    for (int64_t kw = 0; kw < ww.k; ++kw) {
      const int64_t iw = ww.input_at(ow, kw);
      if (iw < 0 || iw >= xs.w) continue;
      const float v = plane[ih * xs.w + iw];
      if (best_at < 0 || v > best || (std::isnan(v) && !std::isnan(best))) best = v, best_at = ih * xs.w + iw;
    }
  }
  return best_at;
}

class MaxPool : public LoopKernel {
 public:
  MaxPool(const dlrt_plugin& p, const MaxPoolGeometry& g, bool backward)
      : LoopKernel(p), g_(g), backward_(backward),
        best_(static_cast<size_t>(threads_ * g.x.c)), arg_(static_cast<size_t>(threads_ * g.x.c)) {}

  void execute(const dlrt_kernel_args& args) override {
    // Inside someone else's parallel region parallel_for runs on this thread alone, whose
    // thread number may exceed ours: use slot 0 (runs of one kernel never overlap, plugin.h).
    nested_ = omp_in_parallel();
    const float* x = static_cast<const float*>(args.inputs[0]);
    if (g_.x.nchw) {
      if (!backward_) return forward_nchw(x, static_cast<float*>(args.outputs[0]));
      return backward_nchw(x, static_cast<const float*>(args.inputs[1]), static_cast<float*>(args.outputs[0]));
    }
    if (!backward_) return forward(x, static_cast<float*>(args.outputs[0]));
    backward(x, static_cast<const float*>(args.inputs[1]), static_cast<float*>(args.outputs[0]));
  }

 private:
  // Scratch of the calling OpenMP thread (thread 0 outside a parallel region).
  int64_t slot() const { return nested_ ? 0 : omp_get_thread_num(); }
  float* best() { return best_.data() + slot() * g_.x.c; }
  int32_t* arg() { return arg_.data() + slot() * g_.x.c; }

  void forward(const float* x, float* y) {
    const ImageShape &xs = g_.x, &ys = g_.y;
    const int64_t img = xs.h * xs.w * xs.c, C = xs.c;
    const int64_t grain = std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, ys.w * C * g_.h.k * g_.w.k));
    parallel_for(ys.n * ys.h, grain, threads_, [&](int64_t b, int64_t e) {
      float* bst = best();
      int32_t* ag = arg();
      for (int64_t r = b; r < e; ++r) {
        const int64_t n = r / ys.h, oh = r % ys.h;
        for (int64_t ow = 0; ow < ys.w; ++ow) {
          scan_window(x + n * img, xs, g_.h, g_.w, oh, ow, bst, ag);
          std::memcpy(y + ((n * ys.h + oh) * ys.w + ow) * C, bst, static_cast<size_t>(C) * sizeof(float));
        }
      }
    });
  }

  void backward(const float* x, const float* dy, float* dx) {
    const ImageShape &xs = g_.x, &ys = g_.y;
    const int64_t img = xs.h * xs.w * xs.c, C = xs.c;
    parallel_for(xs.n, std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, img)), threads_,
                 [&](int64_t b, int64_t e) {
      float* bst = best();
      int32_t* ag = arg();
      for (int64_t n = b; n < e; ++n) {
        float* __restrict dx_img = dx + n * img;
        std::memset(dx_img, 0, static_cast<size_t>(img) * sizeof(float));
        for (int64_t oh = 0; oh < ys.h; ++oh)
          for (int64_t ow = 0; ow < ys.w; ++ow) {
            scan_window(x + n * img, xs, g_.h, g_.w, oh, ow, bst, ag);
            const float* __restrict g = dy + ((n * ys.h + oh) * ys.w + ow) * C;
            // Scatter: the window's taps, each adding dy to the channels it won.
            for (int64_t kh = 0; kh < g_.h.k; ++kh) {
              const int64_t ih = g_.h.input_at(oh, kh);
              if (ih < 0 || ih >= xs.h) continue;
              for (int64_t kw = 0; kw < g_.w.k; ++kw) {
                const int64_t iw = g_.w.input_at(ow, kw);
                if (iw < 0 || iw >= xs.w) continue;
                const int32_t tap = static_cast<int32_t>(kh * g_.w.k + kw);
                scatter_tap(dx_img + (ih * xs.w + iw) * C, g, ag, tap, C);
              }
            }
          }
      }
    });
  }

  // NCHW: plain scalar loops over the planes (not the default layout; kept simple).
  void forward_nchw(const float* x, float* y) {
    const ImageShape &xs = g_.x, &ys = g_.y;
    const int64_t in_plane = xs.h * xs.w, out_plane = ys.h * ys.w;
    parallel_for(xs.n * xs.c, std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, in_plane)), threads_,
                 [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p)
        for (int64_t oh = 0; oh < ys.h; ++oh)
          for (int64_t ow = 0; ow < ys.w; ++ow) {
            const int64_t at = scan_plane(x + p * in_plane, xs, g_.h, g_.w, oh, ow);
            y[p * out_plane + oh * ys.w + ow] = at < 0 ? -std::numeric_limits<float>::infinity() : x[p * in_plane + at];
          }
    });
  }
  void backward_nchw(const float* x, const float* dy, float* dx) {
    const ImageShape &xs = g_.x, &ys = g_.y;
    const int64_t in_plane = xs.h * xs.w, out_plane = ys.h * ys.w;
    parallel_for(xs.n * xs.c, std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, in_plane)), threads_,
                 [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        std::memset(dx + p * in_plane, 0, static_cast<size_t>(in_plane) * sizeof(float));
        for (int64_t oh = 0; oh < ys.h; ++oh)
          for (int64_t ow = 0; ow < ys.w; ++ow) {
            const int64_t at = scan_plane(x + p * in_plane, xs, g_.h, g_.w, oh, ow);
            if (at >= 0) dx[p * in_plane + at] += dy[p * out_plane + oh * ys.w + ow];
          }
      }
    });
  }

  MaxPoolGeometry g_;
  bool backward_;
  bool nested_ = false;
  std::vector<float> best_;
  std::vector<int32_t> arg_;
};

}  // namespace

std::unique_ptr<Kernel> make_max_pool(const dlrt_plugin& p, const MaxPoolGeometry& g, bool backward) {
  return std::make_unique<MaxPool>(p, g, backward);
}

}  // namespace dlrt::cpu::loops
