// export.cc: dlrt graph -> ONNX ModelProto (export.hpp). One writer per dlrt op family below;
// each emits ONNX nodes into the GraphProto and names its output "<node name>:<k>".
#include "onnx_import/export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "graph/graph_handle.hpp"
#include "onnx_import/host_fold.hpp"
#include "onnx_import/tensor_proto.hpp"
#include "status.hpp"

namespace dlrt::onnx_import {
namespace {

using core::Node;
using core::NodeKind;
using core::ValueRef;

class Writer {
 public:
  Writer(dlrt_graph& g, onnx::GraphProto* out, bool symbolic) : g_(g), out_(out), symbolic_(symbolic) {}

  // The ONNX name of value v. A constant or variable becomes an initializer the first time a
  // node reads it by name (a filter that is only read transposed, through host_value, never
  // does, so no unused initializer is written).
  std::string name_of(ValueRef v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    const Node& n = g_.node(v.node);
    if (n.kind == NodeKind::kConstant || n.kind == NodeKind::kVariable) {
      const std::string name = initializer(*host_value(v), n.name);
      names_[v] = name;
      return name;
    }
    return fmt::format("{}:{}", n.name, v.output);
  }
  void set_name(ValueRef v, const std::string& n) { names_[v] = n; }
  std::string fresh(const std::string& base) {
    std::string n = base;
    for (int k = 1; used_.count(n) != 0; ++k) n = fmt::format("{}_{}", base, k);
    used_.insert(n);
    return n;
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& in,
                        const std::vector<std::string>& out, const std::string& name) {
    auto* n = out_->add_node();
    n->set_op_type(op);
    n->set_name(fresh(name));
    for (const auto& s : in) n->add_input(s);
    for (const auto& s : out) n->add_output(s);
    return n;
  }
  static void ints(onnx::NodeProto* n, const char* name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t e : v) a->add_ints(e);
  }
  static void integer(onnx::NodeProto* n, const char* name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void real(onnx::NodeProto* n, const char* name, double v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(static_cast<float>(v));
  }
  static void text(onnx::NodeProto* n, const char* name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  std::string initializer(const HostTensor& t, const std::string& base) {
    const std::string n = fresh(base);
    write_tensor_proto(t, n, out_->add_initializer());
    return n;
  }
  std::string int64s(const std::vector<int64_t>& v, const std::string& base) {
    return initializer(HostTensor::from_int64s(v, {static_cast<int64_t>(v.size())}), base);
  }
  // The value of a constant or variable node, else nullopt (it is computed at run time).
  std::optional<HostTensor> host_value(ValueRef v) {
    const Node& n = g_.node(v.node);
    HostTensor t;
    t.dtype = n.outputs[0].dtype;
    t.dims = n.outputs[0].dims;
    if (n.kind == NodeKind::kConstant) {
      t.bytes = *n.constant_data;
      return t;
    }
    if (n.kind == NodeKind::kVariable) {
      t.bytes.resize(static_cast<size_t>(t.element_count()) * dlrt_dtype_size(t.dtype));
      const core::StatusValue read = core::take_status(
          dlrt_graph_variable_read(&g_, core::to_c(v), t.bytes.data(), t.bytes.size()));
      if (!read.ok()) fail(read, fmt::format("save_onnx: reading variable '{}'", n.name));
      return t;
    }
    return std::nullopt;
  }
  std::string transpose(const std::string& x, const std::vector<int64_t>& perm, const std::string& base) {
    const std::string y = fresh(base + "/t");
    ints(node("Transpose", {x}, {y}, base + "/transpose"), "perm", perm);
    return y;
  }
  bool symbolic() const { return symbolic_; }
  dlrt_graph& graph() { return g_; }

 private:
  dlrt_graph& g_;
  onnx::GraphProto* out_;
  bool symbolic_;
  std::map<ValueRef, std::string> names_;
  std::set<std::string> used_;
};

const ops::AttrValue* attr(const Node& n, const char* name) {
  auto it = n.attrs.find(name);
  return it == n.attrs.end() ? nullptr : &it->second;
}
std::string sattr(const Node& n, const char* name, const std::string& d) {
  const auto* a = attr(n, name);
  return a ? a->as_string() : d;
}
std::vector<int64_t> iattrs(const Node& n, const char* name) {
  const auto* a = attr(n, name);
  return a ? a->as_ints() : std::vector<int64_t>{};
}

[[noreturn]] void unmapped(const Node& n, const std::string& why) {
  fail(DLRT_UNIMPLEMENTED, fmt::format("save_onnx: node '{}' ({}): {}", n.name, n.op, why));
}

// x in NCHW for an op that has data_format: a Transpose when the node is NHWC.
std::string to_nchw(Writer& w, const Node& n, const std::string& x) {
  return sattr(n, "data_format", "NHWC") == "NHWC" ? w.transpose(x, {0, 3, 1, 2}, n.name) : x;
}
void from_nchw(Writer& w, const Node& n, const std::string& y, const std::string& out) {
  if (sattr(n, "data_format", "NHWC") == "NHWC")
    Writer::ints(w.node("Transpose", {y}, {out}, n.name + "/back"), "perm", {0, 2, 3, 1});
  else
    w.node("Identity", {y}, {out}, n.name + "/out");
}

void activation(Writer& w, const Node& n, const std::string& y, const std::string& out) {
  const std::string act = sattr(n, "activation", "none");
  if (act == "none") return void(w.node("Identity", {y}, {out}, n.name + "/act"));
  const std::string op = act == "relu" ? "Relu" : act == "sigmoid" ? "Sigmoid" : act == "tanh" ? "Tanh" : "";
  if (op.empty()) unmapped(n, "activation " + act);
  w.node(op, {y}, {out}, n.name + "/act");
}

void write_conv(Writer& w, const Node& n, const std::string& out) {
  const std::string x = to_nchw(w, n, w.name_of(n.inputs[0]));
  std::string wt;
  if (auto h = w.host_value(n.inputs[1])) wt = w.initializer(host_transpose(*h, {3, 2, 0, 1}), n.name + "/W");
  else wt = w.transpose(w.name_of(n.inputs[1]), {3, 2, 0, 1}, n.name + "/W");
  std::vector<std::string> in = {x, wt};
  if (n.op == "conv2d_bias_act") in.push_back(w.name_of(n.inputs[2]));
  const std::string y = w.fresh(n.name + "/conv");
  auto* c = w.node("Conv", in, {y}, n.name);
  Writer::ints(c, "strides", iattrs(n, "strides"));
  Writer::ints(c, "dilations", iattrs(n, "dilations"));
  Writer::ints(c, "pads", iattrs(n, "pads"));
  if (const auto* g = attr(n, "groups")) Writer::integer(c, "group", g->as_int());
  const std::string a = w.fresh(n.name + "/a");
  if (n.op == "conv2d_bias_act") activation(w, n, y, a);
  from_nchw(w, n, n.op == "conv2d_bias_act" ? a : y, out);
}

// conv2d_transpose -> ConvTranspose on x in NCHW. dlrt's filter (KH,KW,Co,Ci) becomes ONNX's
// (Ci,Co,KH,KW). dlrt's inferred "pads" (ONNX's layout: h_begin, w_begin, h_end, w_end) are
// those of the forward convolution; ONNX's output length is (H-1)*s + k - begin - end +
// output_padding, so output_padding is whatever the node's own output length needs beyond
// that (0 <= it < s, by the op's definition), which covers Keras' VALID, SAME and explicit
// output_padding alike.
void write_conv_transpose(Writer& w, const Node& n, const std::string& out) {
  const bool nhwc = sattr(n, "data_format", "NHWC") == "NHWC";
  const std::string x = to_nchw(w, n, w.name_of(n.inputs[0]));
  std::string wt;
  if (auto h = w.host_value(n.inputs[1])) wt = w.initializer(host_transpose(*h, {3, 2, 0, 1}), n.name + "/W");
  else wt = w.transpose(w.name_of(n.inputs[1]), {3, 2, 0, 1}, n.name + "/W");
  const ValueRef xv = n.inputs[0], wv = n.inputs[1];
  const std::vector<int64_t>& xd = w.graph().node(xv.node).outputs[xv.output].dims;
  const std::vector<int64_t>& wd = w.graph().node(wv.node).outputs[wv.output].dims;
  const std::vector<int64_t> strides = iattrs(n, "strides"), dilations = iattrs(n, "dilations"),
                             pads = iattrs(n, "pads");
  std::vector<int64_t> output_padding(2);
  for (int k = 0; k < 2; ++k) {
    const int64_t in = xd[nhwc ? 1 + k : 2 + k], y = n.outputs[0].dims[nhwc ? 1 + k : 2 + k];
    const int64_t taps = (wd[k] - 1) * dilations[k] + 1;
    output_padding[k] = y - ((in - 1) * strides[k] + taps - pads[k] - pads[k + 2]);
    if (output_padding[k] < 0 || output_padding[k] >= std::max<int64_t>(strides[k], dilations[k]))
      unmapped(n, fmt::format("an output length ONNX's ConvTranspose cannot give (output padding {})",
                              output_padding[k]));
  }
  const std::string y = w.fresh(n.name + "/deconv");
  auto* c = w.node("ConvTranspose", {x, wt}, {y}, n.name);
  Writer::ints(c, "strides", strides);
  Writer::ints(c, "dilations", dilations);
  Writer::ints(c, "pads", pads);
  Writer::ints(c, "output_padding", output_padding);
  from_nchw(w, n, y, out);
}

// resize -> Resize (opset 13's inputs: X, roi, scales, sizes) on x in NCHW. The sizes are
// (N, C) of x at run time, then (OH, OW): a symbolic batch stays symbolic. The modes are
// ONNX's own names but for bilinear, ONNX's "linear".
void write_resize(Writer& w, const Node& n, const std::string& out) {
  const std::string x = to_nchw(w, n, w.name_of(n.inputs[0]));
  const std::string shape = w.fresh(n.name + "/shape"), nc = w.fresh(n.name + "/nc"),
                    sizes = w.fresh(n.name + "/sizes");
  w.node("Shape", {x}, {shape}, n.name + "/shape");
  w.node("Slice", {shape, w.int64s({0}, n.name + "/start"), w.int64s({2}, n.name + "/end")}, {nc},
         n.name + "/nc");
  Writer::integer(w.node("Concat", {nc, w.int64s(iattrs(n, "size"), n.name + "/hw")}, {sizes},
                         n.name + "/sizes"),
                  "axis", 0);
  const std::string y = w.fresh(n.name + "/resized");
  auto* r = w.node("Resize", {x, "", "", sizes}, {y}, n.name);
  const std::string mode = sattr(n, "mode", "nearest");
  Writer::text(r, "mode", mode == "bilinear" ? "linear" : mode);
  Writer::text(r, "coordinate_transformation_mode", sattr(n, "coordinate_transformation", "half_pixel"));
  if (mode == "nearest") Writer::text(r, "nearest_mode", sattr(n, "nearest_mode", "round_prefer_floor"));
  from_nchw(w, n, y, out);
}

void write_pool(Writer& w, const Node& n, const std::string& out) {
  const std::string x = to_nchw(w, n, w.name_of(n.inputs[0]));
  const std::string y = w.fresh(n.name + "/pool");
  auto* p = w.node(n.op == "max_pool2d" ? "MaxPool" : "AveragePool", {x}, {y}, n.name);
  Writer::ints(p, "kernel_shape", iattrs(n, "ksize"));
  Writer::ints(p, "strides", iattrs(n, "strides"));
  Writer::ints(p, "pads", iattrs(n, "pads"));
  from_nchw(w, n, y, out);
}

void write_global_pool(Writer& w, const Node& n, const std::string& out) {
  const std::string x = to_nchw(w, n, w.name_of(n.inputs[0]));
  const std::string y = w.fresh(n.name + "/pool");
  w.node(n.op == "global_max_pool2d" ? "GlobalMaxPool" : "GlobalAveragePool", {x}, {y}, n.name);
  const auto* k = attr(n, "keepdims");
  if (k == nullptr || !k->as_bool()) {
    Writer::integer(w.node("Flatten", {y}, {out}, n.name + "/flatten"), "axis", 1);
    return;
  }
  from_nchw(w, n, y, out);
}

// grid_sample -> GridSample (opset 16's mode names, dlrt's own) on x in NCHW; the grid is
// (N,OH,OW,2) in both of dlrt's formats and ONNX's.
void write_grid_sample(Writer& w, const Node& n, const std::string& out) {
  const std::string x = to_nchw(w, n, w.name_of(n.inputs[0]));
  const std::string y = w.fresh(n.name + "/sample");
  auto* g = w.node("GridSample", {x, w.name_of(n.inputs[1])}, {y}, n.name);
  Writer::text(g, "mode", sattr(n, "mode", "bilinear"));
  Writer::text(g, "padding_mode", sattr(n, "padding_mode", "zeros"));
  Writer::integer(g, "align_corners", attr(n, "align_corners")->as_bool() ? 1 : 0);
  from_nchw(w, n, y, out);
}

void write_matmul(Writer& w, const Node& n, const std::string& out) {
  const bool ta = attr(n, "transpose_a") && attr(n, "transpose_a")->as_bool();
  const bool tb = attr(n, "transpose_b") && attr(n, "transpose_b")->as_bool();
  std::vector<std::string> in = {w.name_of(n.inputs[0]), w.name_of(n.inputs[1])};
  if (n.op == "matmul_bias_act") in.push_back(w.name_of(n.inputs[2]));
  const std::string y = w.fresh(n.name + "/gemm");
  auto* g = w.node("Gemm", in, {n.op == "matmul" ? out : y}, n.name);
  if (ta) Writer::integer(g, "transA", 1);
  if (tb) Writer::integer(g, "transB", 1);
  if (n.op == "matmul_bias_act") activation(w, n, y, out);
}

void write_reshape(Writer& w, const Node& n, const std::string& out, bool flatten) {
  const std::vector<int64_t>& in = w.graph().node(n.inputs[0].node).outputs[n.inputs[0].output].dims;
  if (flatten) {
    Writer::integer(w.node("Flatten", {w.name_of(n.inputs[0])}, {out}, n.name), "axis", 1);
    return;
  }
  // With a symbolic batch the graph was built at batch 1 with the batch leading, so dim 0 of
  // the input and of the output both carry it: kept as it is when the lengths agree (0:
  // ONNX's "copy this dim"), else inferred (-1: the batch merged with the next dims, as a
  // (B, T, D) -> (B*T, D) for one matmul over every step, or split back out of them).
  std::vector<int64_t> shape = n.outputs[0].dims;
  if (w.symbolic() && !shape.empty() && !in.empty()) shape[0] = shape[0] == in[0] ? 0 : -1;
  w.node("Reshape", {w.name_of(n.inputs[0]), w.int64s(shape, n.name + "/shape")}, {out}, n.name);
}

// A scalar constant of the node's output type (an f16 model's constants are f16).
std::string scalar(Writer& w, const Node& n, double v, const std::string& base) {
  return w.initializer(HostTensor::from_doubles(n.outputs[0].dtype, {v}, {}), base);
}

// x * f(x) for the activations ONNX's opset 17 lacks: silu (f = sigmoid) and mish (f =
// tanh(softplus)).
void write_gated(Writer& w, const Node& n, const std::string& out) {
  const std::string x = w.name_of(n.inputs[0]);
  std::string f = w.fresh(n.name + "/f");
  if (n.op == "silu") {
    w.node("Sigmoid", {x}, {f}, n.name + "/sigmoid");
  } else {
    const std::string sp = w.fresh(n.name + "/softplus");
    w.node("Softplus", {x}, {sp}, n.name + "/softplus");
    w.node("Tanh", {sp}, {f}, n.name + "/tanh");
  }
  w.node("Mul", {x, f}, {out}, n.name);
}

// gelu (ONNX has Gelu only from opset 20): x * (1 + erf(x / sqrt 2)) / 2, or the tanh form
// x * (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2.
void write_gelu(Writer& w, const Node& n, const std::string& out) {
  const std::string x = w.name_of(n.inputs[0]);
  const std::string inner = w.fresh(n.name + "/inner"), f = w.fresh(n.name + "/f"),
                    one_plus = w.fresh(n.name + "/1+f"), half_x = w.fresh(n.name + "/x/2");
  if (sattr(n, "approximate", "none") == "tanh") {
    const std::string x3 = w.fresh(n.name + "/x3"), cube = w.fresh(n.name + "/cube"),
                      sum = w.fresh(n.name + "/sum"), sq = w.fresh(n.name + "/x2");
    w.node("Mul", {x, x}, {sq}, n.name + "/x2");
    w.node("Mul", {sq, x}, {x3}, n.name + "/x3");
    w.node("Mul", {x3, scalar(w, n, 0.044715, n.name + "/c")}, {cube}, n.name + "/cube");
    w.node("Add", {x, cube}, {sum}, n.name + "/sum");
    w.node("Mul", {sum, scalar(w, n, std::sqrt(2.0 / M_PI), n.name + "/k")}, {inner}, n.name + "/inner");
    w.node("Tanh", {inner}, {f}, n.name + "/tanh");
  } else {
    w.node("Mul", {x, scalar(w, n, 1.0 / std::sqrt(2.0), n.name + "/k")}, {inner}, n.name + "/inner");
    w.node("Erf", {inner}, {f}, n.name + "/erf");
  }
  w.node("Add", {f, scalar(w, n, 1.0, n.name + "/one")}, {one_plus}, n.name + "/1+f");
  w.node("Mul", {x, scalar(w, n, 0.5, n.name + "/half")}, {half_x}, n.name + "/x/2");
  w.node("Mul", {half_x, one_plus}, {out}, n.name);
}

// pad -> Pad (opset 13+: pads and the constant as inputs; dlrt's pads are ONNX's layout,
// every dim's begin, then every dim's end).
void write_pad(Writer& w, const Node& n, const std::string& out) {
  const std::string mode = sattr(n, "mode", "constant");
  std::vector<std::string> in = {w.name_of(n.inputs[0]), w.int64s(iattrs(n, "pads"), n.name + "/pads")};
  if (mode == "constant") {
    const auto* v = attr(n, "value");
    in.push_back(scalar(w, n, v ? v->as_float() : 0.0, n.name + "/value"));
  }
  Writer::text(w.node("Pad", in, {out}, n.name), "mode", mode);
}

// split -> Split with the parts' lengths (opset 13+: an input), read off the node's outputs;
// each output gets its own name (the main loop names only output 0).
void write_split(Writer& w, const Node& n, const std::string& out) {
  const int64_t rank = static_cast<int64_t>(n.outputs[0].dims.size());
  int64_t axis = attr(n, "axis") ? attr(n, "axis")->as_int() : 0;
  if (axis < 0) axis += rank;
  std::vector<int64_t> sizes;
  std::vector<std::string> outs = {out};
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    sizes.push_back(n.outputs[k].dims.at(static_cast<size_t>(axis)));
    if (k == 0) continue;
    outs.push_back(w.fresh(fmt::format("{}_{}", n.name, k)));
    w.set_name({n.id, static_cast<uint32_t>(k)}, outs.back());
  }
  Writer::integer(w.node("Split", {w.name_of(n.inputs[0]), w.int64s(sizes, n.name + "/sizes")}, outs, n.name),
                  "axis", axis);
}

// attention -> softmax(q k^T * scale [+ causal mask]) v as MatMul, Mul, Add, Softmax, MatMul
// (ONNX's Attention is opset 23; the export is opset 17). The causal mask is a constant
// (Tq, Tk) of 0 and -inf, bottom-right aligned as dlrt's. The second output, the rows'
// log-sum-exp (ReduceLogSumExp of the scores), is written too; an exported prediction never
// reads it, and onnxruntime drops a node nothing reads.
void write_attention(Writer& w, const Node& n, const std::string& out) {
  const ValueRef qv = n.inputs[0];
  const std::vector<int64_t>& qd = w.graph().node(qv.node).outputs[qv.output].dims;
  const std::vector<int64_t>& kd = w.graph().node(n.inputs[1].node).outputs[n.inputs[1].output].dims;
  const size_t r = qd.size();
  const int64_t tq = qd[r - 2], tk = kd[r - 2];
  double scale = attr(n, "scale") ? attr(n, "scale")->as_float() : 0.0;
  if (scale == 0.0) scale = 1.0 / std::sqrt(static_cast<double>(qd[r - 1]));
  std::vector<int64_t> perm;
  for (size_t k = 0; k < r; ++k) perm.push_back(static_cast<int64_t>(k));
  std::swap(perm[r - 1], perm[r - 2]);
  const std::string kt = w.transpose(w.name_of(n.inputs[1]), perm, n.name + "/k");
  const std::string qk = w.fresh(n.name + "/qk"), scores = w.fresh(n.name + "/scores"),
                    probs = w.fresh(n.name + "/probs");
  w.node("MatMul", {w.name_of(qv), kt}, {qk}, n.name + "/qk");
  w.node("Mul", {qk, scalar(w, n, scale, n.name + "/scale")}, {scores}, n.name + "/scale");
  std::string s = scores;
  if (attr(n, "causal") && attr(n, "causal")->as_int() != 0) {
    std::vector<double> mask(static_cast<size_t>(tq * tk), 0.0);
    for (int64_t i = 0; i < tq; ++i)
      for (int64_t j = i + (tk - tq) + 1; j < tk; ++j)
        mask[static_cast<size_t>(i * tk + j)] = -std::numeric_limits<double>::infinity();
    s = w.fresh(n.name + "/masked");
    w.node("Add", {scores, w.initializer(HostTensor::from_doubles(n.outputs[0].dtype, mask, {tq, tk}),
                                         n.name + "/mask")},
           {s}, n.name + "/mask");
  }
  Writer::integer(w.node("Softmax", {s}, {probs}, n.name + "/softmax"), "axis", -1);
  w.node("MatMul", {probs, w.name_of(n.inputs[2])}, {out}, n.name);
  const std::string lse = w.fresh(n.name + "_lse");
  auto* l = w.node("ReduceLogSumExp", {s}, {lse}, n.name + "/lse");
  Writer::ints(l, "axes", {-1});
  Writer::integer(l, "keepdims", 0);
  w.set_name({n.id, 1}, lse);
}

// lstm_cell (one step; nn's LSTM unrolls them) -> z = zx + h U, Split into the gates
// [i, f, g, o], sigmoid/sigmoid/tanh/sigmoid, c' = f c + i g, h' = o tanh(c'); outputs h'
// (0), c' (1) and the gates' activations concatenated (2, what training saves).
void write_lstm_cell(Writer& w, const Node& n, const std::string& out) {
  const std::string b = n.name;
  auto v = [&](const char* what) { return w.fresh(b + "/" + what); };
  const std::string hu = v("hU"), z = v("z");
  w.node("MatMul", {w.name_of(n.inputs[1]), w.name_of(n.inputs[3])}, {hu}, b + "/hU");
  w.node("Add", {w.name_of(n.inputs[0]), hu}, {z}, b + "/z");
  const int64_t h = n.outputs[0].dims.at(1);
  const std::vector<std::string> pre = {v("zi"), v("zf"), v("zg"), v("zo")};
  Writer::integer(w.node("Split", {z, w.int64s({h, h, h, h}, b + "/gates")}, pre, b + "/split"), "axis", 1);
  const std::vector<std::string> act = {v("i"), v("f"), v("g"), v("o")};
  for (int k = 0; k < 4; ++k) w.node(k == 2 ? "Tanh" : "Sigmoid", {pre[k]}, {act[k]}, b + "/" + "ifgo"[k]);
  const std::string fc = v("fc"), ig = v("ig"), c_next = v("c_next"), tc = v("tanh_c"),
                    gates = v("act");
  w.node("Mul", {act[1], w.name_of(n.inputs[2])}, {fc}, b + "/fc");
  w.node("Mul", {act[0], act[2]}, {ig}, b + "/ig");
  w.node("Add", {fc, ig}, {c_next}, b + "/c_next");
  w.node("Tanh", {c_next}, {tc}, b + "/tanh_c");
  w.node("Mul", {act[3], tc}, {out}, b);
  Writer::integer(w.node("Concat", act, {gates}, b + "/act"), "axis", 1);
  w.set_name({n.id, 1}, c_next);
  w.set_name({n.id, 2}, gates);
}

using OpWriter = std::function<void(Writer&, const Node&, const std::string&)>;

const std::map<std::string, OpWriter>& writers() {
  static const std::map<std::string, OpWriter> table = [] {
    std::map<std::string, OpWriter> t;
    auto same = [&t](const char* dlrt_op, const char* onnx_op) {
      const std::string o = onnx_op;
      t[dlrt_op] = [o](Writer& w, const Node& n, const std::string& out) {
        std::vector<std::string> in;
        for (const ValueRef& v : n.inputs) in.push_back(w.name_of(v));
        w.node(o, in, {out}, n.name);
      };
    };
    for (auto [a, b] : {std::pair{"relu", "Relu"}, {"sigmoid", "Sigmoid"}, {"tanh", "Tanh"}, {"exp", "Exp"},
                        {"log", "Log"}, {"sqrt", "Sqrt"}, {"abs", "Abs"}, {"neg", "Neg"}, {"softplus", "Softplus"},
                        {"sin", "Sin"}, {"cos", "Cos"}, {"tan", "Tan"}, {"asin", "Asin"}, {"acos", "Acos"},
                        {"atan", "Atan"}, {"sinh", "Sinh"}, {"cosh", "Cosh"}, {"asinh", "Asinh"},
                        {"acosh", "Acosh"}, {"atanh", "Atanh"}, {"erf", "Erf"}, {"ceil", "Ceil"},
                        {"floor", "Floor"}, {"round", "Round"}, {"sign", "Sign"},
                        {"add", "Add"}, {"sub", "Sub"}, {"mul", "Mul"}, {"div", "Div"}, {"pow", "Pow"},
                        {"maximum", "Max"}, {"minimum", "Min"}, {"copy", "Identity"}, {"stop_gradient", "Identity"},
                        {"where", "Where"}, {"equal", "Equal"}, {"greater", "Greater"}, {"less", "Less"},
                        {"greater_equal", "GreaterOrEqual"}, {"less_equal", "LessOrEqual"}})
      same(a, b);
    // not_equal (what MultiHeadAttention's attention_mask becomes): Equal, then Not.
    t["not_equal"] = [](Writer& w, const Node& n, const std::string& out) {
      const std::string e = w.fresh(n.name + "/equal");
      w.node("Equal", {w.name_of(n.inputs[0]), w.name_of(n.inputs[1])}, {e}, n.name + "/equal");
      w.node("Not", {e}, {out}, n.name);
    };
    t["square"] = [](Writer& w, const Node& n, const std::string& out) {
      w.node("Mul", {w.name_of(n.inputs[0]), w.name_of(n.inputs[0])}, {out}, n.name);
    };
    t["rsqrt"] = [](Writer& w, const Node& n, const std::string& out) {
      const std::string s = w.fresh(n.name + "/sqrt");
      w.node("Sqrt", {w.name_of(n.inputs[0])}, {s}, n.name + "/sqrt");
      w.node("Reciprocal", {s}, {out}, n.name);
    };
    for (const char* a : {"leaky_relu", "elu"})
      t[a] = [](Writer& w, const Node& n, const std::string& out) {
        auto* o = w.node(n.op == "elu" ? "Elu" : "LeakyRelu", {w.name_of(n.inputs[0])}, {out}, n.name);
        Writer::real(o, "alpha", attr(n, "alpha")->as_float());
      };
    t["clip"] = [](Writer& w, const Node& n, const std::string& out) {
      const float lo = static_cast<float>(attr(n, "min")->as_float()), hi = static_cast<float>(attr(n, "max")->as_float());
      w.node("Clip", {w.name_of(n.inputs[0]), w.initializer(HostTensor::from_floats({lo}, {}), n.name + "/min"),
                      w.initializer(HostTensor::from_floats({hi}, {}), n.name + "/max")}, {out}, n.name);
    };
    for (const char* a : {"softmax", "log_softmax"})
      t[a] = [](Writer& w, const Node& n, const std::string& out) {
        auto* o = w.node(n.op == "softmax" ? "Softmax" : "LogSoftmax", {w.name_of(n.inputs[0])}, {out}, n.name);
        Writer::integer(o, "axis", attr(n, "axis")->as_int());
      };
    t["cast"] = [](Writer& w, const Node& n, const std::string& out) {
      Writer::integer(w.node("Cast", {w.name_of(n.inputs[0])}, {out}, n.name), "to",
                      onnx_from_dtype(attr(n, "dtype")->as_dtype()));
    };
    t["transpose"] = [](Writer& w, const Node& n, const std::string& out) {
      Writer::ints(w.node("Transpose", {w.name_of(n.inputs[0])}, {out}, n.name), "perm", iattrs(n, "perm"));
    };
    t["concat"] = [](Writer& w, const Node& n, const std::string& out) {
      std::vector<std::string> in;
      for (const ValueRef& v : n.inputs) in.push_back(w.name_of(v));
      Writer::integer(w.node("Concat", in, {out}, n.name), "axis", attr(n, "axis")->as_int());
    };
    t["bias_add"] = [](Writer& w, const Node& n, const std::string& out) {
      std::string b = w.name_of(n.inputs[1]);
      if (sattr(n, "data_format", "NHWC") == "NCHW") {
        const int64_t c = n.outputs[0].dims.at(1);
        std::vector<int64_t> shape(n.outputs[0].dims.size() - 1, 1);
        shape[0] = c;
        const std::string r = w.fresh(n.name + "/b");
        w.node("Reshape", {b, w.int64s(shape, n.name + "/bshape")}, {r}, n.name + "/b");
        b = r;
      }
      w.node("Add", {w.name_of(n.inputs[0]), b}, {out}, n.name);
    };
    for (const char* a : {"conv2d", "conv2d_bias_act"}) t[a] = write_conv;
    for (const char* a : {"max_pool2d", "avg_pool2d"}) t[a] = write_pool;
    for (const char* a : {"global_avg_pool2d", "global_max_pool2d"}) t[a] = write_global_pool;
    for (const char* a : {"matmul", "matmul_bias_act"}) t[a] = write_matmul;
    t["grid_sample"] = write_grid_sample;
    t["conv2d_transpose"] = write_conv_transpose;
    t["resize"] = write_resize;
    for (const char* a : {"silu", "mish"}) t[a] = write_gated;
    t["gelu"] = write_gelu;
    t["pad"] = write_pad;
    t["split"] = write_split;
    t["attention"] = write_attention;
    t["lstm_cell"] = write_lstm_cell;
    t["gather"] = [](Writer& w, const Node& n, const std::string& out) {  // Embedding's lookup
      Writer::integer(w.node("Gather", {w.name_of(n.inputs[0]), w.name_of(n.inputs[1])}, {out}, n.name),
                      "axis", 0);
    };
    t["batch_matmul"] = [](Writer& w, const Node& n, const std::string& out) {
      std::string a = w.name_of(n.inputs[0]), b = w.name_of(n.inputs[1]);
      auto last2 = [&](ValueRef v, const std::string& x) {
        const size_t r = w.graph().node(v.node).outputs[v.output].dims.size();
        std::vector<int64_t> perm;
        for (size_t k = 0; k < r; ++k) perm.push_back(static_cast<int64_t>(k));
        std::swap(perm[r - 1], perm[r - 2]);
        return w.transpose(x, perm, n.name);
      };
      if (attr(n, "transpose_a") && attr(n, "transpose_a")->as_bool()) a = last2(n.inputs[0], a);
      if (attr(n, "transpose_b") && attr(n, "transpose_b")->as_bool()) b = last2(n.inputs[1], b);
      w.node("MatMul", {a, b}, {out}, n.name);
    };
    t["reshape"] = [](Writer& w, const Node& n, const std::string& out) { write_reshape(w, n, out, false); };
    t["flatten"] = [](Writer& w, const Node& n, const std::string& out) { write_reshape(w, n, out, true); };
    t["batch_norm"] = [](Writer& w, const Node& n, const std::string& out) {
      const bool nhwc = sattr(n, "data_format", "NHWC") == "NHWC" && n.outputs[0].dims.size() == 4;
      const std::string x = nhwc ? w.transpose(w.name_of(n.inputs[0]), {0, 3, 1, 2}, n.name) : w.name_of(n.inputs[0]);
      const std::string y = w.fresh(n.name + "/bn");
      auto* b = w.node("BatchNormalization", {x, w.name_of(n.inputs[1]), w.name_of(n.inputs[2]),
                                              w.name_of(n.inputs[3]), w.name_of(n.inputs[4])}, {y}, n.name);
      Writer::real(b, "epsilon", attr(n, "epsilon")->as_float());
      std::string r = y;  // activation relu (nn's fused BatchNormalization + ReLU): a Relu node
      if (sattr(n, "activation", "none") == "relu") w.node("Relu", {y}, {r = w.fresh(n.name + "/relu")}, n.name + "/relu");
      if (nhwc) Writer::ints(w.node("Transpose", {r}, {out}, n.name + "/back"), "perm", {0, 2, 3, 1});
      else w.node("Identity", {r}, {out}, n.name + "/out");
    };
    for (const char* a : {"reduce_mean", "reduce_sum", "reduce_max"})
      t[a] = [](Writer& w, const Node& n, const std::string& out) {
        const std::string op = n.op == "reduce_mean" ? "ReduceMean" : n.op == "reduce_sum" ? "ReduceSum" : "ReduceMax";
        std::vector<std::string> in = {w.name_of(n.inputs[0])};
        const std::vector<int64_t> axes = iattrs(n, "axes");
        onnx::NodeProto* r = nullptr;
        if (op == "ReduceSum") {  // axes is an input since opset 13
          if (!axes.empty()) in.push_back(w.int64s(axes, n.name + "/axes"));
          r = w.node(op, in, {out}, n.name);
        } else {
          r = w.node(op, in, {out}, n.name);
          if (!axes.empty()) Writer::ints(r, "axes", axes);
        }
        Writer::integer(r, "keepdims", attr(n, "keepdims")->as_bool() ? 1 : 0);
      };
    t["argmax"] = [](Writer& w, const Node& n, const std::string& out) {
      const std::string y = w.fresh(n.name + "/i64");
      auto* a = w.node("ArgMax", {w.name_of(n.inputs[0])}, {y}, n.name);
      Writer::integer(a, "axis", attr(n, "axis")->as_int());
      Writer::integer(a, "keepdims", 0);
      Writer::integer(w.node("Cast", {y}, {out}, n.name + "/cast"), "to", onnx_from_dtype(n.outputs[0].dtype));
    };
    t["layer_norm"] = [](Writer& w, const Node& n, const std::string& out) {
      auto* l = w.node("LayerNormalization", {w.name_of(n.inputs[0]), w.name_of(n.inputs[1]), w.name_of(n.inputs[2])},
                       {out}, n.name);
      Writer::integer(l, "axis", attr(n, "axis")->as_int());
      Writer::real(l, "epsilon", attr(n, "epsilon")->as_float());
    };
    return t;
  }();
  return table;
}

onnx::ValueInfoProto* value_info(onnx::ValueInfoProto* v, const std::string& name, const ops::TensorType& t,
                                 bool symbolic) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx_from_dtype(t.dtype));
  auto* shape = tt->mutable_shape();
  for (size_t k = 0; k < t.dims.size(); ++k) {
    auto* d = shape->add_dim();
    if (k == 0 && symbolic) d->set_dim_param("N");
    else d->set_dim_value(t.dims[k]);
  }
  return v;
}

}  // namespace

