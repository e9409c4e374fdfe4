// grid_sample.cc: grid_sample and grid_sample_grad, NHWC or NCHW, every mode and padding_mode;
// the spec is core/ops/infer_grid_sample.cc's header and docs/ops.md ("Decisions"), written
// after ONNX's reference (onnx/reference/ops/op_grid_sample.py) step for step:
//
//   1. g in [-1,1] -> source coordinate u (align_corners: (g+1)/2*(L-1), else ((g+1)*L-1)/2);
//   2. nearest: u = round half to even (np.rint);
//   3. u outside [lo, hi] ((0, L-1) / (-0.5, L-0.5)): border clamps it to [0, L-1],
//      reflection mirrors it at lo and hi until it lies inside, zeros leaves it;
//   4. the taps: nearest one (u itself), bilinear two (floor(u), +1; weights 1-f, f),
//      bicubic four (floor(u)-1 .. +2; Keys' weights of f with a = -0.75); each tap's index
//      read through the padding_mode again (zeros: outside reads 0; border: clamped;
//      reflection: mirrored), rows and columns separately.
//
// The backward differentiates the same steps: du/dg = (L-1)/2 or L/2; step 3 passes the
// slope on (zeros, and inside [lo, hi]), stops it (border outside) or flips its sign once per
// mirror (reflection); step 4's weights have slopes -1, +1 (bilinear) and Keys' derivatives
// (bicubic); nearest has none (dgrid = 0). dx adds dy times each tap's weight to the tap's
// cell, output cells in order, in double.
#include <cmath>
#include <string>
#include <vector>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

using plugin::ImageShape;

enum class Mode { kBilinear, kNearest, kBicubic };
enum class Pad { kZeros, kBorder, kReflection };

struct Config {
  Mode mode;
  Pad pad;
  bool align;
};

Config config_of(const OpView& op) {
  const std::string& m = op.get_string("mode");
  const std::string& p = op.get_string("padding_mode");
  return {m == "nearest" ? Mode::kNearest : m == "bicubic" ? Mode::kBicubic : Mode::kBilinear,
          p == "border" ? Pad::kBorder : p == "reflection" ? Pad::kReflection : Pad::kZeros,
          op.get_bool("align_corners")};
}

// x mirrored at lo and hi until inside [lo, hi] (ONNX's _gs_reflect); *slope is dresult/dx:
// -1 after an odd number of mirrors, +1 after an even one. One cell with align_corners
// (lo = hi) has nothing to mirror: every point is that cell.
double reflect(double x, double lo, double hi, double* slope) {
  *slope = 1.0;
  const double range = hi - lo;
  if (range <= 0) {
    *slope = 0.0;
    return lo;
  }
  if (x < lo) {
    const double d = lo - x, k = std::floor(d / range), r = d - k * range;
    const bool even = std::fmod(k, 2.0) == 0.0;
    *slope = even ? -1.0 : 1.0;
    return even ? lo + r : hi - r;
  }
  if (x > hi) {
    const double d = x - hi, k = std::floor(d / range), r = d - k * range;
    const bool even = std::fmod(k, 2.0) == 0.0;
    *slope = even ? -1.0 : 1.0;
    return even ? hi - r : lo + r;
  }
  return x;
}

// Up to four taps of one grid value along one axis of length `len`: the index read (-1:
// zero padding, reads 0), its weight, the weight's slope along the coordinate, and the
// coordinate's slope along the grid value (dcoord).
struct Taps {
  int count = 0;
  int64_t index[4] = {-1, -1, -1, -1};
  double w[4] = {0, 0, 0, 0}, dw[4] = {0, 0, 0, 0};
  double dcoord = 0;
};

// Keys' cubic convolution kernel (a = -0.75) at distance s >= 0 and its derivative.
constexpr double kA = -0.75;
double keys(double s) {
  if (s <= 1) return ((kA + 2) * s - (kA + 3)) * s * s + 1;
  return ((kA * s - 5 * kA) * s + 8 * kA) * s - 4 * kA;
}
double keys_slope(double s) {
  if (s <= 1) return (3 * (kA + 2) * s - 2 * (kA + 3)) * s;
  return (3 * kA * s - 10 * kA) * s + 8 * kA;
}

Taps axis_taps(const Config& cfg, double g, int64_t len) {
  Taps t;
  const double lo = cfg.align ? 0.0 : -0.5, hi = cfg.align ? double(len - 1) : double(len) - 0.5;
  double u = cfg.align ? (g + 1) / 2 * double(len - 1) : ((g + 1) * double(len) - 1) / 2;
  double slope = cfg.align ? double(len - 1) / 2 : double(len) / 2;
  if (cfg.mode == Mode::kNearest) u = std::nearbyint(u), slope = 0;
  if (u < lo || u > hi) {
    if (cfg.pad == Pad::kBorder) {
      u = u < 0 ? 0 : double(len - 1);
      slope = 0;
    } else if (cfg.pad == Pad::kReflection) {
      double s;
      u = reflect(u, lo, hi, &s);
      slope *= s;
    }
  }
  // A NaN or astronomically far point (zeros padding only gets here with one) reads nothing.
  if (!(std::fabs(u) < 1e15)) return t;
  t.dcoord = slope;
  const double base = std::floor(u), f = u - base;
  auto put = [&](int64_t i, double w, double dw) {
    if (cfg.pad == Pad::kBorder) {
      i = i < 0 ? 0 : i > len - 1 ? len - 1 : i;
    } else if (cfg.pad == Pad::kReflection) {
      double s;
      i = static_cast<int64_t>(reflect(double(i), lo, hi, &s));
      i = i < 0 ? 0 : i > len - 1 ? len - 1 : i;
    } else if (i < 0 || i > len - 1) {
      i = -1;
    }
    t.index[t.count] = i, t.w[t.count] = w, t.dw[t.count] = dw, ++t.count;
  };
  const int64_t i0 = static_cast<int64_t>(base);
  switch (cfg.mode) {
    case Mode::kNearest:
      put(static_cast<int64_t>(u), 1, 0);
      break;
    case Mode::kBilinear:
      put(i0, 1 - f, -1);
      put(i0 + 1, f, 1);
      break;
    case Mode::kBicubic:  // distances 1+f, f, 1-f, 2-f
      put(i0 - 1, keys(1 + f), keys_slope(1 + f));
      put(i0, keys(f), keys_slope(f));
      put(i0 + 1, keys(1 - f), -keys_slope(1 - f));
      put(i0 + 2, keys(2 - f), -keys_slope(2 - f));
      break;
  }
  return t;
}

