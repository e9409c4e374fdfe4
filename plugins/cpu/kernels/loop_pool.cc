// loop_pool.cc: max pooling as plain loops, for max_pool2d, max_pool2d_backward and
// max_pool2d_backward_relu_bias (prim_pool.cc sends them here; average pooling stays on
// oneDNN). The fused op runs the 2x2 backward sweep with the ReLU mask and the bias sums in
// it; other geometries run the plain backward pass and one masking/summing pass after it. NHWC, the default layout,
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
// 2x2 windows with stride 2 and no padding (the op's defaults, both pools of the reference
// workload), NHWC: windows do not overlap, so each pass is one sweep with explicit vectors
// along C (loop_simd.hpp: 16 lanes on the AVX-512 path, 8 on the AVX2 one, 4 on the portable
// one; the passes are written once, in loop_pool2_rows.inc). The forward pass
// folds the four taps into y; the backward pass finds each window's winner the same way and
// writes dy or 0 into each of the window's four dx cells directly (every dx cell belongs to at
// most one window: no zeroing pass, no scatter), zeroing only the cells no window covers (the
// last row/column of an odd-sized image). Other windows take the general loops below: the
// forward pass vectorised along C the same way (window_forward_rows), the backward pass with
// per-channel scratch (scan_window, scatter_tap).
//
// Threads: the forward pass and the 2x2 backward pass split the N*OH output rows (a 2x2 row
// owns its two dx rows); the general backward pass splits the images (each thread zeroes and
// writes only its own images' dx, so overlapping windows need no atomics). Per-thread scratch
// (the running best value and winning tap per channel) is allocated in create; run allocates
// nothing.
//
// bf16 images (mixed precision) take the 2x2 path of all three ops (runs_bf16): the same vector
// code with lanes widened on load and narrowed on store, exact since it only selects and
// copies; the fused op's bias sums run in f32 lanes and doubles as for f32 and are rounded to
// bf16 once. So each bf16 pass moves half the bytes of the f32 one and none runs between
// conversions (the widening kernel's three extra passes made the fused op 2.6x its f32 time).
// The AVX-512 build is what lets the halved bytes show: on 8 lanes the widening and narrowing
// cost more than they saved (the reference CNN's pool1 forward, `dlbench ops`: f32 122 us, bf16
// 149 on AVX2, 63-82 on AVX-512; the fused backward f32 333 -> 253, bf16 320 -> 145-175).
#include "loop_pool.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "loop_simd.hpp"
#include "loop_util.hpp"
#include "narrow_float.hpp"

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
inline void scatter_tap(float* __restrict d, const float* __restrict g,
                        const int32_t* __restrict arg, int32_t tap, int64_t C) {
  for (int64_t c = 0; c < C; ++c) {
    const float gv = g[c];  // loaded unconditionally, so the select vectorises
    d[c] += arg[c] == tap ? gv : 0.0f;
  }
}

// NCHW: one plane (n, c) of H*W cells; returns the offset in the plane of the window's first
// maximum (-1 when no cell is in bounds), with the same rule as scan_window.
inline int64_t scan_plane(const float* plane, const ImageShape& xs, const Window1D& wh,
                          const Window1D& ww, int64_t oh, int64_t ow) {
  int64_t best_at = -1;
  float best = 0;
  for (int64_t kh = 0; kh < wh.k; ++kh) {
    const int64_t ih = wh.input_at(oh, kh);
    if (ih < 0 || ih >= xs.h) continue;
    for (int64_t kw = 0; kw < ww.k; ++kw) {
      const int64_t iw = ww.input_at(ow, kw);
      if (iw < 0 || iw >= xs.w) continue;
      const float v = plane[ih * xs.w + iw];
      if (best_at < 0 || v > best || (std::isnan(v) && !std::isnan(best)))
        best = v, best_at = ih * xs.w + iw;
    }
  }
  return best_at;
}

// ---- 2x2, stride 2, no padding, NHWC ---------------------------------------------------

#define POOL2_INLINE DLRT_SIMD_INLINE
#include "loop_pool2_rows.inc"
#undef POOL2_INLINE

#if DLRT_HAVE_AVX2_PATH
// The same passes for AVX-512 (16 lanes, k-register masks): the AVX-512 build's instances.
namespace z16 {
#define POOL2_INLINE DLRT_SIMD_INLINE_AVX512
#include "loop_pool2_rows.inc"
#undef POOL2_INLINE
}  // namespace z16