std::string export_onnx_bytes(dlrt_graph& g, const std::vector<ExportIo>& inputs,
                              const std::vector<ExportIo>& outputs, bool symbolic_batch) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("dlrt");
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(17);
  onnx::GraphProto* gp = m.mutable_graph();
  gp->set_name("dlrt");
  Writer w(g, gp, symbolic_batch);

  for (const ExportIo& out : outputs) w.fresh(out.name);  // reserved: internal names avoid them
  std::set<core::NodeId> fed;
  for (const ExportIo& in : inputs) {
    const Node& n = g.node(in.value.node);
    if (n.kind != NodeKind::kPlaceholder)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("save_onnx: input '{}' is not a placeholder", n.name));
    fed.insert(n.id);
    w.set_name(in.value, in.name);
    w.fresh(in.name);
    value_info(gp->add_input(), in.name, n.outputs[0], symbolic_batch);
  }
  // The nodes the outputs need, in graph order (the node list is topological).
  std::set<core::NodeId> needed;
  std::vector<core::NodeId> stack;
  for (const ExportIo& out : outputs) stack.push_back(out.value.node);
  while (!stack.empty()) {
    const core::NodeId id = stack.back();
    stack.pop_back();
    if (!needed.insert(id).second || fed.count(id) != 0) continue;
    for (const ValueRef& v : g.node(id).inputs) stack.push_back(v.node);
  }
  for (core::NodeId id : needed) {
    const Node& n = g.node(id);
    if (fed.count(id) != 0) continue;
    switch (n.kind) {
      case NodeKind::kPlaceholder:
        fail(DLRT_INVALID_ARGUMENT,
             fmt::format("save_onnx: the outputs read placeholder '{}', which is not an input", n.name));
      case NodeKind::kConstant:
      case NodeKind::kVariable:
        continue;  // written when a node reads it (Writer::name_of)
      case NodeKind::kOp:
        break;
    }
    auto it = writers().find(n.op);
    if (it == writers().end()) unmapped(n, "no ONNX form for this dlrt op yet");
    // Ops of several outputs whose writer names every output they write; layer_norm's
    // statistics (outputs 1, 2) are read only by training, never by an exported prediction.
    static const std::set<std::string> several = {"layer_norm", "split", "attention", "lstm_cell"};
    if (n.outputs.size() != 1 && several.count(n.op) == 0)
      unmapped(n, "ops of several outputs are not exported yet");
    const std::string out = w.fresh(n.name);
    w.set_name({id, 0}, out);
    it->second(w, n, out);
  }
  for (const ExportIo& out : outputs) {
    const Node& n = g.node(out.value.node);
    w.node("Identity", {w.name_of(out.value)}, {out.name}, out.name + "/output");
    value_info(gp->add_output(), out.name, n.outputs[out.value.output], symbolic_batch);
  }
  return m.SerializeAsString();
}

}  // namespace dlrt::onnx_import