ImageShape image_of(const OpView& op, const std::vector<int64_t>& dims) {
  return plugin::image_shape(dims, plugin::is_nchw(op.get_string("data_format"), op.name()));
}

// x (N,H,W,C), grid (N,OH,OW,2) -> y (N,OH,OW,C): y = sum over the taps ty x tx of
// wy * wx * x[row, col] (a zero-padded tap adds nothing)
void run_grid_sample(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const ImageShape xs = image_of(op, op.input(0).dims);
  const ImageShape ys = image_of(op, op.output(0).dims);
  const Config cfg = config_of(op);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(in[0]);
    const T* grid = static_cast<const T*>(in[1]);
    T* y = static_cast<T*>(out[0]);
    for (int64_t n = 0; n < ys.n; ++n)
      for (int64_t oh = 0; oh < ys.h; ++oh)
        for (int64_t ow = 0; ow < ys.w; ++ow) {
          const T* g = grid + ((n * ys.h + oh) * ys.w + ow) * 2;
          const Taps tx = axis_taps(cfg, double(g[0]), xs.w), ty = axis_taps(cfg, double(g[1]), xs.h);
          for (int64_t c = 0; c < ys.c; ++c) {
            double v = 0;
            for (int a = 0; a < ty.count; ++a)
              for (int b = 0; b < tx.count; ++b)
                if (ty.index[a] >= 0 && tx.index[b] >= 0)
                  v += ty.w[a] * tx.w[b] * double(x[xs.index(n, ty.index[a], tx.index[b], c)]);
            y[ys.index(n, oh, ow, c)] = static_cast<T>(v);
          }
        }
  });
}

// dy (N,OH,OW,C), x, grid -> dx (x's dims): each dy times each tap's wy*wx added to the
// tap's cell, output cells in order; dgrid (N,OH,OW,2): for gx, dcoord_x times the sum over
// c and the taps of dy * wy * dwx * x (gy alike with dwy * wx); all in double
void run_grid_sample_grad(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const ImageShape ys = image_of(op, op.input(0).dims);
  const ImageShape xs = image_of(op, op.input(1).dims);
  const Config cfg = config_of(op);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* dy = static_cast<const T*>(in[0]);
    const T* x = static_cast<const T*>(in[1]);
    const T* grid = static_cast<const T*>(in[2]);
    T* dx = static_cast<T*>(out[0]);
    T* dgrid = static_cast<T*>(out[1]);
    std::vector<double> acc(static_cast<size_t>(xs.numel()), 0.0);
    for (int64_t n = 0; n < ys.n; ++n)
      for (int64_t oh = 0; oh < ys.h; ++oh)
        for (int64_t ow = 0; ow < ys.w; ++ow) {
          const int64_t p = (n * ys.h + oh) * ys.w + ow;
          const Taps tx = axis_taps(cfg, double(grid[2 * p]), xs.w);
          const Taps ty = axis_taps(cfg, double(grid[2 * p + 1]), xs.h);
          double sx = 0, sy = 0;  // d y / d (coordinate x, coordinate y), summed over c
          for (int64_t c = 0; c < ys.c; ++c) {
            const double d = double(dy[ys.index(n, oh, ow, c)]);
            for (int a = 0; a < ty.count; ++a)
              for (int b = 0; b < tx.count; ++b) {
                if (ty.index[a] < 0 || tx.index[b] < 0) continue;
                const int64_t k = xs.index(n, ty.index[a], tx.index[b], c);
                acc[size_t(k)] += d * ty.w[a] * tx.w[b];
                sx += d * ty.w[a] * tx.dw[b] * double(x[k]);
                sy += d * ty.dw[a] * tx.w[b] * double(x[k]);
              }
          }
          dgrid[2 * p] = static_cast<T>(sx * tx.dcoord);
          dgrid[2 * p + 1] = static_cast<T>(sy * ty.dcoord);
        }
    for (int64_t k = 0; k < xs.numel(); ++k) dx[k] = static_cast<T>(acc[size_t(k)]);
  });
}

// x and grid of one float dtype (the schema's type variable); f32 and f64.
void check_grid_sample(const OpView& op) {
  for (int i = 0; i < static_cast<int>(op.inputs().size()); ++i)
    expect_float(op, op.input(i), ("input " + std::to_string(i)).c_str());
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"grid_sample", run_grid_sample, check_grid_sample});
  t.push_back({"grid_sample_grad", run_grid_sample_grad, check_grid_sample});
}

}  // namespace dlrt::reference::detail
