// pool.cc: 2-D max and average pooling over H and W, forward and backward, NHWC or NCHW.
// Max pooling treats padded cells as -inf and sends the gradient to the first maximum of each
// window (scanning rows, then columns); average pooling excludes padded cells from the count,
// as TensorFlow does.
#include <limits>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

using plugin::ImageShape;
using plugin::Window1D;

struct PoolGeom {
  ImageShape x, y;
  Window1D wh, ww;
};

// From x's and y's dims as stored (y: the output, or dy of the backward ops) and the explicit
// pads the core gave; nothing derived (docs/design.md, "What a plugin may trust").
PoolGeom pool_geom(const OpView& op, const std::vector<int64_t>& x_dims,
                   const std::vector<int64_t>& y_dims) {
  bool nchw = op.get_string("data_format") == "NCHW";
  const auto& ksize = op.get_ints("ksize", 2);
  const auto& strides = op.get_ints("strides", 2);
  PoolGeom g;
  g.x = plugin::image_shape(x_dims, nchw);
  g.y = plugin::image_shape(y_dims, nchw);
  g.wh = plugin::window_of(op, 0, g.x.h, ksize[0], strides[0], 1, g.y.h);
  g.ww = plugin::window_of(op, 1, g.x.w, ksize[1], strides[1], 1, g.y.w);
  return g;
}

// Calls fn(x_index) for every in-bounds cell of the window of output (oh, ow), rows first.
template <typename Fn>
void for_window(const PoolGeom& g, int64_t n, int64_t oh, int64_t ow, int64_t c, Fn&& fn) {
  for (int64_t i = 0; i < g.wh.k; ++i) {
    int64_t ih = g.wh.input_at(oh, i);
    if (ih < 0 || ih >= g.x.h) continue;
    for (int64_t j = 0; j < g.ww.k; ++j) {
      int64_t iw = g.ww.input_at(ow, j);
      if (iw < 0 || iw >= g.x.w) continue;
      fn(g.x.index(n, ih, iw, c));
    }
  }
}

template <typename Fn>
void for_outputs(const PoolGeom& g, Fn&& fn) {
  for (int64_t n = 0; n < g.y.n; ++n)
    for (int64_t oh = 0; oh < g.y.h; ++oh)
      for (int64_t ow = 0; ow < g.y.w; ++ow)
        for (int64_t c = 0; c < g.y.c; ++c) fn(n, oh, ow, c);
}

// Index of the first maximum of a window (-1 only if the window has no in-bounds cell, which
// SAME/VALID never produce). A NaN counts as larger than everything, as in NumPy.
template <typename T>
int64_t window_argmax(const PoolGeom& g, const T* x, int64_t n, int64_t oh, int64_t ow, int64_t c) {
  int64_t best = -1;
  double best_v = -std::numeric_limits<double>::infinity();
  for_window(g, n, oh, ow, c, [&](int64_t k) {
    double v = double(x[k]);
    if (best >= 0 && std::isnan(best_v)) return;
    if (best < 0 || v > best_v || std::isnan(v)) best = k, best_v = v;
  });
  return best;
}

// x: (N,H,W,C) -> y: (N,OH,OW,C)
template <typename T>
void max_pool(const PoolGeom& g, const T* x, T* y) {
  for_outputs(g, [&](int64_t n, int64_t oh, int64_t ow, int64_t c) {
    int64_t k = window_argmax(g, x, n, oh, ow, c);
    y[g.y.index(n, oh, ow, c)] = k < 0 ? -std::numeric_limits<T>::infinity() : x[k];
  });
}

// x: (N,H,W,C) -> y: (N,OH,OW,C); mean over the in-bounds cells of each window
template <typename T>
void avg_pool(const PoolGeom& g, const T* x, T* y) {
  for_outputs(g, [&](int64_t n, int64_t oh, int64_t ow, int64_t c) {
    double sum = 0.0;
    int64_t count = 0;
    for_window(g, n, oh, ow, c, [&](int64_t k) { sum += double(x[k]), ++count; });
    y[g.y.index(n, oh, ow, c)] = static_cast<T>(sum / double(count));
  });
}