template <typename E>
DLRT_TARGET_AVX512 void pool2_forward_avx512(const E* x, E* y, const ImageShape& xs,
                                             const ImageShape& ys, int64_t b, int64_t e) {
  z16::pool2_forward_rows<simd::Z16>(x, y, xs, ys, b, e);
}
template <typename E>
DLRT_TARGET_AVX512 void pool2_backward_avx512(const E* x, const E* dy, E* dx, const ImageShape& xs,
                                              const ImageShape& ys, int64_t b, int64_t e) {
  z16::pool2_backward_rows<simd::Z16>(x, dy, dx, xs, ys, b, e);
}
template <typename E>
DLRT_TARGET_AVX512 void pool2_backward_fused_avx512(const E* x, const E* dy, E* dx,
                                                    const ImageShape& xs, const ImageShape& ys,
                                                    int64_t b, int64_t e, double* sum) {
  z16::pool2_backward_rows<simd::Z16, true>(x, dy, dx, xs, ys, b, e, sum);
}
#else
// No AVX-512 off x86 (avx512_ is false there): the portable build under the same names.
template <typename E>
void pool2_forward_avx512(const E* x, E* y, const ImageShape& xs, const ImageShape& ys, int64_t b,
                          int64_t e) {
  pool2_forward_rows<simd::F4>(x, y, xs, ys, b, e);
}
template <typename E>
void pool2_backward_avx512(const E* x, const E* dy, E* dx, const ImageShape& xs,
                           const ImageShape& ys, int64_t b, int64_t e) {
  pool2_backward_rows<simd::F4>(x, dy, dx, xs, ys, b, e);
}
template <typename E>
void pool2_backward_fused_avx512(const E* x, const E* dy, E* dx, const ImageShape& xs,
                                 const ImageShape& ys, int64_t b, int64_t e, double* sum) {
  pool2_backward_rows<simd::F4, true>(x, dy, dx, xs, ys, b, e, sum);
}
#endif
template <typename E>
DLRT_TARGET_AVX2 void pool2_forward_avx2(const E* x, E* y, const ImageShape& xs,
                                         const ImageShape& ys, int64_t b, int64_t e) {
  pool2_forward_rows<simd::F8>(x, y, xs, ys, b, e);
}
template <typename E>
void pool2_forward_base(const E* x, E* y, const ImageShape& xs, const ImageShape& ys, int64_t b,
                        int64_t e) {
  pool2_forward_rows<simd::F4>(x, y, xs, ys, b, e);
}
template <typename E>
DLRT_TARGET_AVX2 void pool2_backward_avx2(const E* x, const E* dy, E* dx, const ImageShape& xs,
                                          const ImageShape& ys, int64_t b, int64_t e) {
  pool2_backward_rows<simd::F8>(x, dy, dx, xs, ys, b, e);
}
template <typename E>
void pool2_backward_base(const E* x, const E* dy, E* dx, const ImageShape& xs, const ImageShape& ys,
                         int64_t b, int64_t e) {
  pool2_backward_rows<simd::F4>(x, dy, dx, xs, ys, b, e);
}
template <typename E>
DLRT_TARGET_AVX2 void pool2_backward_fused_avx2(const E* x, const E* dy, E* dx,
                                                const ImageShape& xs, const ImageShape& ys,
                                                int64_t b, int64_t e, double* sum) {
  pool2_backward_rows<simd::F8, true>(x, dy, dx, xs, ys, b, e, sum);
}
template <typename E>
void pool2_backward_fused_base(const E* x, const E* dy, E* dx, const ImageShape& xs,
                               const ImageShape& ys, int64_t b, int64_t e, double* sum) {
  pool2_backward_rows<simd::F4, true>(x, dy, dx, xs, ys, b, e, sum);
}

// ---- any other window, NHWC, forward --------------------------------------------------------

// Windows of at most this many taps take window_forward_rows (its tap offsets live in a local
// array); larger ones the scalar scan_window loop.
constexpr int kMaxVectorTaps = 64;

