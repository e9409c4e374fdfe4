// convert_quantize.cc: ONNX's linear quantisation, as float arithmetic on dlrt's ops:
//
//   DequantizeLinear  y = (float(x) - float(zero_point)) * scale
//   QuantizeLinear    y = saturate(round_half_even(x / scale) + zero_point)
//   DynamicQuantizeLinear (u8): lo = min(0, min x), hi = max(0, max x),
//                     scale = (hi - lo) / 255 (1/255 when hi == lo),
//                     zero_point = round(clip(-lo / scale, 0, 255)), y = QuantizeLinear(x)
//
// scale and zero_point are a scalar (per tensor), a vector along `axis` (per axis), or, with
// block_size > 0, x's rank with x's dims but `axis` divided into blocks (blocked): each is
// reshaped to broadcast against x, and in the blocked form x's axis is split into
// (blocks, block_size) for the arithmetic and joined again after it. u8, i8, u16, i16 and i32
// quantise; the float8/int4 types have no dlrt dtype, so those models are refused at load
// naming the tensor.
#include <fmt/format.h>

#include <cmath>

#include "onnx_import/node_context.hpp"
#include "onnx_import/tensor_proto.hpp"

namespace dlrt::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

// The saturation range of a quantised dtype.
bool quant_range(dlrt_dtype d, double* lo, double* hi) {
  switch (d) {
    case DLRT_U8:
      *lo = 0, *hi = 255;
      return true;
    case DLRT_I8:
      *lo = -128, *hi = 127;
      return true;
    case DLRT_U16:
      *lo = 0, *hi = 65535;
      return true;
    case DLRT_I16:
      *lo = -32768, *hi = 32767;
      return true;
    case DLRT_I32:
      *lo = -2147483648.0, *hi = 2147483647.0;
      return true;
    default:
      return false;
  }
}

// How x and its scale/zero point line up: `x_dims` are the dims the arithmetic runs on (x's,
// or with the block axis split) and `param_dims` the dims scale/zero point are reshaped to.
struct Layout {
  Ints x_dims, param_dims;
};

Layout layout_of(NodeContext& c, size_t scale_input) {
  const Ints& xd = c.dims(0);
  const int64_t r = static_cast<int64_t>(xd.size());
  const Ints& sd = c.dims(scale_input);
  int64_t n = 1;
  for (int64_t d : sd) n *= d;
  Layout l{xd, sd};
  const int64_t block = c.attr_int("block_size", 0);
  if (n == 1 && block == 0) {  // per tensor: a scalar broadcasts
    l.param_dims = {};
    return l;
  }
  const int64_t axis = c.axis(c.attr_int("axis", 1), r);
  const int64_t len = xd[static_cast<size_t>(axis)];
  if (block == 0) {  // per axis
    if (sd.size() != 1 || sd[0] != len)
      c.invalid(fmt::format("a per-axis scale has dims ({}); axis {} of x has {}",
                            fmt::join(sd, ","), axis, len));
    l.param_dims.assign(static_cast<size_t>(r), 1);
    l.param_dims[static_cast<size_t>(axis)] = len;
    return l;
  }
  // Blocked: scale (..., ceil(len / block), ...) with x's other dims.
  if (len % block != 0)
    c.unsupported(
        fmt::format("block_size {} that does not divide axis {}'s length {}", block, axis, len));
  const int64_t blocks = len / block;
  Ints want = xd;
  want[static_cast<size_t>(axis)] = blocks;
  if (sd != want)
    c.invalid(fmt::format(
        "a blocked scale has dims ({}); x ({}) with block_size {} on axis {} wants ({})",
        fmt::join(sd, ","), fmt::join(xd, ","), block, axis, fmt::join(want, ",")));
  l.x_dims = xd;
  l.x_dims[static_cast<size_t>(axis)] = block;
  l.x_dims.insert(l.x_dims.begin() + axis, blocks);
  l.param_dims = want;
  l.param_dims.insert(l.param_dims.begin() + axis + 1, 1);
  return l;
}

dlrt::Value to_float(NodeContext& c, dlrt::Value v, dlrt_dtype f) {
  return v.dtype() == f ? v : c.op("cast", {v}, {{"dtype", f}});
}