// x: (N,H,W,C), dy: (N,OH,OW,C) -> dx: (N,H,W,C); dy goes to the first max of its window
template <typename T>
void max_pool_backward(const PoolGeom& g, const T* x, const T* dy, T* dx) {
  std::vector<double> acc(static_cast<size_t>(g.x.numel()), 0.0);
  for_outputs(g, [&](int64_t n, int64_t oh, int64_t ow, int64_t c) {
    int64_t k = window_argmax(g, x, n, oh, ow, c);
    if (k >= 0) acc[k] += double(dy[g.y.index(n, oh, ow, c)]);
  });
  for (size_t k = 0; k < acc.size(); ++k) dx[k] = static_cast<T>(acc[k]);
}

// dy: (N,OH,OW,C) -> dx: (N,H,W,C) = input_shape; dy/count to each in-bounds cell of its window
template <typename T>
void avg_pool_backward(const PoolGeom& g, const T* dy, T* dx) {
  std::vector<double> acc(static_cast<size_t>(g.x.numel()), 0.0);
  for_outputs(g, [&](int64_t n, int64_t oh, int64_t ow, int64_t c) {
    int64_t count = 0;
    for_window(g, n, oh, ow, c, [&](int64_t) { ++count; });
    double share = double(dy[g.y.index(n, oh, ow, c)]) / double(count);
    for_window(g, n, oh, ow, c, [&](int64_t k) { acc[k] += share; });
  });
  for (size_t k = 0; k < acc.size(); ++k) dx[k] = static_cast<T>(acc[k]);
}

void check_pool(const OpView& op) {
  expect_float(op, op.input(0), "x");
  pool_geom(op, op.input(0).dims, op.output(0).dims);
}

void run_pool(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  PoolGeom g = pool_geom(op, op.input(0).dims, op.output(0).dims);
  bool is_max = op.name() == "max_pool2d";
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    if (is_max) max_pool<T>(g, static_cast<const T*>(in[0]), static_cast<T*>(out[0]));
    else avg_pool<T>(g, static_cast<const T*>(in[0]), static_cast<T*>(out[0]));
  });
}

void check_max_pool_backward(const OpView& op) {
  expect_float(op, op.input(0), "x");
  pool_geom(op, op.input(0).dims, op.input(1).dims);
}

void run_max_pool_backward(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  PoolGeom g = pool_geom(op, op.input(0).dims, op.input(1).dims);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    max_pool_backward<T>(g, static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                         static_cast<T*>(out[0]));
  });
}

// max_pool2d_backward_relu_bias: dz = max_pool2d_backward(x, dy) where x > 0, else 0 (the
// relu_grad of a ReLU whose output x is); db = the per-channel sum of dz (bias_add_grad).
void run_max_pool_backward_relu_bias(const OpView& op, const void* const* in, void* const* out,
                                     uint64_t) {
  PoolGeom g = pool_geom(op, op.input(0).dims, op.input(1).dims);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(in[0]);
    T *dz = static_cast<T*>(out[0]), *db = static_cast<T*>(out[1]);
    max_pool_backward<T>(g, x, static_cast<const T*>(in[1]), dz);
    std::vector<double> sum(static_cast<size_t>(g.x.c), 0.0);
    for (int64_t n = 0; n < g.x.n; ++n)
      for (int64_t h = 0; h < g.x.h; ++h)
        for (int64_t w = 0; w < g.x.w; ++w)
          for (int64_t c = 0; c < g.x.c; ++c) {
            const int64_t k = g.x.index(n, h, w, c);
            if (!(x[k] > T(0))) dz[k] = T(0);
            sum[static_cast<size_t>(c)] += double(dz[k]);
          }
    for (int64_t c = 0; c < g.x.c; ++c) db[c] = static_cast<T>(sum[static_cast<size_t>(c)]);
  });
}

void check_avg_pool_backward(const OpView& op) {
  expect_float(op, op.input(0), "dy");
  pool_geom(op, op.output(0).dims, op.input(0).dims);
}

void run_avg_pool_backward(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  PoolGeom g = pool_geom(op, op.output(0).dims, op.input(0).dims);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    avg_pool_backward<T>(g, static_cast<const T*>(in[0]), static_cast<T*>(out[0]));
  });
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"max_pool2d", run_pool, check_pool});
  t.push_back({"avg_pool2d", run_pool, check_pool});
  t.push_back({"max_pool2d_backward", run_max_pool_backward, check_max_pool_backward});
  t.push_back({"max_pool2d_backward_relu_bias", run_max_pool_backward_relu_bias,
               check_max_pool_backward});
  t.push_back({"avg_pool2d_backward", run_avg_pool_backward, check_avg_pool_backward});
}

}  // namespace dlrt::reference::detail
