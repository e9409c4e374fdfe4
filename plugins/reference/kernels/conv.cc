// conv.cc: 2-D convolution (TensorFlow's cross-correlation) forward, fused with bias and an
// activation, and its two gradients. Filters are HWIO (KH,KW,Ci/G,Co) in both data formats,
// G the op's groups: output channel o belongs to group o / (Co/G) and reads input channels
// [group*Ci/G, (group+1)*Ci/G) (TF's grouped conv2d; depthwise is G = Ci). Images are NHWC
// (N,H,W,C) or NCHW (N,C,H,W). Each output element is one double-accumulated sum, written in
// the order the formula reads.
#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

using plugin::ImageShape;
using plugin::Window1D;

// Everything a conv needs to know about its shapes, read from the descriptor the core built:
// x's and y's dims (as stored), w's dims, the groups and the explicit pads. Nothing is
// derived: the schema inferred y, checked the groups and normalised the padding
// (docs/design.md, "What a plugin may trust").
struct ConvGeom {
  ImageShape x, y;
  int64_t kh = 0, kw = 0, ci = 0, co = 0;
  int64_t cig = 0, cog = 0;  // channels per group: Ci/G (w's dim 2), Co/G
  Window1D wh, ww;
  // w[i, j, cg, o]: cg is the channel within o's group.
  int64_t w_index(int64_t i, int64_t j, int64_t cg, int64_t o) const {
    return ((i * kw + j) * cig + cg) * co + o;
  }
};

ConvGeom conv_geom(const OpView& op, const std::vector<int64_t>& x_dims,
                   const std::vector<int64_t>& w_dims, const std::vector<int64_t>& y_dims) {
  bool nchw = op.get_string("data_format") == "NCHW";
  const auto& strides = op.get_ints("strides", 2);
  const auto& dil = op.get_ints("dilations", 2);
  ConvGeom g;
  g.x = plugin::image_shape(x_dims, nchw);
  g.y = plugin::image_shape(y_dims, nchw);
  g.kh = w_dims[0], g.kw = w_dims[1], g.cig = w_dims[2], g.co = w_dims[3];
  g.ci = g.x.c, g.cog = g.co / plugin::conv_groups(op);
  g.wh = plugin::window_of(op, 0, g.x.h, g.kh, strides[0], dil[0], g.y.h);
  g.ww = plugin::window_of(op, 1, g.x.w, g.kw, strides[1], dil[1], g.y.w);
  return g;
}

// ---- forward -----------------------------------------------------------------------------

// x: (N,H,W,Ci) [or NCHW], w: (KH,KW,Ci/G,Co), b: (Co) or null -> y: (N,OH,OW,Co) [or NCHW]
// y[n,oh,ow,o] = sum over (i,j,cg) of x[n, ih, iw, c0 + cg] * w[i,j,cg,o], c0 = o/(Co/G)*Ci/G
template <typename T>
void conv2d_forward(const ConvGeom& g, const T* x, const T* w, const T* b, Act act, T* y) {
  for (int64_t n = 0; n < g.x.n; ++n)
    for (int64_t oh = 0; oh < g.y.h; ++oh)
      for (int64_t ow = 0; ow < g.y.w; ++ow)
        for (int64_t o = 0; o < g.co; ++o) {
          const int64_t c0 = o / g.cog * g.cig;  // o's group's first input channel
          double acc = 0.0;
          for (int64_t i = 0; i < g.kh; ++i) {
            int64_t ih = g.wh.input_at(oh, i);
            if (ih < 0 || ih >= g.x.h) continue;
            for (int64_t j = 0; j < g.kw; ++j) {
              int64_t iw = g.ww.input_at(ow, j);
              if (iw < 0 || iw >= g.x.w) continue;
              for (int64_t cg = 0; cg < g.cig; ++cg)
                acc += double(x[g.x.index(n, ih, iw, c0 + cg)]) * double(w[g.w_index(i, j, cg, o)]);
            }
          }
          if (b != nullptr) acc += double(b[o]);
          y[g.y.index(n, oh, ow, o)] = static_cast<T>(apply(act, acc));
        }
}

// What the oracle runs: f32 and f64, the activations of the fused form, explicit pads.
void check_conv2d(const OpView& op) {
  expect_float(op, op.input(0), "x");
  if (op.name() == "conv2d_bias_act") parse_activation(op);
  conv_geom(op, op.input(0).dims, op.input(1).dims, op.output(0).dims);
}

void run_conv2d(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  ConvGeom g = conv_geom(op, op.input(0).dims, op.input(1).dims, op.output(0).dims);
  bool fused = op.name() == "conv2d_bias_act";
  Act act = fused ? parse_activation(op) : Act::kNone;
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    conv2d_forward<T>(g, static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                      fused ? static_cast<const T*>(in[2]) : nullptr, act, static_cast<T*>(out[0]));
  });
}

// ---- gradient wrt the input --------------------------------------------------------------

