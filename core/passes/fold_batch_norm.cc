// fold_batch_norm.cc: the pass fold_batch_norm (passes.hpp). An inference batch_norm whose
// input is a linear convolution or matmul that nothing else reads (directly, or through a
// bias_add that only it reads) becomes that convolution (matmul) with the normalisation folded
// into its weights and bias:
//
//   s     = rsqrt(var + epsilon) * gamma          (C)
//   shift = -(mean * s) + beta                    (C)
//   w'    = w * s         conv: w (KH,KW,Ci/groups,C); matmul: b (K,C) — C is always last
//   b'    = b * s + shift (or shift when the producer had no bias)
//   y     = conv2d_bias_act(x, w', b') / matmul_bias_act(a, w', b'), the batch norm's activation
//
// The helpers are ops, so the fold follows the variables on every run (a model evaluated
// between training epochs) and, on constants (an imported model), fold_constants turns them
// into constants at compile. The op sequence is the one nn's BatchNormalization used, so the
// folded result is the same to the bit.
#include <fmt/format.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "passes/pass_list.hpp"
#include "status.hpp"

namespace dlrt::core::passes {

namespace {

bool all_f32(const Graph& g, const std::vector<ValueRef>& values) {
  for (ValueRef v : values)
    if (g.type_of(v).dtype != DLRT_F32) return false;
  return true;
}

const std::string& attr_string(const Node& n, const char* name) {
  return n.attrs.at(name).as_string();
}

// Folds batch norm `bn` into its producer when the pattern holds; true when it did.
bool fold_one(Rewrite& rw, NodeId bn) {
  const Node& b = rw.node(bn);
  if (b.inputs.size() != 5 || attr_string(b, "activation") == "sigmoid") return false;
  const ValueRef x = b.inputs[0];
  if (!rw.read_only_by(x, bn)) return false;
  // The producer: a linear conv or matmul, or a bias_add over one that only it reads (a bias
  // the importer or a user added as its own op; fuse_bias_activation runs later).
  std::vector<NodeId> pattern = {x.node, bn};
  NodeId producer = x.node;
  std::optional<ValueRef> added_bias;
  if (rw.node(x.node).kind == NodeKind::kOp && rw.node(x.node).op == "bias_add") {
    const Node& add = rw.node(x.node);
    if (!rw.read_only_by(add.inputs[0], x.node)) return false;
    if (add.attrs.at("data_format") != b.attrs.at("data_format")) return false;
    producer = add.inputs[0].node;
    added_bias = add.inputs[1];
    pattern.insert(pattern.begin(), producer);
  }
  const Node& p = rw.node(producer);
  if (p.kind != NodeKind::kOp || !rw.is_live(producer)) return false;
  const int rank = rw.graph().type_of(x).rank();
  const bool conv = p.op == "conv2d" || p.op == "conv2d_bias_act";
  const bool dense = p.op == "matmul" || p.op == "matmul_bias_act";
  if (!conv && !dense) return false;
  if (!has_no_activation(p)) return false;
  if (conv && (rank != 4 || attr_string(p, "data_format") != attr_string(b, "data_format")))
    return false;
  if (dense && (rank != 2 || p.attrs.at("transpose_b").as_bool())) return false;
  const bool own_bias = p.op == "conv2d_bias_act" || p.op == "matmul_bias_act";
  if (own_bias && added_bias) return false;  // two biases: leave it
  std::vector<ValueRef> values = {x, b.inputs[1], b.inputs[2], b.inputs[3], b.inputs[4]};
  values.push_back(p.inputs[1]);
  std::optional<ValueRef> bias_in = added_bias;
  if (own_bias) bias_in = p.inputs[2];
  if (bias_in) values.push_back(*bias_in);
  if (!all_f32(rw.graph(), values)) return false;

  // Copies: the helpers below append nodes, which may move the node list.
  const std::vector<ValueRef> bn_in = b.inputs, p_in = p.inputs;
  const ops::AttrMap p_attrs = p.attrs;
  const std::string activation = attr_string(b, "activation");
  const float eps = static_cast<float>(b.attrs.at("epsilon").as_float());
  std::string before;
  for (NodeId id : pattern) before += (before.empty() ? "" : " + ") + rw.describe(id);
  try {
    std::vector<uint8_t> eps_bytes(sizeof eps);
    std::memcpy(eps_bytes.data(), &eps, sizeof eps);
    const ValueRef e = rw.helper_constant(bn, "epsilon", {DLRT_F32, {}}, std::move(eps_bytes));
    ValueRef s =
        rw.helper(bn, "inv_std", "rsqrt", {rw.helper(bn, "var_eps", "add", {bn_in[4], e})});
    s = rw.helper(bn, "scale", "mul", {s, bn_in[1]});
    ValueRef shift =
        rw.helper(bn, "neg_mean_scale", "neg", {rw.helper(bn, "mean_scale", "mul", {bn_in[3], s})});
    shift = rw.helper(bn, "shift", "add", {shift, bn_in[2]});
    const ValueRef w = rw.helper(bn, "folded_kernel", "mul", {p_in[1], s});
    const ValueRef bias =
        bias_in ? rw.helper(bn, "folded_bias", "add",
                            {rw.helper(bn, "bias_scale", "mul", {*bias_in, s}), shift})
                : shift;
    ops::AttrMap attrs = p_attrs;
    attrs["activation"] = activation;
    const std::string op = conv ? "conv2d_bias_act" : "matmul_bias_act";
    if (!rw.replace_with_op(bn, op, {p_in[0], w, bias}, attrs, pattern)) return false;
    rw.log(fmt::format("fold_batch_norm: {} -> {} ({}, activation {})", before, rw.node(bn).name,
                       op, activation));
    return true;
  } catch (const Error&) {
    return false;  // a helper the registry refuses: leave the pattern as built
  }
}

// An affine op after an inference batch_norm, folded into the batch norm's scale and bias:
// `op` (mul, add, sub, div: the batch norm's output first, then t) on the batch norm's output
// y = scale * xhat + bias and a per-channel or single number t:
//   mul: scale * t, bias * t      add: scale, bias + t
//   div: scale / t, bias / t      sub: scale, bias - t
// (A model exported with its batch norms' scale and shift as Mul and Add after a
// BatchNormalization, as densenet's light model is: three passes over the activations become
// none, and the relu after them fuses into the batch norm.) The batch norm must have no
// activation yet, be NHWC or (N,C) (its channels last, so t of dims (C) is per channel), and
// be read only by `m`. True when it folded.
bool absorb_affine(Rewrite& rw, NodeId m) {
  // Copies: the helpers below append nodes, which may move the node list.
  const std::string op = rw.node(m).op;
  const std::vector<ValueRef> m_in = rw.node(m).inputs;
  const bool scales = op == "mul" || op == "div";
  if (m_in.size() != 2 || !(scales || op == "add" || op == "sub")) return false;
  // The batch norm's output: either operand of mul and add, the first of sub and div.
  for (size_t side = 0; side < 2; ++side) {
    if (side == 1 && (op == "sub" || op == "div")) break;
    const ValueRef y = m_in[side], t = m_in[1 - side];
    const Node& b = rw.node(y.node);
    if (b.kind != NodeKind::kOp || b.op != "batch_norm" || !rw.is_live(y.node)) continue;
    if (b.inputs.size() != 5 || attr_string(b, "activation") != "none") continue;
    if (!rw.read_only_by(y, m)) continue;
    const ops::TensorType yt = rw.graph().type_of(y), tt = rw.graph().type_of(t);
    if (yt.rank() == 4 && attr_string(b, "data_format") != "NHWC") continue;
    const int64_t channels = yt.dims.back();
    const bool per_channel = tt.dims.empty() || tt.dims == std::vector<int64_t>{1} ||
                             tt.dims == std::vector<int64_t>{channels};
    if (!per_channel || !all_f32(rw.graph(), {y, t})) continue;

    const std::vector<ValueRef> bn_in = b.inputs;
    const ops::AttrMap bn_attrs = b.attrs;
    const std::string before = rw.describe(y.node) + " + " + rw.describe(m);
    try {
      ValueRef scale = bn_in[1], bias = bn_in[2];
      if (scales) scale = rw.helper(m, "affine_scale", op, {scale, t});
      bias = rw.helper(m, "affine_bias", op, {bias, t});
      if (!rw.replace_with_op(m, "batch_norm", {bn_in[0], scale, bias, bn_in[3], bn_in[4]},
                              bn_attrs, {y.node, m}))
        return false;
      rw.log(fmt::format("fold_batch_norm: {} -> {} (batch_norm, the {} folded into its {})",
                         before, rw.node(m).name, op, scales ? "scale and bias" : "bias"));
      return true;
    } catch (const Error&) {
      return false;
    }
  }
  return false;
}

}  // namespace

void fold_batch_norm(Rewrite& rw) {
  // First the affine ops after batch norms (a chain mul -> add folds one op at a time: the
  // anchor becomes the batch norm the next one reads), then the batch norms into their convs.
  for (NodeId id : rw.live()) {
    const Node& n = rw.node(id);
    if (n.kind == NodeKind::kOp && rw.is_live(id)) absorb_affine(rw, id);
  }
  for (NodeId id : rw.live()) {
    const Node& n = rw.node(id);
    if (n.kind == NodeKind::kOp && n.op == "batch_norm" && rw.is_live(id)) fold_one(rw, id);
  }
}

}  // namespace dlrt::core::passes