void convert_dequantize(NodeContext& c) {
  const Layout l = layout_of(c, 1);
  const dlrt_dtype f = c.dtype(1);  // the scale's float type is y's
  dlrt::Value x = c.reshape(to_float(c, c.value(0), f), l.x_dims);
  if (c.has_input(2)) x = c.op("sub", {x, c.reshape(to_float(c, c.value(2), f), l.param_dims)});
  dlrt::Value y = c.op("mul", {x, c.reshape(c.value(1), l.param_dims)});
  c.set(0, c.reshape(y, c.dims(0)));
}

dlrt::Value quantize(NodeContext& c, dlrt::Value x, dlrt::Value scale,
                     std::optional<dlrt::Value> zero, dlrt_dtype out) {
  double lo = 0, hi = 0;
  if (!quant_range(out, &lo, &hi))
    c.unsupported(
        fmt::format("quantising to {} (dlrt quantises to u8, i8, u16, i16 and i32)", dlrt_dtype_name(out)));
  const dlrt_dtype f = x.dtype();
  dlrt::Value q = c.op("round", {c.op("div", {x, to_float(c, scale, f)})});
  if (zero) q = c.op("add", {q, to_float(c, *zero, f)});
  q = c.op("clip", {q}, {{"min", lo}, {"max", hi}});
  return c.op("cast", {q}, {{"dtype", out}});
}

void convert_quantize(NodeContext& c) {
  const Layout l = layout_of(c, 1);
  dlrt_dtype out = DLRT_U8;
  if (c.has_input(2)) out = c.dtype(2);
  else if (c.has_attr("output_dtype"))
    out = dtype_from_onnx(static_cast<int32_t>(c.attr_int("output_dtype", 2)),
                          fmt::format("{} output_dtype", c.label()));
  std::optional<dlrt::Value> zero;
  if (c.has_input(2)) zero = c.reshape(c.value(2), l.param_dims);
  dlrt::Value y =
      quantize(c, c.reshape(c.value(0), l.x_dims), c.reshape(c.value(1), l.param_dims), zero, out);
  c.set(0, c.reshape(y, c.dims(0)));
}

void convert_dynamic_quantize(NodeContext& c) {
  const dlrt_dtype f = c.dtype(0);
  if (f != DLRT_F32)
    c.unsupported(
        fmt::format("DynamicQuantizeLinear of {} (ONNX defines it for float)", dlrt_dtype_name(f)));
  dlrt::Value x = c.value(0);
  dlrt::Value zero = c.scalar(f, 0.0);
  dlrt::Value hi = c.op("maximum", {c.op("reduce_max", {x}), zero});
  dlrt::Value lo = c.op("minimum", {c.op("neg", {c.op("reduce_max", {c.op("neg", {x})})}), zero});
  // (hi - lo) / 255, or 1 / 255 when hi == lo (all zeros): the span is 1 then.
  dlrt::Value span = c.op("sub", {hi, lo});
  span = c.op("where", {c.op("equal", {span, zero}), c.scalar(f, 1.0), span});
  dlrt::Value scale = c.op("div", {span, c.scalar(f, 255.0)});
  dlrt::Value zp = c.op("round", {c.op("clip", {c.op("div", {c.op("neg", {lo}), scale})},
                                       {{"min", 0.0}, {"max", 255.0}})});
  c.set(0, quantize(c, x, scale, zp, DLRT_U8));
  if (c.wants_output(1)) c.set(1, c.op("copy", {scale}));
  if (c.wants_output(2)) c.set(2, c.op("cast", {zp}, {{"dtype", DLRT_U8}}));
}

}  // namespace

void add_quantize_converters(ConverterTable& t) {
  t.add("DequantizeLinear", "cast, sub, mul (per tensor, axis or block)", convert_dequantize);
  t.add("QuantizeLinear", "div, round, add, clip, cast (per tensor, axis or block)",
        convert_quantize);
  t.add("DynamicQuantizeLinear", "reduce_max, div, round, clip, cast", convert_dynamic_quantize);
}

}  // namespace dlrt::onnx_import