// dy: (N,OH,OW,Co), w: (KH,KW,Ci/G,Co) -> dx: (N,H,W,Ci) = input_shape
// dx[n,ih,iw,c] = sum over (oh,ow,i,j) with ih = oh*sh - pad_top + i*dh (same for w) and over
//                 the outputs o of c's group of dy[n,oh,ow,o] * w[i,j,c % (Ci/G),o]; scattered
//                 into a double buffer, then rounded. conv2d_backward_data_add starts the
//                 buffer from its addend (one rounding of the whole sum).
template <typename T>
void conv2d_backward_data(const ConvGeom& g, const T* dy, const T* w, T* dx,
                          const T* addend = nullptr) {
  std::vector<double> acc(static_cast<size_t>(g.x.numel()), 0.0);
  if (addend != nullptr)
    for (size_t k = 0; k < acc.size(); ++k) acc[k] = double(addend[k]);
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
              const int64_t o0 = c / g.cig * g.cog, cg = c % g.cig;  // c's group's outputs
              double s = 0.0;
              for (int64_t o = o0; o < o0 + g.cog; ++o)
                s += double(dy[g.y.index(n, oh, ow, o)]) * double(w[g.w_index(i, j, cg, o)]);
              acc[g.x.index(n, ih, iw, c)] += s;
            }
          }
        }
  for (size_t k = 0; k < acc.size(); ++k) dx[k] = static_cast<T>(acc[k]);
}

void check_conv2d_backward_data(const OpView& op) {
  expect_float(op, op.input(0), "dy");
  conv_geom(op, op.output(0).dims, op.input(1).dims, op.input(0).dims);
}

// conv2d_backward_data, conv2d_backward_data_add (its addend is input 2) and conv2d_transpose.
void run_conv2d_backward_data(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  ConvGeom g = conv_geom(op, op.output(0).dims, op.input(1).dims, op.input(0).dims);
  const bool add = op.name() == "conv2d_backward_data_add";
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    conv2d_backward_data<T>(g, static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                            static_cast<T*>(out[0]), add ? static_cast<const T*>(in[2]) : nullptr);
  });
}

// ---- gradient wrt the filter -------------------------------------------------------------

// x: (N,H,W,Ci), dy: (N,OH,OW,Co) -> dw: (KH,KW,Ci/G,Co) = filter_shape
// dw[i,j,cg,o] = sum over (n,oh,ow) of x[n, oh*sh-pad_top+i*dh, ow*sw-pad_left+j*dw, c] *
//                dy[n,oh,ow,o], c = o/(Co/G)*Ci/G + cg (channel cg of o's group)
template <typename T>
void conv2d_backward_filter(const ConvGeom& g, const T* x, const T* dy, T* dw) {
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j)
      for (int64_t cg = 0; cg < g.cig; ++cg)
        for (int64_t o = 0; o < g.co; ++o) {
          const int64_t c = o / g.cog * g.cig + cg;
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
          dw[g.w_index(i, j, cg, o)] = static_cast<T>(acc);
        }
}

void check_conv2d_backward_filter(const OpView& op) {
  expect_float(op, op.input(0), "x");
  conv_geom(op, op.input(0).dims, op.output(0).dims, op.input(1).dims);
}

void run_conv2d_backward_filter(const OpView& op, const void* const* in, void* const* out,
                                uint64_t) {
  ConvGeom g = conv_geom(op, op.input(0).dims, op.output(0).dims, op.input(1).dims);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    conv2d_backward_filter<T>(g, static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                              static_cast<T*>(out[0]));
  });
}

// ---- conv2d_backward: both gradients -----------------------------------------------------

// dy, x, w -> dx, dw: the two functions above, each as its own op computes it.
void check_conv2d_backward(const OpView& op) {
  expect_float(op, op.input(0), "dy");
  conv_geom(op, op.input(1).dims, op.input(2).dims, op.input(0).dims);
}

void run_conv2d_backward(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  ConvGeom g = conv_geom(op, op.input(1).dims, op.input(2).dims, op.input(0).dims);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T *dy = static_cast<const T*>(in[0]), *x = static_cast<const T*>(in[1]);
    conv2d_backward_data<T>(g, dy, static_cast<const T*>(in[2]), static_cast<T*>(out[0]));
    conv2d_backward_filter<T>(g, x, dy, static_cast<T*>(out[1]));
  });
}

// ---- conv2d_transpose --------------------------------------------------------------------

// x: (N,H,W,Ci), w: (KH,KW,Co,Ci) -> y: (N,OH,OW,Co). It is conv2d_backward_data with dy = x
// and dx = y: w is the HWIO filter (Ci' = Co, Co' = Ci) of the convolution that maps y back
// to x, and "pads" are that convolution's (core/ops/infer_conv_transpose.cc), so it runs
// run_conv2d_backward_data as it is.
void check_conv2d_transpose(const OpView& op) {
  expect_float(op, op.input(0), "x");
  conv_geom(op, op.output(0).dims, op.input(1).dims, op.input(0).dims);
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"conv2d", run_conv2d, check_conv2d});
  t.push_back({"conv2d_bias_act", run_conv2d, check_conv2d});
  t.push_back({"conv2d_backward_data", run_conv2d_backward_data, check_conv2d_backward_data});
  t.push_back({"conv2d_backward_data_add", run_conv2d_backward_data, check_conv2d_backward_data});
  t.push_back({"conv2d_backward_filter", run_conv2d_backward_filter, check_conv2d_backward_filter});
  t.push_back({"conv2d_backward", run_conv2d_backward, check_conv2d_backward});
  t.push_back({"conv2d_transpose", run_conv2d_backward_data, check_conv2d_transpose});
}

}  // namespace dlrt::reference::detail
