// resize.cc: resize (nearest or bilinear, ONNX Resize's coordinate rules) and resize_grad,
// NHWC or NCHW; the spec is core/ops/infer_resize.cc's header and docs/ops.md ("Decisions").
//
// Each axis maps output index o to a source coordinate, one division of two integers:
//   half_pixel     ((2o+1)*in - out) / (2*out)
//   align_corners  o*(in-1) / (out-1), 0 when out = 1
//   asymmetric     o*in / out
// nearest reads input index nearest_mode(coordinate), clamped to [0, in-1]; bilinear clamps
// the coordinate to [0, in-1] and mixes floor(c) and floor(c)+1 (or the last index) with
// weights 1-f, f. resize_grad adds dy times each weight back to the input cells it came from,
// output cells in order, in double: the transpose of the forward map.
#include <cmath>
#include <string>
#include <vector>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

using plugin::ImageShape;

// The two source indices of one output index along one axis and their weights (nearest:
// both the same index, weights 1 and 0).
struct Tap {
  int64_t i0, i1;
  double w0, w1;
};

double source_coordinate(const std::string& coord, int64_t o, int64_t in, int64_t out) {
  if (coord == "half_pixel") return double((2 * o + 1) * in - out) / double(2 * out);
  if (coord == "align_corners") return out == 1 ? 0.0 : double(o * (in - 1)) / double(out - 1);
  return double(o * in) / double(out);  // asymmetric
}

int64_t round_nearest(const std::string& mode, double c) {
  if (mode == "floor") return static_cast<int64_t>(std::floor(c));
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(c));
  const double f = std::floor(c);
  if (c - f == 0.5) return static_cast<int64_t>(mode == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::floor(c + 0.5));
}

// The taps of every output index along one axis.
std::vector<Tap> axis_taps(const OpView& op, int64_t in, int64_t out) {
  const std::string& coord = op.get_string("coordinate_transformation");
  const bool nearest = op.get_string("mode") == "nearest";
  const std::string& nearest_mode = op.get_string("nearest_mode");
  std::vector<Tap> taps(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    double c = source_coordinate(coord, o, in, out);
    if (nearest) {
      int64_t i = round_nearest(nearest_mode, c);
      i = i < 0 ? 0 : i > in - 1 ? in - 1 : i;
      taps[o] = {i, i, 1.0, 0.0};
      continue;
    }
    c = c < 0 ? 0 : c > double(in - 1) ? double(in - 1) : c;
    const int64_t i0 = static_cast<int64_t>(std::floor(c));
    const int64_t i1 = i0 + 1 < in ? i0 + 1 : in - 1;
    const double f = c - double(i0);
    taps[o] = {i0, i1, 1.0 - f, f};
  }
  return taps;
}

ImageShape image_of(const OpView& op, const std::vector<int64_t>& dims) {
  return plugin::image_shape(dims, plugin::is_nchw(op.get_string("data_format"), op.name()));
}

// x (N,H,W,C) -> y (N,OH,OW,C): y = sum of the four weighted taps (nearest: one)
void run_resize(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const ImageShape xs = image_of(op, op.input(0).dims);
  const ImageShape ys = image_of(op, op.output(0).dims);
  const std::vector<Tap> th = axis_taps(op, xs.h, ys.h), tw = axis_taps(op, xs.w, ys.w);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(in[0]);
    T* y = static_cast<T*>(out[0]);
    for (int64_t n = 0; n < ys.n; ++n)
      for (int64_t oh = 0; oh < ys.h; ++oh)
        for (int64_t ow = 0; ow < ys.w; ++ow)
          for (int64_t c = 0; c < ys.c; ++c) {
            const Tap& a = th[oh];
            const Tap& b = tw[ow];
            const double v = a.w0 * (b.w0 * double(x[xs.index(n, a.i0, b.i0, c)]) +
                                     b.w1 * double(x[xs.index(n, a.i0, b.i1, c)])) +
                             a.w1 * (b.w0 * double(x[xs.index(n, a.i1, b.i0, c)]) +
                                     b.w1 * double(x[xs.index(n, a.i1, b.i1, c)]));
            y[ys.index(n, oh, ow, c)] = static_cast<T>(v);
          }
  });
}

// dy (N,OH,OW,C) -> dx (input_shape): each dy cell's value times each tap's weight added
// to that tap's input cell, output cells in order, in double
void run_resize_grad(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const ImageShape ys = image_of(op, op.input(0).dims);
  const ImageShape xs = image_of(op, op.output(0).dims);
  const std::vector<Tap> th = axis_taps(op, xs.h, ys.h), tw = axis_taps(op, xs.w, ys.w);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* dy = static_cast<const T*>(in[0]);
    T* dx = static_cast<T*>(out[0]);
    std::vector<double> acc(static_cast<size_t>(xs.numel()), 0.0);
    for (int64_t n = 0; n < ys.n; ++n)
      for (int64_t oh = 0; oh < ys.h; ++oh)
        for (int64_t ow = 0; ow < ys.w; ++ow)
          for (int64_t c = 0; c < ys.c; ++c) {
            const double g = double(dy[ys.index(n, oh, ow, c)]);
            const Tap& a = th[oh];
            const Tap& b = tw[ow];
            acc[xs.index(n, a.i0, b.i0, c)] += g * a.w0 * b.w0;
            acc[xs.index(n, a.i0, b.i1, c)] += g * a.w0 * b.w1;
            acc[xs.index(n, a.i1, b.i0, c)] += g * a.w1 * b.w0;
            acc[xs.index(n, a.i1, b.i1, c)] += g * a.w1 * b.w1;
          }
    for (int64_t k = 0; k < xs.numel(); ++k) dx[k] = static_cast<T>(acc[k]);
  });
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"resize", run_resize, check_float});
  t.push_back({"resize_grad", run_resize_grad, check_float});
}

}  // namespace dlrt::reference::detail
