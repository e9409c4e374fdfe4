// grid_sample_math.hpp: the per-point arithmetic of grid_sample and grid_sample_grad
// (core/ops/infer_grid_sample.cc, docs/ops.md "Decisions"), written once for the cpu plugin's
// loop kernel (kernels/loop_grid_sample.cc) and the CUDA plugin's kernels (grid_sample.cu):
// the same source compiles as device code (nvcc sees __host__ __device__ on every function,
// and nothing here calls into std::), and cuda's kernel_math_test.cc runs it on the host
// against the reference kernels, so what a GPU computes per point is tested without one.
//
// Shapes: x (N,H,W,C) or (N,C,H,W) (Geom::nchw); grid (N,OH,OW,2), (gx, gy) per point, gx
// along W; y and dy (N,OH,OW,C) or (N,C,OH,OW). A "point" p is a grid position n*OH*OW +
// oh*OW + ow. Coordinates, weights and sums are double, so nearest's half-to-even ties fall
// the same way on every device (and as the reference's).
//
// What it is not: launch code or threading (the plugins split points, planes and bands), nor
// the reference (plugins/reference/kernels/grid_sample.cc is written separately, after
// ONNX's reference implementation, so the two check each other).
#pragma once

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define DLRT_GRID_FN __host__ __device__ inline
#else
#define DLRT_GRID_FN inline
#endif

namespace dlrt::plugin::grid_sample {

enum Mode : int { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum Padding : int { kZeros = 0, kBorder = 1, kReflection = 2 };

// One grid_sample instance: attributes and sizes, small enough to pass to a kernel by value.
struct Geom {
  int mode = kBilinear;
  int padding = kZeros;
  bool align = false;
  bool nchw = false;
  int64_t n = 0, c = 0, h = 0, w = 0;  // x
  int64_t oh = 0, ow = 0;              // grid, y

