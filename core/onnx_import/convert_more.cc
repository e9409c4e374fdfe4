// convert_more.cc: ONNX ops dlrt has no single op for, as decompositions into dlrt ops
// (docs/onnx.md lists each): logical ops through f32, Selu, ThresholdedRelu, IsNaN/IsInf,
// RMSNormalization, InstanceNormalization, Trilu, OneHot, Hardmax, DepthToSpace/SpaceToDepth,
// CastLike; and ConvTranspose and Attention, which map onto conv2d_transpose and attention.
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "onnx_import/host_fold.hpp"
#include "onnx_import/node_context.hpp"
#include "onnx_import/tensor_proto.hpp"

namespace dlrt::onnx_import {
namespace {

dlrt::Value to_f32(NodeContext& c, size_t i) {
  return c.dtype(i) == DLRT_F32 ? c.value(i) : c.op("cast", {c.value(i)}, {{"dtype", DLRT_F32}});
}

// Bool logic through f32 (dlrt's comparisons take floats): a, b in {0, 1}.
void logical(ConverterTable& t, const char* onnx_op, const char* how) {
  const std::string op = onnx_op;
  t.add(onnx_op, how, [op](NodeContext& c) {
    // Constants (the shape logic of exported functions: Not(Equal(heads, kv_heads))) fold.
    const HostTensor* ha = c.host(0);
    const HostTensor* hb = op == "Not" ? ha : c.host(1);
    if (ha && hb && ha->element_count() <= kMaxFoldElements && hb->element_count() <= kMaxFoldElements) {
      if (op == "Not") return c.set_host(0, host_unary(*ha, DLRT_BOOL, [](double v) { return v == 0 ? 1.0 : 0.0; }));
      return c.set_host(0, host_binary(*ha, *hb, DLRT_BOOL, [op](double x, double y) {
        const bool p = x != 0, q = y != 0;
        return (op == "And" ? p && q : op == "Or" ? p || q : p != q) ? 1.0 : 0.0;
      }));
    }
    dlrt::Value a = to_f32(c, 0);
    if (op == "Not") return c.set(0, c.op("equal", {a, c.scalar(DLRT_F32, 0.0)}));
    dlrt::Value b = to_f32(c, 1);
    if (op == "Xor") return c.set(0, c.op("not_equal", {a, b}));
    dlrt::Value m = op == "And" ? c.op("mul", {a, b}) : c.op("add", {a, b});
    c.set(0, c.op("greater", {m, c.scalar(DLRT_F32, 0.5)}));
  });
}

void convert_rms_norm(NodeContext& c) {
  const int64_t r = c.rank(0);
  const int64_t a = c.axis(c.attr_int("axis", -1), r);
  std::vector<int64_t> axes;
  for (int64_t k = a; k < r; ++k) axes.push_back(k);
  dlrt::Value x = c.value(0);
  dlrt::Value ms = c.op("reduce_mean", {c.op("square", {x})}, {{"axes", axes}, {"keepdims", true}});
  dlrt::Value inv = c.op("rsqrt", {c.op("add", {ms, c.scalar(c.dtype(0), c.attr_float("epsilon", 1e-5f))})});
  c.set(0, c.op("mul", {c.op("mul", {x, inv}), c.value(1)}));
}

void convert_instance_norm(NodeContext& c) {
  const std::vector<int64_t> d = c.dims(0);
  if (d.size() < 3) c.invalid("InstanceNormalization needs (N,C,D1,...)");
  std::vector<int64_t> axes, cshape(d.size(), 1);
  for (size_t k = 2; k < d.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  cshape[1] = d[1];
  dlrt::Value x = c.value(0);
  const dlrt::OpAttrs keep = {{"axes", axes}, {"keepdims", true}};
  dlrt::Value mean = c.op("reduce_mean", {x}, keep);
  dlrt::Value xc = c.op("sub", {x, mean});
  dlrt::Value var = c.op("reduce_mean", {c.op("square", {xc})}, keep);
  dlrt::Value inv = c.op("rsqrt", {c.op("add", {var, c.scalar(c.dtype(0), c.attr_float("epsilon", 1e-5f))})});
  dlrt::Value y = c.op("mul", {c.op("mul", {xc, inv}), c.reshape(c.value(1), cshape)});
  c.set(0, c.op("add", {y, c.reshape(c.value(2), cshape)}));
}

void convert_trilu(NodeContext& c) {
  const std::vector<int64_t> d = c.dims(0);
  if (d.size() < 2) c.invalid("Trilu needs a matrix");
  const int64_t k = c.has_input(1) ? c.require_host(1, "k").as_int64s().at(0) : 0;
  const bool upper = c.attr_int("upper", 1) != 0;
  const int64_t n = d[d.size() - 2], m = d.back();
  std::vector<double> mask(static_cast<size_t>(n * m));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) mask[i * m + j] = upper ? (j - i >= k) : (j - i <= k);
  const dlrt_dtype dt = c.dtype(0);
  if (dt == DLRT_F32 || dt == DLRT_F16 || dt == DLRT_BF16) {
    dlrt::Value keep = c.constant(HostTensor::from_doubles(DLRT_BOOL, mask, {n, m}));
    return c.set(0, c.op("where", {keep, c.value(0), c.scalar(dt, 0.0)}));
  }
  // dlrt's where takes floats; gather takes every dtype. The input flattened with one zero
  // appended, and a constant index per element: its own position where kept, else the zero's.
  int64_t total = 1;
  for (int64_t e : d) total *= e;
  if (total >= (int64_t{1} << 28)) c.unsupported("Trilu of a non-float tensor above 2^28 elements");
  std::vector<int64_t> idx(static_cast<size_t>(total));
  for (int64_t p = 0; p < total; ++p) idx[p] = mask[p % (n * m)] != 0 ? p : total;
  dlrt::Value flat = c.reshape(c.value(0), {total});
  dlrt::Value zero = c.constant(HostTensor::from_doubles(dt, {0.0}, {1}));
  dlrt::Value padded = c.op("concat", {flat, zero}, {{"axis", int64_t{0}}});
  c.set(0, c.op("gather", {padded, c.constant(HostTensor::from_int64s(idx, d))}));
}

void convert_one_hot(NodeContext& c) {
  const int64_t depth = c.require_host(1, "depth").as_int64s().at(0);
  const std::vector<double> vals = c.require_host(2, "values").as_doubles();
  if (vals.size() != 2) c.invalid("values must hold (off, on)");
  const std::vector<int64_t> d = c.dims(0);
  const int64_t r = static_cast<int64_t>(d.size()) + 1;
  const int64_t a = c.axis(c.attr_int("axis", -1), r);
  // Ids made i64 (float ids truncated, as ONNX casts them); negative ones count from the end
  // (ONNX), wrapped in i64 (exact).
  dlrt::Value ids = c.value(0);
  if (c.dtype(0) != DLRT_I64) ids = c.op("cast", {ids}, {{"dtype", DLRT_I64}});
  ids = c.op("where", {c.op("less", {ids, c.scalar(DLRT_I64, 0.0)}),
                       c.op("add", {ids, c.scalar(DLRT_I64, double(depth))}), ids});
  dlrt::Value y = c.op("one_hot", {ids}, {{"depth", depth}, {"on_value", vals[1]}, {"off_value", vals[0]},
                                          {"dtype", c.dtype(2)}});
  if (a != r - 1) {
    std::vector<int64_t> perm;
    for (int64_t k = 0; k < r; ++k) perm.push_back(k < a ? k : (k == a ? r - 1 : k - 1));
    y = c.op("transpose", {y}, {{"perm", perm}});
  }
  c.set(0, y);
}

void convert_hardmax(NodeContext& c) {
  const std::vector<int64_t> d = c.dims(0);
  const int64_t r = static_cast<int64_t>(d.size());
  if (c.opset() < 13) c.unsupported("Hardmax before opset 13 (the 2-D coercion)");
  const int64_t a = c.axis(c.attr_int("axis", -1), r);
  dlrt::Value x = c.value(0);
  std::vector<int64_t> perm;  // axis a moved last
  for (int64_t k = 0; k < r; ++k)
    if (k != a) perm.push_back(k);
  perm.push_back(a);
  if (a != r - 1) x = c.op("transpose", {x}, {{"perm", perm}});
  dlrt::Value idx = c.op("argmax", {x}, {{"axis", int64_t{-1}}, {"output_type", DLRT_I64}});
  dlrt::Value y = c.op("one_hot", {idx}, {{"depth", d[a]}, {"dtype", c.dtype(0)}});
  if (a != r - 1) {
    std::vector<int64_t> inv(r);
    for (int64_t k = 0; k < r; ++k) inv[perm[k]] = k;
    y = c.op("transpose", {y}, {{"perm", inv}});
  }
  c.set(0, y);
}

void convert_depth_space(NodeContext& c, bool to_space) {
  const std::vector<int64_t> d = c.dims(0);
  if (d.size() != 4) c.invalid("needs (N,C,H,W)");
  const int64_t b = c.attr_int("blocksize", 0), N = d[0], C = d[1], H = d[2], W = d[3];
  if (b < 1) c.invalid("blocksize must be >= 1");
  dlrt::Value x = c.value(0);
  if (to_space) {
    if (C % (b * b) != 0) c.invalid(fmt::format("C = {} is not a multiple of blocksize^2", C));
    const bool crd = c.attr_string("mode", "DCR") == "CRD";
    x = crd ? c.reshape(x, {N, C / (b * b), b, b, H, W}) : c.reshape(x, {N, b, b, C / (b * b), H, W});
    x = c.op("transpose", {x}, {{"perm", crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3}
                                             : std::vector<int64_t>{0, 3, 4, 1, 5, 2}}});
    return c.set(0, c.reshape(x, {N, C / (b * b), H * b, W * b}));
  }
  if (H % b != 0 || W % b != 0) c.invalid("H and W must be multiples of blocksize");
  // SpaceToDepth's mode is new in opset 28 (DCR, the default, is what it always did); CRD is
  // DepthToSpace CRD's inverse: the block's offsets go after the channel instead of before.
  const std::string mode = c.attr_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") c.invalid("mode '" + mode + "'; expected DCR or CRD");
  x = c.reshape(x, {N, C, H / b, b, W / b, b});
  x = c.op("transpose", {x}, {{"perm", mode == "CRD" ? std::vector<int64_t>{0, 1, 3, 5, 2, 4}
                                                      : std::vector<int64_t>{0, 3, 5, 1, 2, 4}}});
  c.set(0, c.reshape(x, {N, C * b * b, H / b, W / b}));
}

// ConvTranspose of NCHW x and W (Ci, Co/group, kH, kW): conv2d_transpose on W transposed to
// (kH, kW, Co/group, Ci). 1-D (rank 3) runs as (N, C, L, 1) with a 1-wide kernel; a grouped
// one as `group` convolutions on channel slices of x and W, concatenated along C.
void convert_conv_transpose(NodeContext& c) {
  std::vector<int64_t> xd = c.dims(0), wd = c.dims(1);
  const bool one_d = xd.size() == 3 && wd.size() == 3;
  if (!one_d && (xd.size() != 4 || wd.size() != 4))
    c.unsupported("ConvTranspose of rank other than 3 or 4 (dlrt has 1-D and 2-D)");
  const int64_t group = c.attr_int("group", 1);
  if (group < 1 || xd[1] % group != 0 || wd[0] != xd[1])
    c.invalid(fmt::format("{} input channels, W's first dim {} and group {}", xd[1], wd[0], group));
  // 1-D attributes gain the second spatial dim's neutral values.
  auto widen = [&](std::vector<int64_t> v, int64_t fill, size_t per_dim) {
    if (!one_d) return v;
    std::vector<int64_t> out;
    for (size_t k = 0; k < v.size(); k += per_dim) {
      out.push_back(v[k]);
      out.push_back(fill);
    }
    return out;
  };
  const size_t dims = one_d ? 1 : 2;
  const std::vector<int64_t> s = widen(c.attr_ints("strides", std::vector<int64_t>(dims, 1)), 1, 1),
                             dil = widen(c.attr_ints("dilations", std::vector<int64_t>(dims, 1)), 1, 1);
  std::vector<int64_t> op = widen(c.attr_ints("output_padding", std::vector<int64_t>(dims, 0)), 0, 1);
  std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>(2 * dims, 0));
  if (one_d && pads.size() == 2) pads = {pads[0], 0, pads[1], 0};
  std::vector<int64_t> out_shape = c.attr_ints("output_shape");
  if (one_d && !out_shape.empty()) out_shape.push_back(1);
  const std::string ap = c.attr_string("auto_pad", "NOTSET");
  if (s.size() != 2 || dil.size() != 2 || op.size() != 2 || pads.size() != 4) c.unsupported("attributes of another rank");
  dlrt::Value x = c.value(0), wv = c.value(1);
  if (one_d) {
    xd.push_back(1);
    wd.push_back(1);
    x = c.reshape(x, xd);
    wv = c.reshape(wv, wd);
  }
  const bool computed = !out_shape.empty() || ap == "SAME_UPPER" || ap == "SAME_LOWER";
  if (ap == "VALID") pads = {0, 0, 0, 0};
  if (computed) {
    for (int k = 0; k < 2; ++k) {
      const int64_t in = xd[2 + k], kk = (wd[2 + k] - 1) * dil[k] + 1;
      const int64_t out = !out_shape.empty() ? out_shape[out_shape.size() - 2 + k] : in * s[k];
      const int64_t total = s[k] * (in - 1) + op[k] + kk - out;
      if (total < 0) c.unsupported("an output_shape larger than the full transposed convolution");
      const bool upper = ap == "SAME_UPPER";
      pads[k] = upper ? total / 2 : total - total / 2;  // as ONNX's reference and onnxruntime
      pads[k + 2] = upper ? total - total / 2 : total / 2;
    }
  }
  dlrt::OpAttrs attrs = {{"strides", s}, {"dilations", dil}, {"padding", "EXPLICIT"}, {"pads", pads},
                         {"data_format", "NCHW"}};
  attrs.emplace_back("output_padding", op);
  auto one_group = [&](dlrt::Value xg, dlrt::Value wg) {  // wg (Ci/g, Co/g, kH, kW) -> (kH, kW, Co/g, Ci/g)
    wg = c.op("transpose", {wg}, {{"perm", std::vector<int64_t>{2, 3, 1, 0}}});
    return c.op("conv2d_transpose", {xg, wg}, attrs);
  };
  dlrt::Value y;
  if (group == 1) {
    y = one_group(x, wv);
  } else {
    const int64_t cg = xd[1] / group;
    std::vector<dlrt::Value> parts;
    for (int64_t g = 0; g < group; ++g) {
      auto part = [&](dlrt::Value v, int64_t axis) {
        return c.op("slice", {v}, {{"begin", std::vector<int64_t>{g * cg}}, {"end", std::vector<int64_t>{(g + 1) * cg}},
                                   {"axes", std::vector<int64_t>{axis}}});
      };
      parts.push_back(one_group(part(x, 1), part(wv, 0)));
    }
    y = c.op("concat", parts, {{"axis", int64_t{1}}});
  }
  if (c.has_input(2)) y = c.op("bias_add", {y, c.value(2)}, {{"data_format", "NCHW"}});
  if (one_d) {
    std::vector<int64_t> yd = y.dims();
    yd.pop_back();
    y = c.reshape(y, yd);
  }
  c.set(0, y);
}

