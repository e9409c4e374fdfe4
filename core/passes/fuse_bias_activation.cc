// fuse_bias_activation.cc: the pass fuse_bias_activation (passes.hpp). Two rewrites, applied in
// node order so that a chain folds left to right (conv2d -> bias_add -> relu: the bias_add
// becomes conv2d_bias_act, then the relu becomes conv2d_bias_act with activation relu):
//
//   bias_add(conv2d(x, w), b)               => conv2d_bias_act(x, w, b)     same data_format
//   bias_add(matmul(a, b), c)               => matmul_bias_act(a, b, c)     (M,N) + (N)
//   relu | sigmoid | tanh of an op with activation "none"
//     conv2d_bias_act, matmul_bias_act      => the op with that activation
//     batch_norm (inference)                => batch_norm with activation relu (relu only)
//   relu of batch_norm_train (a training step) => batch_norm_train with activation relu,
//     and its backward relu_grad -> batch_norm_grad => batch_norm_relu_grad
//
// The anchor is the last node of the pattern (the bias_add, the activation): it becomes the
// fused op under its own id, so what read it reads the fused value. batch_norm_train is the
// exception: its outputs 1-4 (running and saved statistics) are read by the executable's
// assigns and by the backward ops, so the batch norm itself is the anchor, and the ReLU's
// readers are moved to it.
#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "passes/pass_list.hpp"

namespace dlrt::core::passes {

namespace {

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
  if ((!takes_any && !takes_relu) || !has_no_activation(p)) return false;
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

// relu `anchor` over output 0 of a batch_norm_train F (activation none). In a training step
// F's y has two readers: the ReLU and the ReLU's gradient G = relu_grad(dr, y), whose result
// feeds F's gradient B = batch_norm_grad(G, x, scale, saved_mean, saved_inv_std):
//
//   F: y = batch_norm_train(x, scale, bias, mean, var)   =>  F: y' = relu(y), same op, fused
//   R: r = relu(y)                                       =>  R's readers read y'
//   G: dy = relu_grad(dr, y)                             =>  (dead)
//   B: dx, ds, db = batch_norm_grad(dy, x, scale, ...)   =>  B: batch_norm_relu_grad(dr, x,
//                                                             scale, bias, ...)
// relu_grad's mask y > 0 is y' > 0, so where B does not fit the pattern (or R's value is
// fetched) G and R may stay and read y': the result is the same.
bool fuse_batch_norm_train_relu(Rewrite& rw, NodeId anchor) {
  const ValueRef y = rw.node(anchor).inputs.at(0);
  const NodeId f = y.node;
  const Node& bn = rw.node(f);
  if (bn.kind != NodeKind::kOp || bn.op != "batch_norm_train" || y.output != 0 ||
      !has_no_activation(bn) || rw.read_by_root(y))
    return false;
  std::optional<NodeId> g;
  for (NodeId r : rw.readers(y)) {
    if (r == anchor) continue;
    const Node& n = rw.node(r);
    if (g || n.op != "relu_grad" || n.inputs.at(1) != y || n.inputs.at(0) == y) return false;
    g = r;
  }
  // B, when G's only reader is F's gradient op over exactly F's operands.
  std::optional<NodeId> b;
  std::vector<ValueRef> b_inputs;
  ops::AttrMap b_attrs;
  if (g) {
    if (std::optional<NodeId> reader = rw.sole_reader(ValueRef{*g, 0})) {
      const Node& n = rw.node(*reader);
      const std::vector<ValueRef> expect = {ValueRef{*g, 0}, bn.inputs.at(0), bn.inputs.at(1),
                                            ValueRef{f, 3}, ValueRef{f, 4}};
      b_attrs = {{"epsilon", bn.attrs.at("epsilon")}, {"data_format", bn.attrs.at("data_format")}};
      b_inputs = {rw.node(*g).inputs.at(0), bn.inputs.at(0), bn.inputs.at(1),
                  bn.inputs.at(2),          ValueRef{f, 3},  ValueRef{f, 4}};
      if (n.op == "batch_norm_grad" && n.inputs == expect &&
          rw.can_replace(*reader, "batch_norm_relu_grad", b_inputs, b_attrs, {*g, *reader}))
        b = reader;
    }
  }
  ops::AttrMap attrs = bn.attrs;
  attrs["activation"] = std::string("relu");
  const std::vector<ValueRef> inputs = bn.inputs;
  const std::string before = rw.describe(f) + " + " + rw.describe(anchor);
  if (!rw.replace_with_op(f, "batch_norm_train", inputs, attrs, {f, anchor})) return false;
  rw.redirect(ValueRef{anchor, 0}, y);  // refused when fetched: the ReLU stays, reading y'
  std::string backward;
  if (b) {
    backward = "; backward " + rw.describe(*g) + " + " + rw.describe(*b) + " -> " +
               rw.node(*b).name + " (batch_norm_relu_grad)";
    rw.replace_with_op(*b, "batch_norm_relu_grad", b_inputs, b_attrs, {*g, *b});
  }
  rw.log(fmt::format("fuse_bias_activation: {} -> {} (batch_norm_train, activation relu){}", before,
                     rw.node(f).name, backward));
  return true;
}

}  // namespace

void fuse_bias_activation(Rewrite& rw) {
  for (NodeId id : rw.live()) {
    if (!rw.is_live(id)) continue;  // an earlier fusion made it dead
    const Node& n = rw.node(id);
    if (n.kind != NodeKind::kOp) continue;
    if (n.op == "bias_add") fuse_bias(rw, id);
    else if (n.op == "relu" || n.op == "sigmoid" || n.op == "tanh") {
      const bool relu = n.op == "relu";
      if (!fuse_activation(rw, id) && relu) fuse_batch_norm_train_relu(rw, id);
    }
  }
}

}  // namespace dlrt::core::passes