// Output rows [b, e) of the forward pass for any window, stride, dilation and padding: per
// output cell, the offsets of its in-bounds taps (row-major) are found once, then C is swept L
// lanes at a time, each tap folded in with `takes` (the first in-bounds tap starts the best,
// so padding is the spec's -inf and a NaN wins as in scan_window). Nothing but x and y is
// touched: the forward pass needs no arg, unlike the backward one. (The ResNet-50 stem's
// 3x3 stride-2 SAME pool over 112x112x64 took 0.94 ms at batch 1 in scan_window's loop.)
template <typename V>
DLRT_SIMD_INLINE void window_forward_rows(const float* x, float* y, const ImageShape& xs,
                                          const ImageShape& ys, const Window1D& wh,
                                          const Window1D& ww, int64_t b, int64_t e) {
  constexpr int64_t L = simd::Traits<V>::kLanes;
  const int64_t C = xs.c;
  int64_t at[kMaxVectorTaps];
  for (int64_t r = b; r < e; ++r) {
    const int64_t n = r / ys.h, oh = r % ys.h;
    const float* img = x + n * xs.h * xs.w * C;
    float* q = y + r * ys.w * C;
    for (int64_t ow = 0; ow < ys.w; ++ow, q += C) {
      int taps = 0;
      for (int64_t kh = 0; kh < wh.k; ++kh) {
        const int64_t ih = wh.input_at(oh, kh);
        if (ih < 0 || ih >= xs.h) continue;
        for (int64_t kw = 0; kw < ww.k; ++kw) {
          const int64_t iw = ww.input_at(ow, kw);
          if (iw >= 0 && iw < xs.w) at[taps++] = (ih * xs.w + iw) * C;
        }
      }
      if (taps == 0) {  // no in-bounds cell: SAME/VALID never make one, kept for safety
        for (int64_t c = 0; c < C; ++c) q[c] = -std::numeric_limits<float>::infinity();
        continue;
      }
      int64_t c = 0;
      for (; c + L <= C; c += L) {
        V best = simd::load<V>(img + at[0] + c);
        for (int t = 1; t < taps; ++t) {
          const V v = simd::load<V>(img + at[t] + c);
          best = simd::select(takes(v, best), v, best);
        }
        simd::store(q + c, best);
      }
      for (; c < C; ++c) {
        float best = img[at[0] + c];
        for (int t = 1; t < taps; ++t) {
          const float v = img[at[t] + c];
          best = takes1(v, best) ? v : best;
        }
        q[c] = best;
      }
    }
  }
}

DLRT_TARGET_AVX2 void window_forward_avx2(const float* x, float* y, const ImageShape& xs,
                                          const ImageShape& ys, const Window1D& wh,
                                          const Window1D& ww, int64_t b, int64_t e) {
  window_forward_rows<simd::F8>(x, y, xs, ys, wh, ww, b, e);
}
void window_forward_base(const float* x, float* y, const ImageShape& xs, const ImageShape& ys,
                         const Window1D& wh, const Window1D& ww, int64_t b, int64_t e) {
  window_forward_rows<simd::F4>(x, y, xs, ys, wh, ww, b, e);
}

// The 2x2 path applies: NHWC, 2x2 windows, stride 2, no padding.
bool is_pool2(const MaxPoolGeometry& g) {
  auto two = [](const Window1D& w) {
    return w.k == 2 && w.stride == 2 && w.dilation == 1 && w.pad_before == 0 && w.pad_after == 0;
  };
  return !g.x.nchw && two(g.h) && two(g.w);
}

class MaxPool : public LoopKernel {
 public:
  MaxPool(const dlrt_plugin& p, const MaxPoolGeometry& g, bool backward, bool relu_bias, bool bf16)
      : LoopKernel(p),
        g_(g),
        backward_(backward),
        relu_bias_(relu_bias),
        pool2_(is_pool2(g)),
        bf16_(bf16),
        avx512_(DLRT_HAVE_AVX2_PATH && p.onednn_avx512) {
    if (relu_bias_) sums_.resize(static_cast<size_t>(threads_ * g.x.c));  // per thread
    if (pool2_) return;  // no scratch
    best_.resize(static_cast<size_t>(threads_ * g.x.c));
    arg_.resize(static_cast<size_t>(threads_ * g.x.c));
  }

