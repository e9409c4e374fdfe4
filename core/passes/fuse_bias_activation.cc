// fuse_bias_activation.cc: the pass fuse_bias_activation (passes.hpp). Two rewrites, applied in
// node order so that a chain folds left to right (conv2d -> bias_add -> relu: the bias_add
// becomes conv2d_bias_act, then the relu becomes conv2d_bias_act with activation relu):
//
//   bias_add(conv2d(x, w), b)               => conv2d_bias_act(x, w, b)     same data_format
//   bias_add(matmul(a, b), c)               => matmul_bias_act(a, b, c)     (M,N) + (N)
//   relu | sigmoid | tanh of an op with activation "none"
//     conv2d_bias_act, matmul_bias_act      => the op with that activation
//     batch_norm (inference)                => batch_norm with activation relu (relu only)
//
// The anchor is the last node of the pattern (the bias_add, the activation): it becomes the
// fused op under its own id, so what read it reads the fused value.
#include <fmt/format.h>

#include <string>

#include "passes/pass_list.hpp"

namespace dlrt::core::passes {

namespace {

bool linear(const Node& n) {
  auto it = n.attrs.find("activation");
  return it == n.attrs.end() || it->second.as_string() == "none";
}

// bias_add `anchor` over a conv2d or matmul that nothing else reads.
bool fuse_bias(Rewrite& rw, NodeId anchor) {
  const Node& a = rw.node(anchor);
  const ValueRef x = a.inputs.at(0);
  if (!rw.read_only_by(x, anchor)) return false;
  const Node& p = rw.node(x.node);
  std::string op;
  if (p.op == "conv2d" && p.attrs.at("data_format") == a.attrs.at("data_format"))
    op = "conv2d_bias_act";
  else if (p.op == "matmul" && rw.graph().type_of(x).rank() == 2) op = "matmul_bias_act";
  else return false;
  ops::AttrMap attrs = p.attrs;
  attrs["activation"] = std::string("none");
  const std::string before = rw.describe(x.node) + " + " + rw.describe(anchor);
  const std::vector<ValueRef> inputs = {p.inputs.at(0), p.inputs.at(1), a.inputs.at(1)};
  if (!rw.replace_with_op(anchor, op, inputs, attrs, {x.node, anchor})) return false;
  rw.log(fmt::format("fuse_bias_activation: {} -> {} ({})", before, rw.node(anchor).name, op));
  return true;
}

// relu / sigmoid / tanh `anchor` over a fusable op with no activation that nothing else reads.
bool fuse_activation(Rewrite& rw, NodeId anchor) {
  const Node& a = rw.node(anchor);
  const ValueRef x = a.inputs.at(0);
  if (!rw.read_only_by(x, anchor)) return false;
  const Node& p = rw.node(x.node);
  const bool takes_any = p.op == "conv2d_bias_act" || p.op == "matmul_bias_act";
  const bool takes_relu = p.op == "batch_norm" && a.op == "relu";
  if ((!takes_any && !takes_relu) || !linear(p)) return false;
  ops::AttrMap attrs = p.attrs;
  attrs["activation"] = a.op;
  const std::string op = p.op, act = a.op;
  const std::string before = rw.describe(x.node) + " + " + rw.describe(anchor);
  const std::vector<ValueRef> inputs = p.inputs;
  if (!rw.replace_with_op(anchor, op, inputs, attrs, {x.node, anchor})) return false;
  rw.log(fmt::format("fuse_bias_activation: {} -> {} ({}, activation {})", before,
                     rw.node(anchor).name, op, act));
  return true;
}

}  // namespace

void fuse_bias_activation(Rewrite& rw) {
  for (NodeId id : rw.live()) {
    if (!rw.is_live(id)) continue;  // an earlier fusion made it dead
    const Node& n = rw.node(id);
    if (n.kind != NodeKind::kOp) continue;
    if (n.op == "bias_add") fuse_bias(rw, id);
    else if (n.op == "relu" || n.op == "sigmoid" || n.op == "tanh") fuse_activation(rw, id);
  }
}

}  // namespace dlrt::core::passes