// ONNX Attention (opset 23): Q, K, V as (B, H, S, D) (3-D inputs are refused, see below); no mask, no past, no softcap; causal only with Tq == Tk (dlrt's causal mask is
// bottom-right aligned, ONNX's top-left: the same when square).
// Attention (opset 23) of 4-D Q (B,Hq,Sq,D), K (B,Hkv,Skv,D), V (B,Hkv,Skv,Dv) in the form
// ONNX's function body gives it, op by op (the fused `attention` covers only the plain case):
//   present_key/value = concat(past, K/V) on the sequence axis (Stot = Spast + Skv);
//   bias (Sq,Stot) = attn_mask (float: added; bool: 0 where true, -inf where false), or the
//   causal mask (-inf where key j > query i: top-left aligned, as the function's Trilu);
//   grouped-query: K and V tiled Hq/Hkv times along heads (ONNX's Tile: query head h reads
//   key/value head h % Hkv);
//   s = q k^T * scale (scale: 1/sqrt(D) unless given) + bias, softcap c: c * tanh(s / c);
//   Y = softmax(s) v; qk_matmul_output: s before the bias (mode 0), after it (1), after the
//   softcap (2) or the softmax (3).
void attention_by_parts(NodeContext& c) {
  const std::vector<int64_t> qd = c.dims(0), kd = c.dims(1), vd = c.dims(2);
  const int64_t Hq = qd[1], Hkv = kd[1], Sq = qd[2], D = qd[3];
  if (kd.size() != 4 || vd.size() != 4) c.invalid("K and V must be 4-D with a 4-D Q");
  if (Hkv < 1 || Hq % Hkv != 0) c.invalid(fmt::format("{} query heads is not a multiple of {} key/value heads", Hq, Hkv));
  dlrt::Value k = c.value(1), v = c.value(2);
  if (c.has_input(4) != c.has_input(5)) c.invalid("past_key and past_value come together");
  if (c.has_input(4)) {
    k = c.op("concat", {c.value(4), k}, {{"axis", int64_t{2}}});
    v = c.op("concat", {c.value(5), v}, {{"axis", int64_t{2}}});
  }
  c.set(1, k);
  c.set(2, v);
  const int64_t St = k.dims()[2];
  const dlrt_dtype dt = c.dtype(0);
  const bool causal = c.attr_int("is_causal", 0) != 0;
  const bool has_mask = c.has_input(3);
  if (causal && has_mask) c.unsupported("is_causal together with attn_mask");
  std::optional<dlrt::Value> bias;
  if (has_mask) {
    dlrt::Value m = c.value(3);
    if (m.dtype() == DLRT_BOOL)
      m = c.op("where", {m, c.scalar(dt, 0.0), c.scalar(dt, -INFINITY)});
    else if (m.dtype() != dt)
      c.invalid(fmt::format("attn_mask is {}; Q is {}", dlrt_dtype_name(m.dtype()), dlrt_dtype_name(dt)));
    bias = m;
  } else if (causal) {
    std::vector<float> tri(static_cast<size_t>(Sq * St));
    for (int64_t i = 0; i < Sq; ++i)
      for (int64_t j = 0; j < St; ++j) tri[i * St + j] = j <= i ? 0.0f : -INFINITY;
    bias = c.constant(HostTensor::from_floats(tri, {Sq, St}));
    if (dt != DLRT_F32) bias = c.op("cast", {*bias}, {{"dtype", dt}});
  }
  if (Hq != Hkv) {
    k = c.op("concat", std::vector<dlrt::Value>(static_cast<size_t>(Hq / Hkv), k), {{"axis", int64_t{1}}});
    v = c.op("concat", std::vector<dlrt::Value>(static_cast<size_t>(Hq / Hkv), v), {{"axis", int64_t{1}}});
  }
  const double given = c.attr_float("scale", 0.f);
  const double scale = given != 0 ? given : 1.0 / std::sqrt(static_cast<double>(D));
  const int64_t mode = c.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) c.invalid(fmt::format("qk_matmul_output_mode {} (ONNX has 0-3)", mode));
  dlrt::Value s = c.op("batch_matmul", {c.value(0), k}, {{"transpose_b", true}});
  s = c.op("mul", {s, c.scalar(dt, scale)});
  std::optional<dlrt::Value> qk;
  if (mode == 0) qk = s;
  if (bias) s = c.op("add", {s, *bias});
  if (mode == 1) qk = s;
  const double cap = c.attr_float("softcap", 0.f);
  if (cap > 0) s = c.op("mul", {c.op("tanh", {c.op("div", {s, c.scalar(dt, cap)})}), c.scalar(dt, cap)});
  if (mode == 2) qk = s;
  dlrt::Value p = c.op("softmax", {s}, {{"axis", int64_t{-1}}});
  if (mode == 3) qk = p;
  c.set(0, c.op("batch_matmul", {p, v}));
  if (c.wants_output(3)) c.set(3, *qk);
}