  DLRT_GRID_FN int64_t points() const { return n * oh * ow; }
  // Element (n, row, col, ch) of x (dx).
  DLRT_GRID_FN int64_t x_index(int64_t in, int64_t row, int64_t col, int64_t ch) const {
    return nchw ? ((in * c + ch) * h + row) * w + col : ((in * h + row) * w + col) * c + ch;
  }
  // Element (ch) of point p of y (dy): p = (in*OH + oh)*OW + ow.
  DLRT_GRID_FN int64_t y_index(int64_t p, int64_t ch) const {
    if (!nchw) return p * c + ch;
    const int64_t plane = oh * ow, in = p / plane;
    return (in * c + ch) * plane + p % plane;
  }
};

// The taps of one grid value along one axis: up to four indices read (-1: outside the image
// with zeros padding, reads 0), their weights and the weights' slopes along the source
// coordinate, and the coordinate's slope along the grid value (0 where padding or nearest
// holds it still).
struct Taps {
  int count = 0;
  int64_t index[4] = {-1, -1, -1, -1};
  double w[4] = {0, 0, 0, 0};
  double dw[4] = {0, 0, 0, 0};
  double dcoord = 0;
};

// x mirrored at lo and hi until it lies in [lo, hi]; *slope = -1 after an odd number of
// mirrors, +1 after an even one; lo = hi (one cell, align_corners) gives lo, slope 0.
DLRT_GRID_FN double reflect(double x, double lo, double hi, double* slope) {
  *slope = 1.0;
  const double range = hi - lo;
  if (range <= 0) {
    *slope = 0.0;
    return lo;
  }
  if (x >= lo && x <= hi) return x;
  const bool below = x < lo;
  const double d = below ? lo - x : x - hi;
  const double k = floor(d / range), r = d - k * range;
  const bool even = fmod(k, 2.0) == 0.0;  // k even: k+1 mirrors in all, an odd number
  *slope = even ? -1.0 : 1.0;
  if (below) return even ? lo + r : hi - r;
  return even ? hi - r : lo + r;
}

// Keys' cubic convolution kernel with a = -0.75 (ONNX's and PyTorch's bicubic) at distance
// s in [0, 2], and its slope.
DLRT_GRID_FN double keys(double s) {
  const double a = -0.75;
  if (s <= 1) return ((a + 2) * s - (a + 3)) * s * s + 1;
  return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
}
DLRT_GRID_FN double keys_slope(double s) {
  const double a = -0.75;
  if (s <= 1) return (3 * (a + 2) * s - 2 * (a + 3)) * s;
  return (3 * a * s - 10 * a) * s + 8 * a;
}

// Tap index i along an axis of length len, read through the padding mode.
DLRT_GRID_FN int64_t padded_index(const Geom& g, int64_t i, int64_t len, double lo, double hi) {
  if (g.padding == kZeros) return i < 0 || i >= len ? -1 : i;
  if (g.padding == kReflection) {
    double s;
    i = static_cast<int64_t>(reflect(static_cast<double>(i), lo, hi, &s));
  }
  return i < 0 ? 0 : i > len - 1 ? len - 1 : i;
}

// The taps of grid value v along an axis of length len (W for gx, H for gy).
DLRT_GRID_FN Taps axis_taps(const Geom& g, double v, int64_t len) {
  Taps t;
  const double L = static_cast<double>(len);
  const double lo = g.align ? 0.0 : -0.5, hi = g.align ? L - 1 : L - 0.5;
  // v in [-1, 1] -> source coordinate u: align_corners maps -1, 1 to the end cells' centres,
  // otherwise to their outer edges.
  double u = g.align ? (v + 1) / 2 * (L - 1) : ((v + 1) * L - 1) / 2;
  double slope = g.align ? (L - 1) / 2 : L / 2;
  if (g.mode == kNearest) {
    u = nearbyint(u);  // half to even, as np.rint and PyTorch
    slope = 0;
  }
  if (u < lo || u > hi) {
    if (g.padding == kBorder) {
      u = u < 0 ? 0 : L - 1;
      slope = 0;
    } else if (g.padding == kReflection) {
      double s;
      u = reflect(u, lo, hi, &s);
      slope *= s;
    }
  }
  // A NaN or astronomically distant point (only zeros padding leaves one) reads nothing.
  if (!(fabs(u) < 1e15)) return t;
  t.dcoord = slope;
  const double base = floor(u), f = u - base;
  const int64_t i0 = static_cast<int64_t>(base);
  int64_t idx[4];
  if (g.mode == kNearest) {
    t.count = 1;
    idx[0] = static_cast<int64_t>(u);
    t.w[0] = 1;
  } else if (g.mode == kBilinear) {
    t.count = 2;
    idx[0] = i0, idx[1] = i0 + 1;
    t.w[0] = 1 - f, t.w[1] = f;
    t.dw[0] = -1, t.dw[1] = 1;
  } else {  // bicubic: taps at distances 1+f, f, 1-f, 2-f
    t.count = 4;
    idx[0] = i0 - 1, idx[1] = i0, idx[2] = i0 + 1, idx[3] = i0 + 2;
    t.w[0] = keys(1 + f), t.w[1] = keys(f), t.w[2] = keys(1 - f), t.w[3] = keys(2 - f);
    t.dw[0] = keys_slope(1 + f), t.dw[1] = keys_slope(f);
    t.dw[2] = -keys_slope(1 - f), t.dw[3] = -keys_slope(2 - f);
  }
  for (int k = 0; k < t.count; ++k) t.index[k] = padded_index(g, idx[k], len, lo, hi);
  return t;
}

// The taps of point p: tx along W from gx = grid[2p], ty along H from gy = grid[2p+1].
template <typename T>
DLRT_GRID_FN void point_taps(const Geom& g, const T* grid, int64_t p, Taps* tx, Taps* ty) {
  *tx = axis_taps(g, static_cast<double>(grid[2 * p]), g.w);
  *ty = axis_taps(g, static_cast<double>(grid[2 * p + 1]), g.h);
}

// y at one point and channel: sum over the taps of wy * wx * x[row, col].
template <typename T>
DLRT_GRID_FN double sample(const Geom& g, const T* x, int64_t in, int64_t ch, const Taps& tx,
                           const Taps& ty) {
  double v = 0;
  for (int a = 0; a < ty.count; ++a) {
    if (ty.index[a] < 0) continue;
    for (int b = 0; b < tx.count; ++b)
      if (tx.index[b] >= 0)
        v += ty.w[a] * tx.w[b] * static_cast<double>(x[g.x_index(in, ty.index[a], tx.index[b], ch)]);
  }
  return v;
}

// The slopes of y at one point and channel along the two source coordinates: *sx = sum of
// wy * dwx * x, *sy = sum of dwy * wx * x.
template <typename T>
DLRT_GRID_FN void sample_slopes(const Geom& g, const T* x, int64_t in, int64_t ch,
                                const Taps& tx, const Taps& ty, double* sx, double* sy) {
  double a_x = 0, a_y = 0;
  for (int a = 0; a < ty.count; ++a) {
    if (ty.index[a] < 0) continue;
    for (int b = 0; b < tx.count; ++b) {
      if (tx.index[b] < 0) continue;
      const double v = static_cast<double>(x[g.x_index(in, ty.index[a], tx.index[b], ch)]);
      a_x += ty.w[a] * tx.dw[b] * v;
      a_y += ty.dw[a] * tx.w[b] * v;
    }
  }
  *sx = a_x, *sy = a_y;
}

// dx += d * wy * wx at each tap of one point and channel whose row lies in [row_lo, row_hi).
template <typename T>
DLRT_GRID_FN void scatter(const Geom& g, T* dx, int64_t in, int64_t ch, const Taps& tx,
                          const Taps& ty, double d, int64_t row_lo, int64_t row_hi) {
  for (int a = 0; a < ty.count; ++a) {
    const int64_t row = ty.index[a];
    if (row < row_lo || row >= row_hi) continue;  // also the zero-padded -1
    for (int b = 0; b < tx.count; ++b)
      if (tx.index[b] >= 0) {
        T& cell = dx[g.x_index(in, row, tx.index[b], ch)];
        cell = static_cast<T>(static_cast<double>(cell) + d * ty.w[a] * tx.w[b]);
      }
  }
}

// ---- per element / thread, as the CUDA kernels run them ---------------------------------

// Element j of y (y's layout).
template <typename T>
DLRT_GRID_FN double y_at(const Geom& g, const T* x, const T* grid, int64_t j) {
  int64_t p, ch;
  if (g.nchw) {
    const int64_t plane = g.oh * g.ow, nc = j / plane;
    ch = nc % g.c;
    p = (nc / g.c) * plane + j % plane;
  } else {
    p = j / g.c, ch = j % g.c;
  }
  Taps tx, ty;
  point_taps(g, grid, p, &tx, &ty);
  return sample(g, x, p / (g.oh * g.ow), ch, tx, ty);
}

// dgrid at point p: (d/dgx, d/dgy) of sum over channels of dy * y.
template <typename T>
DLRT_GRID_FN void dgrid_at(const Geom& g, const T* dy, const T* x, const T* grid, int64_t p,
                           double* dgx, double* dgy) {
  Taps tx, ty;
  point_taps(g, grid, p, &tx, &ty);
  const int64_t in = p / (g.oh * g.ow);
  double sx = 0, sy = 0;
  if (tx.dcoord != 0 || ty.dcoord != 0)
    for (int64_t ch = 0; ch < g.c; ++ch) {
      double a, b;
      sample_slopes(g, x, in, ch, tx, ty, &a, &b);
      const double d = static_cast<double>(dy[g.y_index(p, ch)]);
      sx += d * a, sy += d * b;
    }
  *dgx = sx * tx.dcoord;
  *dgy = sy * ty.dcoord;
}

// dx by bands: thread t of n*c*bands owns the rows [band*H/bands, (band+1)*H/bands) of one
// (n, channel) plane. It zeroes them, then walks every point of image n in order and adds
// the taps that land in its rows: no atomics, and each cell sums in point order (the
// reference's order), so the result is the same bits on every run.
DLRT_GRID_FN int64_t dx_threads(const Geom& g, int64_t bands) { return g.n * g.c * bands; }

template <typename T>
DLRT_GRID_FN void dx_band(const Geom& g, const T* dy, const T* grid, T* dx, int64_t t,
                          int64_t bands) {
  const int64_t band = t % bands, plane = t / bands, ch = plane % g.c, in = plane / g.c;
  const int64_t row_lo = band * g.h / bands, row_hi = (band + 1) * g.h / bands;
  for (int64_t row = row_lo; row < row_hi; ++row)
    for (int64_t col = 0; col < g.w; ++col) dx[g.x_index(in, row, col, ch)] = T(0);
  if (row_lo == row_hi) return;
  const int64_t first = in * g.oh * g.ow, last = first + g.oh * g.ow;
  for (int64_t p = first; p < last; ++p) {
    Taps tx, ty;
    point_taps(g, grid, p, &tx, &ty);
    scatter(g, dx, in, ch, tx, ty, static_cast<double>(dy[g.y_index(p, ch)]), row_lo, row_hi);
  }
}

}  // namespace dlrt::plugin::grid_sample
