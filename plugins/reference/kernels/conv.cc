// conv.cc: 2-D convolution (TensorFlow's cross-correlation) forward, fused with bias and an
// activation, and its two gradients. Filters are HWIO (KH,KW,Ci,Co) in both data formats;
// images are NHWC (N,H,W,C) or NCHW (N,C,H,W). Each output element is one double-accumulated
// sum, written in the order the formula reads.
#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

using plugin::ImageShape;
using plugin::Window1D;

// Everything a conv needs to know about its shapes, from x's dims (as stored) and w's dims.
struct ConvGeom {
  ImageShape x, y;
  int64_t kh = 0, kw = 0, ci = 0, co = 0;
  Window1D wh, ww;
  int64_t w_index(int64_t i, int64_t j, int64_t c, int64_t o) const {
    return ((i * kw + j) * ci + c) * co + o;
  }
};

ConvGeom conv_geom(const OpView& op, const std::vector<int64_t>& x_dims,
                   const std::vector<int64_t>& w_dims) {
  bool nchw = plugin::is_nchw(op.get_string("data_format"), op.name());
  const auto& strides = op.get_ints("strides", 2);
  const auto& dil = op.get_ints("dilations", 2);
  ConvGeom g;
  g.x = plugin::image_shape(x_dims, nchw, op.name(), "the image");
  if (w_dims.size() != 4)
    op.invalid("the filter must be (KH,KW,Ci,Co), has dims " + plugin::dims_string(w_dims));
  g.kh = w_dims[0], g.kw = w_dims[1], g.ci = w_dims[2], g.co = w_dims[3];
  if (g.ci != g.x.c)
    op.invalid("the filter has " + std::to_string(g.ci) + " input channels, the image " +
               std::to_string(g.x.c));
  if (g.co < 1 || g.x.n < 1) op.invalid("empty batch or no output channels");
  g.wh = plugin::window_of(op, 0, g.x.h, g.kh, strides[0], dil[0]);
  g.ww = plugin::window_of(op, 1, g.x.w, g.kw, strides[1], dil[1]);
  g.y = plugin::image_shape(g.x.n, g.wh.out, g.ww.out, g.co, nchw);
  return g;
}

// ---- forward -----------------------------------------------------------------------------

// x: (N,H,W,Ci) [or NCHW], w: (KH,KW,Ci,Co), b: (Co) or null -> y: (N,OH,OW,Co) [or NCHW]
template <typename T>
void conv2d_forward(const ConvGeom& g, const T* x, const T* w, const T* b, Act act, T* y) {
  for (int64_t n = 0; n < g.x.n; ++n)
    for (int64_t oh = 0; oh < g.y.h; ++oh)
      for (int64_t ow = 0; ow < g.y.w; ++ow)
        for (int64_t o = 0; o < g.co; ++o) {
          double acc = 0.0;
          for (int64_t i = 0; i < g.kh; ++i) {
            int64_t ih = g.wh.input_at(oh, i);
            if (ih < 0 || ih >= g.x.h) continue;
            for (int64_t j = 0; j < g.kw; ++j) {
              int64_t iw = g.ww.input_at(ow, j);
              if (iw < 0 || iw >= g.x.w) continue;
              for (int64_t c = 0; c < g.ci; ++c)
                acc += double(x[g.x.index(n, ih, iw, c)]) * double(w[g.w_index(i, j, c, o)]);
            }
          }
          if (b != nullptr) acc += double(b[o]);
          y[g.y.index(n, oh, ow, o)] = static_cast<T>(apply(act, acc));
        }
}

void check_conv2d(const OpView& op) {
  bool fused = op.name() == "conv2d_bias_act";
  expect_arity(op, fused ? 3 : 2, 1);
  const TensorView &x = op.input(0), &w = op.input(1), &y = op.output(0);
  expect_float(op, x, "x");
  expect_same_dtype(op, x, "x", w, "w");
  expect_same_dtype(op, x, "x", y, "y");
  ConvGeom g = conv_geom(op, x.dims, w.dims);
  expect_dims(op, y, g.y.dims(), "y");
  if (fused) {
    expect_same_dtype(op, x, "x", op.input(2), "b");
    expect_dims(op, op.input(2), {g.co}, "b");
    parse_activation(op);
  }
}

void run_conv2d(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  ConvGeom g = conv_geom(op, op.input(0).dims, op.input(1).dims);
  bool fused = op.name() == "conv2d_bias_act";
  Act act = fused ? parse_activation(op) : Act::kNone;
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    conv2d_forward<T>(g, static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                      fused ? static_cast<const T*>(in[2]) : nullptr, act, static_cast<T*>(out[0]));
  });
}

// ---- gradient wrt the input --------------------------------------------------------------