void convert_attention(NodeContext& c) {
  // Opset 24 adds the nonpad_kv_seqlen input (per-batch key lengths), 25 the sliding window
  // attributes; dlrt has neither, so a model using them is refused here rather than run
  // without them. Opset 24's offset-aware causal mask is the same as 23's where dlrt runs
  // causal attention (Tq == Tk, no past).
  if (c.has_input(6)) c.unsupported("the nonpad_kv_seqlen input (opset 24)");
  if (c.attr_int("left_window_size", -1) != -1 || c.attr_int("right_window_size", -1) != -1)
    c.unsupported("sliding-window attention: left_window_size / right_window_size (opset 25)");
  const bool causal = c.attr_int("is_causal", 0) != 0;
  const std::vector<int64_t> qd = c.dims(0), kd = c.dims(1), vd = c.dims(2);
  if (qd.size() == 3)
    c.unsupported("3-D Q/K/V: onnx 1.18's reference splits heads by a plain reshape to (B,H,S,D), "
                  "onnxruntime by (B,S,H,D) and a transpose; dlrt takes neither side yet");
  if (qd.size() == 4) {
    bool plain = c.attr_float("softcap", 0.f) == 0.f && kd.size() == 4 && qd[1] == kd[1] &&
                 (!causal || qd[2] == kd[2]);
    for (size_t i = 3; i < c.num_inputs(); ++i) plain = plain && !c.has_input(i);
    for (size_t k = 1; k < c.num_outputs(); ++k) plain = plain && !c.wants_output(k);
    if (!plain) return attention_by_parts(c);
  }
  for (size_t i = 3; i < c.num_inputs(); ++i)
    if (c.has_input(i)) c.unsupported("attention masks and past key/value inputs");
  for (size_t k = 1; k < c.num_outputs(); ++k)
    if (c.wants_output(k)) c.unsupported("the present key/value and qk outputs");
  if (c.attr_float("softcap", 0.f) != 0.f) c.unsupported("softcap");
  dlrt::Value q = c.value(0), k = c.value(1), v = c.value(2);
  const bool three_d = qd.size() == 3;
  int64_t B = 0, Hq = 0, Tq = 0, Dv = 0;
  if (three_d) {
    const int64_t hq = c.attr_int("q_num_heads", 0), hkv = c.attr_int("kv_num_heads", 0);
    if (hq < 1 || hkv < 1) c.invalid("3-D inputs need q_num_heads and kv_num_heads");
    if (hq != hkv) c.unsupported("grouped-query attention (q_num_heads != kv_num_heads)");
    auto heads = [&](dlrt::Value x, const std::vector<int64_t>& d, int64_t h) {
      x = c.reshape(x, {d[0], d[1], h, d[2] / h});
      return c.op("transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
    };
    B = qd[0];
    Tq = qd[1];
    Hq = hq;
    Dv = vd[2] / hkv;
    q = heads(q, qd, hq);
    k = heads(k, kd, hkv);
    v = heads(v, vd, hkv);
  } else if (qd.size() == 4) {
    if (qd[1] != kd[1]) c.unsupported("grouped-query attention (fewer key/value heads)");
  } else {
    c.invalid("Q must be 3-D or 4-D");
  }
  if (causal && q.dims()[2] != k.dims()[2]) c.unsupported("is_causal with query and key lengths that differ");
  const double scale = c.attr_float("scale", 0.f);  // 0: 1/sqrt(D), dlrt's default too
  dlrt::Value o = c.ops("attention", {q, k, v}, {{"scale", scale}, {"causal", int64_t{causal ? 1 : 0}}}, 2)[0];
  if (three_d) {
    o = c.op("transpose", {o}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
    o = c.reshape(o, {B, Tq, Hq * Dv});
  }
  c.set(0, o);
}

}  // namespace

void add_more_converters(ConverterTable& t) {
  logical(t, "And", "cast f32, mul, greater 0.5");
  logical(t, "Or", "cast f32, add, greater 0.5");
  logical(t, "Xor", "cast f32, not_equal");
  logical(t, "Not", "cast f32, equal 0");
  t.add("CastLike", "cast", [](NodeContext& c) {
    const dlrt_dtype to = c.dtype(1);
    refuse_rounding_to_bf16(c, c.dtype(0), to);
    c.set(0, c.dtype(0) == to ? c.op("copy", {c.value(0)}) : c.op("cast", {c.value(0)}, {{"dtype", to}}));
  });
  t.add("Selu", "elu, mul", [](NodeContext& c) {
    const double alpha = c.attr_float("alpha", 1.67326319217681884765625f),
                 gamma = c.attr_float("gamma", 1.05070102214813232421875f);
    c.set(0, c.op("mul", {c.op("elu", {c.value(0)}, {{"alpha", alpha}}), c.scalar(c.dtype(0), gamma)}));
  });
  t.add("ThresholdedRelu", "where(x > alpha, x, 0)", [](NodeContext& c) {
    dlrt::Value x = c.value(0);
    dlrt::Value keep = c.op("greater", {x, c.scalar(c.dtype(0), c.attr_float("alpha", 1.0f))});
    c.set(0, c.op("where", {keep, x, c.scalar(c.dtype(0), 0.0)}));
  });
  t.add("IsNaN", "not_equal(x, x)", [](NodeContext& c) { c.set(0, c.op("not_equal", {c.value(0), c.value(0)})); });
  t.add("IsInf", "equal(x, +-inf)", [](NodeContext& c) {
    const bool pos = c.attr_int("detect_positive", 1) != 0, neg = c.attr_int("detect_negative", 1) != 0;
    dlrt::Value x = c.value(0);
    if (pos && neg) return c.set(0, c.op("equal", {c.op("abs", {x}), c.scalar(c.dtype(0), INFINITY)}));
    if (pos) return c.set(0, c.op("equal", {x, c.scalar(c.dtype(0), INFINITY)}));
    if (neg) return c.set(0, c.op("equal", {x, c.scalar(c.dtype(0), -INFINITY)}));
    c.set(0, c.op("not_equal", {x, x}) /* detects nothing: false unless NaN */);
  });
  t.add("RMSNormalization", "square, reduce_mean, add, rsqrt, mul", convert_rms_norm);
  t.add("InstanceNormalization", "reduce_mean, sub, square, reduce_mean, rsqrt, mul, add", convert_instance_norm);
  t.add("Trilu", "where with a constant mask", convert_trilu);
  t.add("OneHot", "one_hot (+ transpose)", convert_one_hot);
  t.add("Hardmax", "argmax, one_hot", convert_hardmax);
  t.add("DepthToSpace", "reshape, transpose, reshape", [](NodeContext& c) { convert_depth_space(c, true); });
  t.add("SpaceToDepth", "reshape, transpose, reshape", [](NodeContext& c) { convert_depth_space(c, false); });
  t.add("ConvTranspose", "transpose + conv2d_transpose (+ bias_add), NCHW", convert_conv_transpose);
  t.add("Attention", "attention (+ head reshapes)", convert_attention);
}

}  // namespace dlrt::onnx_import
