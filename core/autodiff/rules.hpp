// rules.hpp: what a gradient rule sees and how it adds nodes (internal to core/autodiff).
//
// A rule turns the gradients of one forward node's outputs (dy) into gradients of its inputs
// (dx), by adding ordinary ops to the same graph through a GradContext. The context names the
// new nodes "gradients/<forward node>/<what>", marks them is_gradient and gives them the
// forward node's requested device, so a rule only says *what* to compute.
//
// Rules live in rules_nn.cc (conv, pool, matmul, activations, softmax, losses, dropout) and
// rules_math.cc (elementwise arithmetic with broadcasting, reductions, shapes, copies, casts).
// A rule builds only the input gradients that are needed (ctx.needs(i)): an input the wrt
// values do not reach, or an integer input, gets nothing.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace dlrt::core::autodiff {

using MaybeValue = std::optional<ValueRef>;

class GradContext {
 public:
  // `forward` is a copy (adding nodes may move the graph's node vector); `dy[k]` is the
  // gradient of output k or nullopt when no gradient reaches it; `needs[i]` says whether
  // input i wants a gradient.
  GradContext(Graph& graph, Node forward, std::vector<MaybeValue> dy, std::vector<bool> needs);

  const Node& node() const { return fwd_; }
  const std::string& op() const { return fwd_.op; }
  ValueRef input(int i) const { return fwd_.inputs.at(i); }
  ValueRef output(int k) const { return {fwd_.id, uint32_t(k)}; }
  const ops::Dims& in_dims(int i) const { return graph_.type_of(input(i)).dims; }
  const ops::TensorType& in_type(int i) const { return graph_.type_of(input(i)); }
  bool needs(int i) const { return needs_.at(i); }

  // Gradient of output k, or nullopt.
  const MaybeValue& dy(int k) const { return dy_.at(k); }
  // Gradient of output k, or zeros of its type when none reached it.
  ValueRef dy_or_zeros(int k);

  // Forward attributes (complete: defaults filled by the registry).
  const ops::AttrMap& attrs() const { return fwd_.attrs; }
  const ops::AttrValue& attr(const std::string& name) const;
  // The forward attributes without the named ones (e.g. conv2d_bias_act's "activation"
  // before handing the rest to conv2d_backward_*).
  ops::AttrMap attrs_without(std::initializer_list<const char*> names) const;

  // ---- building ----------------------------------------------------------------------------
  // Adds `op` as node "gradients/<forward>/<what>" (made unique by the graph) on the forward
  // node's requested device; returns its outputs.
  std::vector<ValueRef> emit_all(const std::string& op, const std::string& what,
                                 const std::vector<ValueRef>& inputs,
                                 const ops::AttrMap& attrs = {});
  ValueRef emit(const std::string& op, const std::string& what, const std::vector<ValueRef>& inputs,
                const ops::AttrMap& attrs = {}) {
    return emit_all(op, what, inputs, attrs).front();
  }
  const ops::TensorType& type_of(ValueRef v) const { return graph_.type_of(v); }
  // The node that computes `v` (a dy, say: which backward op made it).
  const Node& producer(ValueRef v) const { return graph_.node(v.node); }
  // How many inputs of the forward graph's ops (gradient nodes not counted) read `v`: 1 when
  // the op being differentiated is its only reader.
  int forward_readers(ValueRef v) const;
  ValueRef fill(const ops::TensorType& type, double value, const std::string& what);
  // `g` (shape G, the broadcast shape) summed down to `target` (NumPy broadcasting run
  // backwards): reduce_sum over the leading axes G has and target lacks, and over the axes
  // where target is 1 and G is not, then reshape. Returns g itself when nothing is needed.
  ValueRef sum_to(ValueRef g, const ops::Dims& target, const std::string& what);
  // `g` reshaped to `dims` (no node when it already has them).
  ValueRef reshape_to(ValueRef g, const ops::Dims& dims, const std::string& what);

  // ---- results -----------------------------------------------------------------------------
  void set_dx(int i, ValueRef g);  // ignored unless needs(i)
  const std::vector<MaybeValue>& dx() const { return dx_; }

 private:
  Graph& graph_;
  Node fwd_;
  std::vector<MaybeValue> dy_;
  std::vector<bool> needs_;
  std::vector<MaybeValue> dx_;
};

// Adds `op` as node "gradients/<forward.name>/<what>" (made unique by the graph), marked
// is_gradient, with `forward`'s requested device. For the nodes gradients() adds outside any
// rule (the seed, sums of several contributions, zeros); rules use GradContext::emit.
std::vector<ValueRef> emit_gradient_op(Graph& graph, const Node& forward, const std::string& op,
                                       const std::string& what, const std::vector<ValueRef>& inputs,
                                       const ops::AttrMap& attrs);

// A rule: reads ctx.dy(...), calls ctx.set_dx(i, ...) for the needed inputs.
using GradFn = void (*)(GradContext& ctx);
using RuleTable = std::map<std::string, GradFn, std::less<>>;

void add_nn_rules(RuleTable& table);
void add_math_rules(RuleTable& table);
void add_math_unary_rules(RuleTable& table);  // sin ... atanh, erf, ceil, floor, round, sign
void add_shape_op_rules(RuleTable& table);  // concat, split, slice, pad, global pools

// Every rule, built once.
const RuleTable& rules();

// Why an op has no rule, for the UNIMPLEMENTED message: the op schema's OpDef::no_gradient
// ("" when there is nothing to add).
std::string why_no_rule(const std::string& op);

// Shared by the fused ops (conv2d_bias_act, matmul_bias_act): the gradient at the
// pre-activation z from dy and the op's output y = act(z): relu_grad(dy, y) (y > 0 iff z > 0),
// sigmoid_grad(dy, y), tanh_grad(dy, y), or dy itself for "none".
ValueRef activation_input_grad(GradContext& ctx, ValueRef dy, ValueRef y);

}  // namespace dlrt::core::autodiff