  void execute(const dlrt_kernel_args& args) override {
    // Inside someone else's parallel region parallel_for runs on this thread alone, whose
    // thread number may exceed ours: use slot 0 (runs of one kernel never overlap, plugin.h).
    nested_ = omp_in_parallel();
    if (bf16_) return execute_pool2(static_cast<const uint16_t*>(args.inputs[0]), args);
    const float* x = static_cast<const float*>(args.inputs[0]);
    if (pool2_) return execute_pool2(x, args);
    if (relu_bias_) {
      const float* dy = static_cast<const float*>(args.inputs[1]);
      float *dz = static_cast<float*>(args.outputs[0]), *db = static_cast<float*>(args.outputs[1]);
      if (g_.x.nchw) backward_nchw(x, dy, dz);
      else backward(x, dy, dz);
      return relu_bias_pass(x, dz, db);
    }
    if (g_.x.nchw) {
      if (!backward_) return forward_nchw(x, static_cast<float*>(args.outputs[0]));
      return backward_nchw(x, static_cast<const float*>(args.inputs[1]),
                           static_cast<float*>(args.outputs[0]));
    }
    if (!backward_) return forward(x, static_cast<float*>(args.outputs[0]));
    backward(x, static_cast<const float*>(args.inputs[1]), static_cast<float*>(args.outputs[0]));
  }

 private:
  // Scratch of the calling OpenMP thread (thread 0 outside a parallel region).
  int64_t slot() const { return nested_ ? 0 : omp_get_thread_num(); }
  float* best() { return best_.data() + slot() * g_.x.c; }
  int32_t* arg() { return arg_.data() + slot() * g_.x.c; }

  // The 2x2 path, on f32 (E = float) or bf16 images (E = uint16_t: lanes widened on load and
  // narrowed on store, exact since the pass only selects and copies; db, summed in f32 lanes
  // and doubles as for f32, is rounded once to bf16).
  template <typename E>
  void execute_pool2(const E* x, const dlrt_kernel_args& args) {
    E* out = static_cast<E*>(args.outputs[0]);
    if (!backward_) return forward_pool2(x, out);
    const E* dy = static_cast<const E*>(args.inputs[1]);
    if (!relu_bias_) return backward_pool2(x, dy, out);
    backward_pool2_relu_bias(x, dy, out);
    for (int64_t c = 0; c < g_.x.c; ++c) {
      double total = 0;
      for (int t = 0; t < threads_; ++t) total += sums_[static_cast<size_t>(t * g_.x.c + c)];
      if constexpr (std::is_same_v<E, float>)
        static_cast<float*>(args.outputs[1])[c] = static_cast<float>(total);
      else
        static_cast<uint16_t*>(args.outputs[1])[c] =
            plugin::float_to_bf16(static_cast<float>(total));
    }
  }

