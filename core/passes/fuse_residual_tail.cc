// fuse_residual_tail.cc: the pass fuse_residual_tail (passes.hpp). A residual block's tail in a
// training step, relu(add(batch_norm_train(x), shortcut)), becomes one op that reads the
// activations once, batch_norm_add_relu_train, and its backward one op that also gives the
// shortcut's gradient, batch_norm_add_relu_grad:
//
//   F: y = batch_norm_train(x, scale, bias, mean, var)  =>  F: y' = batch_norm_add_relu_train(
//                                                               x, s, scale, bias, mean, var)
//   A: t = add(y, s)          (or add(s, y))            =>  (dead)
//   R: r = relu(t)                                      =>  R's readers read y'
//   G: dt = relu_grad(dr, t)                            =>  (dead)
//   B: dx, ds, db = batch_norm_grad(dt, x, scale, ...)  =>  N: dx, ds, db, dres =
//   (the shortcut's gradient is dt itself: add's rule)      batch_norm_add_relu_grad(dr, y',
//                                                               x, scale, saved_mean, ...)
// B's and G's readers read N's outputs. F is the anchor (the assigns read its running
// statistics, outputs 1 and 2, which keep their meaning); N is a helper ordered before B.
// Where the backward does not fit (no B, or a gradient is fetched), G stays and reads y'
// instead of t: relu_grad's mask t > 0 is y' > 0. Where R's value is fetched, R stays and
// reads y' (relu of a non-negative value is itself).
//
// Matches only an add of two distinct values of one shape (no broadcasting), y read by
// nothing but the add, t by nothing but R and G. Inference steps run batch_norm, not
// batch_norm_train, and do not match: there fold_batch_norm folds the normalisation away.
#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "passes/pass_list.hpp"

namespace dlrt::core::passes {

namespace {

// The batch_norm_train whose y is input `k` of add node `a` and is read by nothing else.
std::optional<NodeId> batch_norm_input(const Rewrite& rw, NodeId a, size_t k) {
  const ValueRef y = rw.node(a).inputs.at(k);
  const Node& n = rw.node(y.node);
  if (n.kind != NodeKind::kOp || n.op != "batch_norm_train" || y.output != 0 ||
      !has_no_activation(n) || !rw.read_only_by(y, a))
    return std::nullopt;
  return y.node;
}

bool fuse_tail(Rewrite& rw, NodeId r) {
  const ValueRef t = rw.node(r).inputs.at(0);
  const NodeId a = t.node;
  const Node& add = rw.node(a);
  if (add.kind != NodeKind::kOp || add.op != "add" || add.inputs.size() != 2 ||
      add.inputs[0] == add.inputs[1] || rw.read_by_root(t))
    return false;
  const ops::TensorType& type = rw.graph().type_of(t);
  if (!(rw.graph().type_of(add.inputs[0]) == type) || !(rw.graph().type_of(add.inputs[1]) == type))
    return false;
  size_t k = 0;
  std::optional<NodeId> found = batch_norm_input(rw, a, 0);
  if (!found) found = batch_norm_input(rw, a, k = 1);
  if (!found) return false;
  const NodeId f = *found;
  const ValueRef shortcut = add.inputs[1 - k];
  // t's readers: R and at most one relu_grad(dr, t), G.
  std::optional<NodeId> g;
  for (NodeId reader : rw.readers(t)) {
    if (reader == r) continue;
    const Node& n = rw.node(reader);
    if (g || n.op != "relu_grad" || n.inputs.at(1) != t || n.inputs.at(0) == t) return false;
    g = reader;
  }
  const Node& bn = rw.node(f);
  const ops::AttrMap fused_attrs = {{"epsilon", bn.attrs.at("epsilon")},
                                    {"momentum", bn.attrs.at("momentum")},
                                    {"data_format", bn.attrs.at("data_format")}};
  const std::vector<ValueRef> fused_inputs = {bn.inputs.at(0), shortcut,        bn.inputs.at(1),
                                              bn.inputs.at(2), bn.inputs.at(3), bn.inputs.at(4)};
  if (!rw.can_replace(f, "batch_norm_add_relu_train", fused_inputs, fused_attrs, {f, a, r}))
    return false;
  // B: G's reader batch_norm_grad(dt, x, scale, F:3, F:4); the other readers of dt take the
  // shortcut's gradient. None of B's outputs nor dt may be fetched.
  const ValueRef y{f, 0};
  NodeId b = 0;  // meaningful when `backward_fuses`
  bool backward_fuses = false;
  std::vector<ValueRef> grad_inputs;
  const ops::AttrMap grad_attrs = {{"epsilon", bn.attrs.at("epsilon")},
                                   {"data_format", bn.attrs.at("data_format")}};
  if (g && !rw.read_by_root(ValueRef{*g, 0})) {
    const std::vector<ValueRef> expect = {ValueRef{*g, 0}, bn.inputs.at(0), bn.inputs.at(1),
                                          ValueRef{f, 3}, ValueRef{f, 4}};
    for (NodeId reader : rw.readers(ValueRef{*g, 0})) {
      const Node& n = rw.node(reader);
      if (n.op != "batch_norm_grad" || n.inputs != expect) continue;
      bool fetched = false;
      for (size_t i = 0; i < n.outputs.size(); ++i)
        fetched = fetched || rw.read_by_root(ValueRef{reader, uint32_t(i)});
      b = reader;
      backward_fuses = !fetched;
      break;
    }
    grad_inputs = {rw.node(*g).inputs.at(0), y,
                   bn.inputs.at(0),          bn.inputs.at(1),
                   ValueRef{f, 3},           ValueRef{f, 4}};
    backward_fuses =
        backward_fuses && rw.can_fuse({*g, b}, "batch_norm_add_relu_grad", grad_inputs, grad_attrs);
  }
  const std::string before = rw.describe(f) + " + " + rw.describe(a) + " + " + rw.describe(r);
  if (!rw.replace_with_op(f, "batch_norm_add_relu_train", fused_inputs, fused_attrs, {f, a, r}))
    return false;
  if (!rw.redirect(ValueRef{r, 0}, y)) rw.replace_with_op(r, "relu", {y}, {}, {r});
  std::string backward;
  if (backward_fuses) {
    const ValueRef n =
        rw.helper(b, "add_relu_grad", "batch_norm_add_relu_grad", grad_inputs, grad_attrs);
    for (uint32_t i = 0; i < 3; ++i) rw.redirect(ValueRef{b, i}, ValueRef{n.node, i});
    // B reads dt no longer (nothing reads B now): dt's readers left take the shortcut's
    // gradient.
    rw.redirect(ValueRef{*g, 0}, ValueRef{n.node, 3});
    backward = fmt::format("; backward {} + {} -> {} (batch_norm_add_relu_grad)", rw.describe(*g),
                           rw.describe(b), rw.node(n.node).name);
  } else if (g) {
    const Node& grad = rw.node(*g);
    rw.replace_with_op(*g, "relu_grad", {grad.inputs.at(0), y}, grad.attrs, {*g});
  }
  rw.log(fmt::format("fuse_residual_tail: {} -> {} (batch_norm_add_relu_train){}", before,
                     rw.node(f).name, backward));
  return true;
}

}  // namespace

void fuse_residual_tail(Rewrite& rw) {
  for (NodeId id : rw.live()) {
    if (!rw.is_live(id)) continue;  // an earlier fusion made it dead
    const Node& n = rw.node(id);
    if (n.kind == NodeKind::kOp && n.op == "relu") fuse_tail(rw, id);
  }
}

}  // namespace dlrt::core::passes