// dy: (N,OH,OW,Co), w: (KH,KW,Ci,Co) -> dx: (N,H,W,Ci) = input_shape
// dx[n,ih,iw,c] = sum over (oh,ow,i,j,o) with ih = oh*sh - pad_top + i*dh (same for w) of
//                 dy[n,oh,ow,o] * w[i,j,c,o]; scattered into a double buffer, then rounded.
template <typename T>
void conv2d_backward_data(const ConvGeom& g, const T* dy, const T* w, T* dx) {
  std::vector<double> acc(static_cast<size_t>(g.x.numel()), 0.0);
  for (int64_t n = 0; n < g.x.n; ++n)
    for (int64_t oh = 0; oh < g.y.h; ++oh)
      for (int64_t ow = 0; ow < g.y.w; ++ow)
        for (int64_t i = 0; i < g.kh; ++i) {
          int64_t ih = g.wh.input_at(oh, i);
          if (ih < 0 || ih >= g.x.h) continue;
          for (int64_t j = 0; j < g.kw; ++j) {
            int64_t iw = g.ww.input_at(ow, j);
            if (iw < 0 || iw >= g.x.w) continue;
            for (int64_t c = 0; c < g.ci; ++c) {
              double s = 0.0;
              for (int64_t o = 0; o < g.co; ++o)
                s += double(dy[g.y.index(n, oh, ow, o)]) * double(w[g.w_index(i, j, c, o)]);
              acc[g.x.index(n, ih, iw, c)] += s;
            }
          }
        }
  for (size_t k = 0; k < acc.size(); ++k) dx[k] = static_cast<T>(acc[k]);
}

void check_conv2d_backward_data(const OpView& op) {
  expect_arity(op, 2, 1);
  const TensorView &dy = op.input(0), &w = op.input(1), &dx = op.output(0);
  expect_float(op, dy, "dy");
  expect_same_dtype(op, dy, "dy", w, "w");
  expect_same_dtype(op, dy, "dy", dx, "dx");
  const auto& input_shape = op.get_ints("input_shape", 4);
  expect_dims(op, dx, input_shape, "dx (input_shape)");
  ConvGeom g = conv_geom(op, input_shape, w.dims);
  expect_dims(op, dy, g.y.dims(), "dy");
}

void run_conv2d_backward_data(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  ConvGeom g = conv_geom(op, op.get_ints("input_shape", 4), op.input(1).dims);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    conv2d_backward_data<T>(g, static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                            static_cast<T*>(out[0]));
  });
}

// ---- gradient wrt the filter -------------------------------------------------------------

// x: (N,H,W,Ci), dy: (N,OH,OW,Co) -> dw: (KH,KW,Ci,Co) = filter_shape
// dw[i,j,c,o] = sum over (n,oh,ow) of x[n, oh*sh-pad_top+i*dh, ow*sw-pad_left+j*dw, c] * dy[n,oh,ow,o]
template <typename T>
void conv2d_backward_filter(const ConvGeom& g, const T* x, const T* dy, T* dw) {
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j)
      for (int64_t c = 0; c < g.ci; ++c)
        for (int64_t o = 0; o < g.co; ++o) {
          double acc = 0.0;
          for (int64_t n = 0; n < g.x.n; ++n)
            for (int64_t oh = 0; oh < g.y.h; ++oh) {
              int64_t ih = g.wh.input_at(oh, i);
              if (ih < 0 || ih >= g.x.h) continue;
              for (int64_t ow = 0; ow < g.y.w; ++ow) {
                int64_t iw = g.ww.input_at(ow, j);
                if (iw < 0 || iw >= g.x.w) continue;
                acc += double(x[g.x.index(n, ih, iw, c)]) * double(dy[g.y.index(n, oh, ow, o)]);
              }
            }
          dw[g.w_index(i, j, c, o)] = static_cast<T>(acc);
        }
}

void check_conv2d_backward_filter(const OpView& op) {
  expect_arity(op, 2, 1);
  const TensorView &x = op.input(0), &dy = op.input(1), &dw = op.output(0);
  expect_float(op, x, "x");
  expect_same_dtype(op, x, "x", dy, "dy");
  expect_same_dtype(op, x, "x", dw, "dw");
  const auto& filter_shape = op.get_ints("filter_shape", 4);
  expect_dims(op, dw, filter_shape, "dw (filter_shape)");
  ConvGeom g = conv_geom(op, x.dims, filter_shape);
  expect_dims(op, dy, g.y.dims(), "dy");
}

void run_conv2d_backward_filter(const OpView& op, const void* const* in, void* const* out,
                                uint64_t) {
  ConvGeom g = conv_geom(op, op.input(0).dims, op.get_ints("filter_shape", 4));
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    conv2d_backward_filter<T>(g, static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                              static_cast<T*>(out[0]));
  });
}

}  // namespace

void add_conv_kernels(KernelTable& t) {
  t.push_back({"conv2d", run_conv2d, check_conv2d});
  t.push_back({"conv2d_bias_act", run_conv2d, check_conv2d});
  t.push_back({"conv2d_backward_data", run_conv2d_backward_data, check_conv2d_backward_data});
  t.push_back({"conv2d_backward_filter", run_conv2d_backward_filter, check_conv2d_backward_filter});
}

}  // namespace dlrt::reference::detail