  template <typename E>
  void forward_pool2(const E* x, E* y) {
    const ImageShape &xs = g_.x, &ys = g_.y;
    const int64_t grain = std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, 4 * ys.w * xs.c));
    parallel_for(ys.n * ys.h, grain, threads_, [&](int64_t b, int64_t e) {
      if (avx512_) pool2_forward_avx512(x, y, xs, ys, b, e);
      else if (avx2_) pool2_forward_avx2(x, y, xs, ys, b, e);
      else pool2_forward_base(x, y, xs, ys, b, e);
    });
  }
  template <typename E>
  void backward_pool2(const E* x, const E* dy, E* dx) {
    const ImageShape &xs = g_.x, &ys = g_.y;
    const int64_t grain = std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, 2 * xs.w * xs.c));
    parallel_for(ys.n * ys.h, grain, threads_, [&](int64_t b, int64_t e) {
      if (avx512_) pool2_backward_avx512(x, dy, dx, xs, ys, b, e);
      else if (avx2_) pool2_backward_avx2(x, dy, dx, xs, ys, b, e);
      else pool2_backward_base(x, dy, dx, xs, ys, b, e);
    });
  }

  // max_pool2d_backward_relu_bias on the 2x2 path: one sweep (pool2_backward_rows, kFused),
  // each chunk of output rows summing into its thread's partials in sums_ (execute_pool2 adds
  // them in thread order).
  template <typename E>
  void backward_pool2_relu_bias(const E* x, const E* dy, E* dz) {
    const ImageShape &xs = g_.x, &ys = g_.y;
    const int64_t C = xs.c;
    std::fill(sums_.begin(), sums_.end(), 0.0);
    const int64_t grain = std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, 2 * xs.w * C));
    parallel_for(ys.n * ys.h, grain, threads_, [&](int64_t b, int64_t e) {
      double* sum = sums_.data() + slot() * C;
      if (avx512_) pool2_backward_fused_avx512(x, dy, dz, xs, ys, b, e, sum);
      else if (avx2_) pool2_backward_fused_avx2(x, dy, dz, xs, ys, b, e, sum);
      else pool2_backward_fused_base(x, dy, dz, xs, ys, b, e, sum);
    });
  }
  // Other windows and NCHW: after the plain backward pass into dz, one more pass zeroes dz
  // where x <= 0 and sums it per channel (on this thread: not the fast path's geometry; the
  // sums in sums_' first C entries).
  void relu_bias_pass(const float* x, float* dz, float* db) {
    const ImageShape& xs = g_.x;
    double* sum = sums_.data();
    std::fill_n(sum, xs.c, 0.0);
    for (int64_t n = 0; n < xs.n; ++n)
      for (int64_t h = 0; h < xs.h; ++h)
        for (int64_t w = 0; w < xs.w; ++w)
          for (int64_t c = 0; c < xs.c; ++c) {
            const int64_t k = xs.index(n, h, w, c);
            if (!(x[k] > 0.0f)) dz[k] = 0.0f;
            sum[c] += double(dz[k]);
          }
    for (int64_t c = 0; c < xs.c; ++c) db[c] = static_cast<float>(sum[c]);
  }

  void forward(const float* x, float* y) {
    const ImageShape &xs = g_.x, &ys = g_.y;
    const int64_t img = xs.h * xs.w * xs.c, C = xs.c;
    const int64_t grain =
        std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, ys.w * C * g_.h.k * g_.w.k));
    if (g_.h.k * g_.w.k <= kMaxVectorTaps) {
      parallel_for(ys.n * ys.h, grain, threads_, [&](int64_t b, int64_t e) {
        if (avx2_) window_forward_avx2(x, y, xs, ys, g_.h, g_.w, b, e);
        else window_forward_base(x, y, xs, ys, g_.h, g_.w, b, e);
      });
      return;
    }
    parallel_for(ys.n * ys.h, grain, threads_, [&](int64_t b, int64_t e) {
      float* bst = best();
      int32_t* ag = arg();
      for (int64_t r = b; r < e; ++r) {
        const int64_t n = r / ys.h, oh = r % ys.h;
        for (int64_t ow = 0; ow < ys.w; ++ow) {
          scan_window(x + n * img, xs, g_.h, g_.w, oh, ow, bst, ag);
          std::memcpy(y + ((n * ys.h + oh) * ys.w + ow) * C, bst,
                      static_cast<size_t>(C) * sizeof(float));
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
    parallel_for(xs.n * xs.c, std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, in_plane)),
                 threads_, [&](int64_t b, int64_t e) {
                   for (int64_t p = b; p < e; ++p)
                     for (int64_t oh = 0; oh < ys.h; ++oh)
                       for (int64_t ow = 0; ow < ys.w; ++ow) {
                         const int64_t at = scan_plane(x + p * in_plane, xs, g_.h, g_.w, oh, ow);
                         y[p * out_plane + oh * ys.w + ow] =
                             at < 0 ? -std::numeric_limits<float>::infinity()
                                    : x[p * in_plane + at];
                       }
                 });
  }
  void backward_nchw(const float* x, const float* dy, float* dx) {
    const ImageShape &xs = g_.x, &ys = g_.y;
    const int64_t in_plane = xs.h * xs.w, out_plane = ys.h * ys.w;
    parallel_for(xs.n * xs.c, std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, in_plane)),
                 threads_, [&](int64_t b, int64_t e) {
                   for (int64_t p = b; p < e; ++p) {
                     std::memset(dx + p * in_plane, 0,
                                 static_cast<size_t>(in_plane) * sizeof(float));
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
  bool relu_bias_;  // max_pool2d_backward_relu_bias: dz masked by x > 0, and db
  bool pool2_;      // the 2x2 stride-2 unpadded NHWC path (no scratch but relu_bias' sums)
  bool bf16_;       // bf16 operands (the 2x2 path only: runs_bf16)
  bool avx512_;
  bool nested_ = false;
  std::vector<float> best_;
  std::vector<int32_t> arg_;
  std::vector<double> sums_;  // relu_bias: per thread, C
};

}  // namespace

std::unique_ptr<Kernel> make_max_pool(const dlrt_plugin& p, const MaxPoolGeometry& g, bool backward,
                                      int32_t dtype, bool relu_bias) {
  return std::make_unique<MaxPool>(p, g, backward, relu_bias, dtype == DLRT_BF16);
}

bool runs_bf16(const MaxPoolGeometry& g) { return is_pool2(g); }

}  // namespace dlrt::cpu::loops
