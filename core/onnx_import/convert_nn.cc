// convert_nn.cc: ONNX's network ops -> dlrt's: Conv, Gemm, MatMul, pooling, normalization,
// LRN, softmax. ONNX images are NCHW and its filters OIHW; dlrt convolutions take HWIO
// filters, so constant filters are transposed once on the host.
//
// The importer builds plain ops and fuses nothing itself: a Conv with constant weights runs in
// NHWC (dlrt's layout, ImportOptions::prefer_nhwc) as conv2d, then bias_add; a
// BatchNormalization after it is a batch_norm, a Relu a relu, a Gemm a matmul and a bias_add.
// The compile's graph passes (core/passes) then fold the batch norm into the convolution and
// fuse the bias and the activation into conv2d_bias_act / matmul_bias_act, as they do for
// every front end. Ops that those rewrites leave unread are dropped at compile.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <numeric>

#include "onnx_import/host_fold.hpp"
#include "onnx_import/importer.hpp"
#include "onnx_import/node_context.hpp"

namespace dlrt::onnx_import {
namespace {

// The padding attributes of an ONNX Conv/Pool over an NCHW input of spatial size (H, W):
// dlrt's padding + pads. `kernel` is the dilated window size per axis.
void window_padding(NodeContext& c, const std::vector<int64_t>& in_hw,
                    const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                    std::string& padding, std::vector<int64_t>& pads) {
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  pads = c.attr_ints("pads", {0, 0, 0, 0});
  if (pads.size() != 4) c.unsupported(fmt::format("pads has {} values; 2-D windows take 4", pads.size()));
  if (auto_pad == "NOTSET") {
    padding = "EXPLICIT";
  } else if (auto_pad == "VALID") {
    padding = "VALID";
    pads = {0, 0, 0, 0};
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    padding = "EXPLICIT";
    for (int k = 0; k < 2; ++k) {
      const int64_t out = (in_hw[k] + strides[k] - 1) / strides[k];
      const int64_t total = std::max<int64_t>((out - 1) * strides[k] + kernel[k] - in_hw[k], 0);
      const int64_t small = total / 2, big = total - small;
      pads[k] = auto_pad == "SAME_UPPER" ? small : big;
      pads[k + 2] = auto_pad == "SAME_UPPER" ? big : small;
    }
  } else {
    c.invalid(fmt::format("auto_pad '{}' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", auto_pad));
  }
}

std::vector<int64_t> hw_of(NodeContext& c, const char* name, std::vector<int64_t> dflt) {
  std::vector<int64_t> v = c.attr_ints(name, dflt);
  if (v.size() != 2) c.unsupported(fmt::format("{} has {} values; dlrt has 2-D windows", name, v.size()));
  return v;
}

// (N,C,L) is run as (N,C,L,1); other ranks but 4 are refused.
dlrt::Value as_4d(NodeContext& c, size_t input, const char* what) {
  const std::vector<int64_t>& d = c.dims(input);
  if (d.size() == 4) return c.value(input);
  if (d.size() == 3) return c.reshape(c.value(input), {d[0], d[1], d[2], 1});
  c.unsupported(fmt::format("{} of a rank-{} input: dlrt has 1-D and 2-D windows", what, d.size()));
}

void convert_conv(NodeContext& c) {
  const std::vector<int64_t> xd = c.dims(0), wd = c.dims(1);
  dlrt::Value x = as_4d(c, 0, "Conv");
  const std::vector<int64_t> x4 = x.dims();
  if (wd.size() != xd.size())
    c.invalid(fmt::format("W has rank {}, X rank {}", wd.size(), xd.size()));
  std::vector<int64_t> w4 = wd;
  if (w4.size() == 3) w4.push_back(1);
  const std::vector<int64_t> strides = xd.size() == 3 ? std::vector<int64_t>{c.attr_ints("strides", {1}).at(0), 1}
                                                      : hw_of(c, "strides", {1, 1});
  const std::vector<int64_t> dil = xd.size() == 3 ? std::vector<int64_t>{c.attr_ints("dilations", {1}).at(0), 1}
                                                  : hw_of(c, "dilations", {1, 1});
  const int64_t group = c.attr_int("group", 1);
  std::string padding;
  std::vector<int64_t> pads;
  if (xd.size() == 3) {  // 1-D: pads (b, e) -> (b, 0, e, 0)
    std::vector<int64_t> p1 = c.attr_ints("pads", {0, 0});
    const std::string ap = c.attr_string("auto_pad", "NOTSET");
    if (ap != "NOTSET" && ap != "VALID") c.unsupported("1-D Conv with auto_pad " + ap);
    padding = ap == "VALID" ? "VALID" : "EXPLICIT";
    pads = ap == "VALID" ? std::vector<int64_t>{0, 0, 0, 0} : std::vector<int64_t>{p1.at(0), 0, p1.at(1), 0};
  } else {
    window_padding(c, {x4[2], x4[3]}, {(w4[2] - 1) * dil[0] + 1, (w4[3] - 1) * dil[1] + 1}, strides,
                   padding, pads);
  }
  dlrt::OpAttrs attrs = {{"strides", strides}, {"dilations", dil}, {"padding", padding},
                         {"pads", pads}, {"data_format", "NCHW"}, {"groups", group}};
  const int64_t co = w4[0];
  const HostTensor* wh = c.host(1);
  const HostTensor* bh = c.has_input(2) ? c.host(2) : nullptr;
  if (c.options().prefer_nhwc && wh != nullptr && (bh != nullptr || !c.has_input(2)) &&
      c.dtype(0) == DLRT_F32) {
    // Constant weights: HWIO on the host once. A 2-D conv runs in NHWC on the input's NHWC
    // source (a Transpose the model made, composed away) or on a transpose of it, and hands on
    // an NCHW view of its result (made only if something reads NCHW).
    dlrt::Value src = x;
    const bool nhwc = xd.size() == 4;
    if (nhwc) {
      std::optional<dlrt::Value> s = nhwc_source(c, 0);
      src = s ? *s : c.op("transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}});
      for (auto& a : attrs)
        if (std::string(a.c().name) == "data_format") a = dlrt::OpAttr("data_format", "NHWC");
    }
    HostTensor w = *wh;
    w.dims = w4;
    dlrt::Value y = c.op("conv2d", {src, c.constant(host_transpose(w, {2, 3, 1, 0}))}, attrs);
    if (bh != nullptr) {
      HostTensor b = host_cast(*bh, DLRT_F32);
      b.dims = {co};
      y = c.op("bias_add", {y, c.constant(b)}, {{"data_format", nhwc ? "NHWC" : "NCHW"}});
    }
    if (nhwc) return c.set_slot(0, nchw_view(c, y));
    const std::vector<int64_t> yd = y.dims();
    c.set(0, c.reshape(y, {yd[0], yd[1], yd[2]}));
    return;
  }
  dlrt::Value w = c.value(1);
  if (w4 != wd) w = c.reshape(w, w4);
  w = c.op("transpose", {w}, {{"perm", std::vector<int64_t>{2, 3, 1, 0}}});
  dlrt::Value y = c.op("conv2d", {x, w}, attrs);
  if (c.has_input(2)) y = c.op("bias_add", {y, c.value(2)}, {{"data_format", "NCHW"}});
  if (xd.size() == 3) {
    const std::vector<int64_t> yd = y.dims();
    y = c.reshape(y, {yd[0], yd[1], yd[2]});
  }
  c.set(0, y);
}

void convert_batch_norm(NodeContext& c) {
  if (c.attr_int("training_mode", 0) != 0 || c.wants_output(1) || c.wants_output(2))
    c.unsupported("BatchNormalization in training mode (dlrt imports models for inference)");
  const double eps = c.attr_float("epsilon", 1e-5f);
  const std::vector<int64_t> d = c.dims(0);
  if (std::optional<dlrt::Value> src = nhwc_source(c, 0)) {
    dlrt::Value y = c.op("batch_norm", {*src, c.value(1), c.value(2), c.value(3), c.value(4)},
                         {{"epsilon", eps}, {"data_format", "NHWC"}});
    return c.set_slot(0, nchw_view(c, y));
  }
  dlrt::Value x = c.value(0);
  std::string fmt = "NCHW";
  if (d.size() == 2) fmt = "NHWC";  // (N,C): the channel is last either way
  else if (d.size() == 3) x = c.reshape(x, {d[0], d[1], d[2], 1});
  else if (d.size() != 4) c.unsupported(fmt::format("BatchNormalization of rank {}", d.size()));
  dlrt::Value y = c.op("batch_norm", {x, c.value(1), c.value(2), c.value(3), c.value(4)},
                       {{"epsilon", eps}, {"data_format", fmt}});
  c.set(0, c.reshape(y, d));
}

// Relu / Sigmoid / Tanh: on the NHWC source of an NCHW view (so a conv's activation stays in
// its layout, where the graph passes fuse it), folded on the host for a constant (Relu), else
// the plain op.
void activation(ConverterTable& t, const char* onnx_op, const char* dlrt_op) {
  t.add(onnx_op, dlrt_op, [dlrt_op](NodeContext& c) {
    if (std::optional<dlrt::Value> src = nhwc_source(c, 0))
      return c.set_slot(0, nchw_view(c, c.op(dlrt_op, {*src})));
    if (c.host(0) != nullptr && std::string(dlrt_op) == "relu") {
      c.set_host(0, host_unary(*c.host(0), c.dtype(0), [](double x) { return x > 0 ? x : 0.0; }));
      return;
    }
    c.set(0, c.op(dlrt_op, {c.value(0)}));
  });
}

void convert_gemm(NodeContext& c) {
  const bool ta = c.attr_int("transA", 0) != 0, tb = c.attr_int("transB", 0) != 0;
  const double alpha = c.attr_float("alpha", 1.0f), beta = c.attr_float("beta", 1.0f);
  dlrt::Value a = c.value(0), b = c.value(1);
  if (c.rank(0) != 2 || c.rank(1) != 2) c.invalid("A and B must be matrices");
  const int64_t n = tb ? c.dims(1)[0] : c.dims(1)[1];
  const dlrt::OpAttrs attrs = {{"transpose_a", ta}, {"transpose_b", tb}};
  // C as one row (N) or (1,N), added as it is: matmul then bias_add, which the graph passes
  // fuse into matmul_bias_act (with a Relu/Sigmoid/Tanh after it).
  if (c.has_input(2) && alpha == 1.0 && beta == 1.0 && c.dtype(0) == DLRT_F32) {
    const std::vector<int64_t>& cd = c.dims(2);
    const bool row = (cd.size() == 1 && cd[0] == n) || (cd.size() == 2 && cd[0] == 1 && cd[1] == n);
    if (row)
      return c.set(0,
                   c.op("bias_add", {c.op("matmul", {a, b}, attrs), c.reshape(c.value(2), {n})}));
  }
  dlrt::Value y = c.op("matmul", {a, b}, attrs);
  if (alpha != 1.0) y = c.op("mul", {y, c.scalar(c.dtype(0), alpha)});
  if (c.has_input(2)) {
    dlrt::Value cc = c.value(2);
    if (beta != 1.0) cc = c.op("mul", {cc, c.scalar(c.dtype(0), beta)});
    if (beta != 0.0) y = c.op("add", {y, cc});
  }
  c.set(0, y);
}

void convert_matmul(NodeContext& c) {
  std::vector<int64_t> ad = c.dims(0), bd = c.dims(1);
  dlrt::Value a = c.value(0), b = c.value(1);
  const bool a1 = ad.size() == 1, b1 = bd.size() == 1;
  if (a1) a = c.reshape(a, {1, ad[0]});
  if (b1) b = c.reshape(b, {bd[0], 1});
  dlrt::Value y = (a.dims().size() == 2 && b.dims().size() == 2) ? c.op("matmul", {a, b})
                                                                 : c.op("batch_matmul", {a, b});
  std::vector<int64_t> yd = y.dims();
  if (a1) yd.erase(yd.end() - 2);
  if (b1) yd.erase(yd.end() - 1);
  c.set(0, c.reshape(y, yd));
}

// MaxPool, AveragePool, and LpPool: (sum over the window of |x|^p)^(1/p), as an average pool
// of |x|^p over zero-padded input (every pad and ceil_mode cell counted as a zero) times the
// window's size.
enum class Pool { kMax, kAvg, kLp };

void convert_pool(NodeContext& c, Pool kind) {
  const bool is_max = kind == Pool::kMax, lp = kind == Pool::kLp;
  if (is_max && c.wants_output(1)) c.unsupported("MaxPool's Indices output");
  const std::vector<int64_t> d = c.dims(0);
  dlrt::Value x = as_4d(c, 0, is_max ? "MaxPool" : lp ? "LpPool" : "AveragePool");
  // 8-bit images (MaxPool takes u8 and i8): pooled in f32, which holds every 8-bit value, and
  // cast back; a max only picks values, so the result is exact.
  const dlrt_dtype dtype = c.dtype(0);
  const bool eight_bit = is_max && (dtype == DLRT_U8 || dtype == DLRT_I8);
  if (eight_bit) x = c.op("cast", {x}, {{"dtype", DLRT_F32}});
  const int64_t p = c.attr_int("p", 2);
  if (lp) {
    if (p < 1) c.invalid(fmt::format("p = {} (ONNX wants p >= 1)", p));
    x = p == 1 ? c.op("abs", {x}) : p == 2 ? c.op("square", {x})
                                           : c.op("pow", {c.op("abs", {x}), c.scalar(x.dtype(), double(p))});
  }
  const bool one_d = d.size() == 3;
  auto two = [&](const char* name, int64_t dflt) {
    std::vector<int64_t> v = c.attr_ints(name, one_d ? std::vector<int64_t>{dflt} : std::vector<int64_t>{dflt, dflt});
    if (one_d && v.size() == 1) v.push_back(1);
    if (v.size() != 2) c.unsupported(fmt::format("{} has {} values; dlrt has 2-D windows", name, v.size()));
    return v;
  };
  std::vector<int64_t> k = c.attr_ints("kernel_shape");
  if (one_d && k.size() == 1) k.push_back(1);
  if (k.size() != 2) c.unsupported("kernel_shape must have 2 values (2-D pooling)");
  const std::vector<int64_t> s = two("strides", 1), dil = two("dilations", 1);
  if (dil[0] != 1 || dil[1] != 1) c.unsupported("dilated pooling");
  std::string padding;
  std::vector<int64_t> pads;
  const std::vector<int64_t> x4 = x.dims();
  if (one_d) {
    std::vector<int64_t> p1 = c.attr_ints("pads", {0, 0});
    const std::string ap = c.attr_string("auto_pad", "NOTSET");
    if (ap != "NOTSET" && ap != "VALID") c.unsupported("1-D pooling with auto_pad " + ap);
    padding = "EXPLICIT";
    pads = ap == "VALID" ? std::vector<int64_t>{0, 0, 0, 0} : std::vector<int64_t>{p1.at(0), 0, p1.at(1), 0};
  } else {
    window_padding(c, {x4[2], x4[3]}, k, s, padding, pads);
  }
  // ceil_mode: more windows at the end, as extra end padding (excluded from any count); a
  // window must start inside the input or its begin padding (ONNX, PyTorch).
  std::vector<int64_t> extra = {0, 0};
  if (c.attr_int("ceil_mode", 0) != 0) {
    for (int a = 0; a < 2; ++a) {
      const int64_t in = x4[2 + a] + pads[a] + pads[a + 2];
      int64_t out = (in - k[a] + s[a] - 1) / s[a] + 1;
      if ((out - 1) * s[a] >= x4[2 + a] + pads[a]) --out;
      extra[a] = std::max<int64_t>((out - 1) * s[a] + k[a] - in, 0);
    }
  }
  if (lp) {  // every cell of every window counted: zeros for the pads and ceil_mode cells
    pads[2] += extra[0];
    pads[3] += extra[1];
    extra = {0, 0};
  }
  if (!is_max && (lp || c.attr_int("count_include_pad", 0) != 0) &&
      (pads[0] | pads[1] | pads[2] | pads[3]) != 0) {
    // Counted pads: zeros padded first, then pooled without them.
    x = c.op("pad", {x}, {{"pads", std::vector<int64_t>{0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]}}});
    pads = {0, 0, 0, 0};
  }
  pads[2] += extra[0];
  pads[3] += extra[1];
  padding = "EXPLICIT";
  std::optional<dlrt::Value> src = one_d ? std::nullopt : nhwc_source(c, 0);
  if (src && !lp && x == c.value(0)) {  // not re-padded above: pool the NHWC source
    dlrt::Value y = c.op(is_max ? "max_pool2d" : "avg_pool2d", {*src},
                         {{"ksize", k}, {"strides", s}, {"padding", padding}, {"pads", pads},
                          {"data_format", "NHWC"}});
    return c.set_slot(0, nchw_view(c, y));
  }
  dlrt::Value y = c.op(is_max ? "max_pool2d" : "avg_pool2d", {x},
                       {{"ksize", k}, {"strides", s}, {"padding", padding}, {"pads", pads},
                        {"data_format", "NCHW"}});
  if (lp) {
    y = c.op("mul", {y, c.scalar(y.dtype(), double(k[0] * k[1]))});
    y = p == 1 ? y : p == 2 ? c.op("sqrt", {y}) : c.op("pow", {y, c.scalar(y.dtype(), 1.0 / double(p))});
  }
  if (one_d) {
    const std::vector<int64_t> yd = y.dims();
    y = c.reshape(y, {yd[0], yd[1], yd[2]});
  }
  if (eight_bit) y = c.op("cast", {y}, {{"dtype", dtype}});
  c.set(0, y);
}

void convert_global_pool(NodeContext& c, bool is_max) {
  const std::vector<int64_t> d = c.dims(0);
  if (std::optional<dlrt::Value> src = nhwc_source(c, 0)) {  // (N,C) either way, then (N,C,1,1)
    dlrt::Value y = c.op(is_max ? "global_max_pool2d" : "global_avg_pool2d", {*src},
                         {{"data_format", "NHWC"}, {"keepdims", false}});
    return c.set(0, c.reshape(y, {d[0], d[1], 1, 1}));
  }
  dlrt::Value x = as_4d(c, 0, is_max ? "GlobalMaxPool" : "GlobalAveragePool");
  dlrt::Value y = c.op(is_max ? "global_max_pool2d" : "global_avg_pool2d", {x},
                       {{"data_format", "NCHW"}, {"keepdims", true}});
  std::vector<int64_t> out(d.size(), 1);
  out[0] = d[0];
  out[1] = d[1];
  c.set(0, c.reshape(y, out));
}

// LRN over channels (NCHW): y = x / (bias + alpha/size * sum of x^2 over the window)^beta, the
// window [c - floor((size-1)/2), c + ceil((size-1)/2)]: squares padded along C, then `size`
// shifted slices added.
void convert_lrn(NodeContext& c) {
  const std::vector<int64_t> d = c.dims(0);
  if (d.size() < 3) c.invalid("LRN needs (N,C,...)");
  const int64_t size = c.attr_int("size", 0);
  if (size < 1) c.invalid("size must be >= 1");
  const double alpha = c.attr_float("alpha", 1e-4f), beta = c.attr_float("beta", 0.75f),
               bias = c.attr_float("bias", 1.0f);
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo, C = d[1];
  dlrt::Value x = c.value(0);
  dlrt::Value sq = c.op("square", {x});
  std::vector<int64_t> pads(2 * d.size(), 0);
  pads[1] = lo;
  pads[d.size() + 1] = hi;
  dlrt::Value padded = (lo | hi) != 0 ? c.op("pad", {sq}, {{"pads", pads}}) : sq;
  dlrt::Value sum;
  for (int64_t i = 0; i < size; ++i) {
    dlrt::Value part = c.op("slice", {padded}, {{"begin", std::vector<int64_t>{i}},
                                                {"end", std::vector<int64_t>{i + C}},
                                                {"axes", std::vector<int64_t>{1}}});
    sum = i == 0 ? part : c.op("add", {sum, part});
  }
  dlrt::Value denom = c.op("add", {c.op("mul", {sum, c.scalar(c.dtype(0), alpha / size)}),
                                   c.scalar(c.dtype(0), bias)});
  denom = c.op("pow", {denom, c.scalar(c.dtype(0), beta)});
  c.set(0, c.op("div", {x, denom}));
}

void convert_softmax(NodeContext& c, const char* dlrt_op) {
  const std::vector<int64_t> d = c.dims(0);
  const int64_t r = static_cast<int64_t>(d.size());
  if (c.opset() >= 13) {
    const int64_t a = c.axis(c.attr_int("axis", -1), r);
    c.set(0, c.op(dlrt_op, {c.value(0)}, {{"axis", a}}));
    return;
  }
  // Opsets < 13: the input is read as a matrix (prod of dims before axis, the rest).
  const int64_t a = c.axis(c.attr_int("axis", 1), r);
  int64_t rows = 1, cols = 1;
  for (int64_t k = 0; k < r; ++k) (k < a ? rows : cols) *= d[k];
  dlrt::Value x = c.reshape(c.value(0), {rows, cols});
  c.set(0, c.reshape(c.op(dlrt_op, {x}, {{"axis", int64_t{1}}}), d));
}

void convert_layer_norm(NodeContext& c) {
  const std::vector<int64_t> d = c.dims(0);
  const int64_t r = static_cast<int64_t>(d.size());
  const int64_t a = c.axis(c.attr_int("axis", -1), r);
  const double eps = c.attr_float("epsilon", 1e-5f);
  int64_t rows = 1, D = 1;
  for (int64_t k = 0; k < r; ++k) (k < a ? rows : D) *= d[k];
  dlrt::Value x = c.reshape(c.value(0), {rows, D});
  auto param = [&](size_t i, double fill) {
    if (!c.has_input(i)) return c.constant(HostTensor::from_floats(std::vector<float>(D, float(fill)), {D}));
    int64_t n = 1;
    for (int64_t e : c.dims(i)) n *= e;
    if (n != D) c.unsupported("Scale / B that broadcast over the normalized dims");
    return c.reshape(c.value(i), {D});
  };
  std::vector<dlrt::Value> out = c.ops("layer_norm", {x, param(1, 1.0), param(2, 0.0)},
                                       {{"epsilon", eps}, {"axis", int64_t{-1}}}, 3);
  c.set(0, c.reshape(out[0], d));
  std::vector<int64_t> stat(d.begin(), d.begin() + a);
  stat.resize(d.size(), 1);
  if (c.wants_output(1)) c.set(1, c.reshape(out[1], stat));
  if (c.wants_output(2)) c.set(2, c.reshape(out[2], stat));
}

// GridSample (opset 16: modes bilinear / nearest / bicubic; 20: linear / nearest / cubic and
// N-D) -> grid_sample NCHW. X (N,C,H,W) and grid (N,OH,OW,2) pass as they are: grid_sample
// takes the grid in ONNX's layout in every data_format. A grid of another float type than X
// is cast to X's (grid_sample takes one type).
void convert_grid_sample(NodeContext& c) {
  if (c.rank(0) != 4)
    c.unsupported(fmt::format("GridSample of a rank-{} input (dlrt samples 2-D images (N,C,H,W); "
                              "volumetric (N,C,D,H,W) sampling is not implemented)",
                              c.rank(0)));
  std::string mode = c.attr_string("mode", c.opset() < 20 ? "bilinear" : "linear");
  if (mode == "linear") mode = "bilinear";
  if (mode == "cubic") mode = "bicubic";
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    c.invalid(fmt::format("mode '{}' is not linear, nearest or cubic (bilinear, bicubic)", mode));
  const std::string pad = c.attr_string("padding_mode", "zeros");
  if (pad != "zeros" && pad != "border" && pad != "reflection")
    c.invalid(fmt::format("padding_mode '{}' is not zeros, border or reflection", pad));
  dlrt::Value grid = c.value(1);
  if (c.dtype(1) != c.dtype(0)) grid = c.op("cast", {grid}, {{"dtype", c.dtype(0)}});
  c.set(0, c.op("grid_sample", {c.value(0), grid},
                {{"mode", mode},
                 {"padding_mode", pad},
                 {"align_corners", c.attr_int("align_corners", 0) != 0},
                 {"data_format", "NCHW"}}));
}

}  // namespace

void add_nn_converters(ConverterTable& t) {
  t.add("Conv", "conv2d_bias_act (constant W) or transpose + conv2d + bias_add, NCHW", convert_conv);
  t.add("BatchNormalization", "folded into the conv before it, or batch_norm", convert_batch_norm);
  activation(t, "Relu", "relu");
  activation(t, "Sigmoid", "sigmoid");
  activation(t, "Tanh", "tanh");
  t.add("Gemm", "matmul_bias_act, or matmul + mul + add", convert_gemm);
  t.add("MatMul", "matmul / batch_matmul", convert_matmul);
  t.add("MaxPool", "max_pool2d NCHW", [](NodeContext& c) { convert_pool(c, Pool::kMax); });
  t.add("AveragePool", "avg_pool2d NCHW", [](NodeContext& c) { convert_pool(c, Pool::kAvg); });
  t.add("LpPool", "abs/square/pow + pad + avg_pool2d NCHW * window size + sqrt/pow",
        [](NodeContext& c) { convert_pool(c, Pool::kLp); });
  t.add("GlobalAveragePool", "global_avg_pool2d", [](NodeContext& c) { convert_global_pool(c, false); });
  t.add("GlobalMaxPool", "global_max_pool2d", [](NodeContext& c) { convert_global_pool(c, true); });
  t.add("LRN", "square, pad, slice, add, pow, div", convert_lrn);
  t.add("Softmax", "softmax", [](NodeContext& c) { convert_softmax(c, "softmax"); });
  t.add("LogSoftmax", "log_softmax", [](NodeContext& c) { convert_softmax(c, "log_softmax"); });
  t.add("LayerNormalization", "layer_norm", convert_layer_norm);
  t.add("GridSample", "grid_sample NCHW (2-D)", convert_grid_sample);
}

}  // namespace dlrt::onnx_import
