// autodiff.cc: reverse-mode gradients as ops in the same graph (see autodiff.hpp).
//
// The walk, in three passes over the append-only node list (already topological):
//   1. which nodes the loss depends on (backwards from the loss) and which nodes some wrt
//      value reaches (forwards from the wrt nodes; stop_gradient cuts it); a node in both,
//      with a reachable input, is "on the path" and needs a gradient rule;
//   2. every node on the path must have a rule: this is checked before anything is added, so
//      a refused request leaves the graph as it was;
//   3. from the loss down: sum the contributions to each output (add, where a value has
//      several consumers), run the node's rule, record what it gives each input.
// A wrt value no gradient reaches gets zeros (fill 0).
#include "autodiff/autodiff.hpp"

#include <fmt/format.h>

#include <map>
#include <optional>

#include "autodiff/rules.hpp"
#include "ops/op_registry.hpp"
#include "status.hpp"

namespace dlrt::core {
namespace {

using autodiff::MaybeValue;

bool is_float(dlrt_dtype d) {
  return d == DLRT_F32 || d == DLRT_F16 || d == DLRT_BF16 || d == DLRT_F64;
}

// "'relu_1' f32(4,3)" for messages.
std::string describe(const Graph& g, ValueRef v) {
  const Node& n = g.node(v.node);
  std::string name = v.output == 0 ? n.name : fmt::format("{}:{}", n.name, v.output);
  return fmt::format("'{}' {}", name, ops::to_string(g.type_of(v)));
}

// Gradient contributions per value, summed on demand.
class Contributions {
 public:
  explicit Contributions(Graph& g) : g_(g) {}

  void add(ValueRef v, ValueRef grad) { parts_[v].push_back(grad); }

  // The sum of everything added for `v` (one add node per extra contribution, on the device
  // of v's producer), or nullopt when nothing was. When one contribution is a
  // conv2d_backward_data (v read by a conv and by something else: a residual block's input),
  // the others are summed first and that pass becomes conv2d_backward_data_add(dy, w, sum),
  // which starts dx from the sum instead of zeros: no add pass over v's gradient. The plain
  // conv2d_backward_data is left unread (compile prunes it).
  MaybeValue total(ValueRef v) {
    auto it = parts_.find(v);
    if (it == parts_.end() || it->second.empty()) return std::nullopt;
    std::vector<ValueRef>& parts = it->second;
    if (parts.size() > 1) {
      const Node producer = g_.node(v.node);  // a copy: emitting may move the node vector
      const std::string what =
          v.output == 0 ? "accumulate" : fmt::format("accumulate_out{}", v.output);
      // The last conv2d_backward_data among the parts, if any.
      size_t conv = parts.size();
      for (size_t i = 0; i < parts.size(); ++i)
        if (g_.node(parts[i].node).op == "conv2d_backward_data") conv = i;
      std::optional<ValueRef> sum;
      for (size_t i = 0; i < parts.size(); ++i) {
        if (i == conv) continue;
        sum = sum ? autodiff::emit_gradient_op(g_, producer, "add", what, {*sum, parts[i]}, {})
                        .front()
                  : parts[i];
      }
      if (conv < parts.size()) {
        // Named as the sum ("gradients/<v's producer>/accumulate"), placed as the conv's pass.
        Node bd = g_.node(parts[conv].node);  // a copy, as above
        const std::vector<ValueRef> in = {bd.inputs.at(0), bd.inputs.at(1), *sum};
        bd.name = producer.name;
        sum = autodiff::emit_gradient_op(g_, bd, "conv2d_backward_data_add", what, in, bd.attrs)
                  .front();
      }
      parts.assign(1, *sum);
    }
    return parts[0];
  }

 private:
  Graph& g_;
  std::map<ValueRef, std::vector<ValueRef>> parts_;
};

void check_request(const Graph& graph, ValueRef loss, const std::vector<ValueRef>& wrt) {
  const ops::TensorType* lt = nullptr;
  try {
    lt = &graph.type_of(loss);
  } catch (const Error& e) {
    fail(e.code(), "gradients: loss: " + e.message());
  }
  if (!is_float(lt->dtype) || lt->num_elements() != 1)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("gradients: the loss {} must be a float scalar (rank 0, or every dim 1); "
                     "reduce it first, e.g. with reduce_mean",
                     describe(graph, loss)));
  for (size_t i = 0; i < wrt.size(); ++i) {
    const ops::TensorType* t = nullptr;
    try {
      t = &graph.type_of(wrt[i]);
    } catch (const Error& e) {
      fail(e.code(), fmt::format("gradients: wrt[{}]: {}", i, e.message()));
    }
    if (!is_float(t->dtype))
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("gradients: wrt[{}] {} is not a float value; only float values have "
                       "gradients",
                       i, describe(graph, wrt[i])));
  }
}

}  // namespace

std::vector<ValueRef> gradients(Graph& graph, ValueRef loss, const std::vector<ValueRef>& wrt) {
  check_request(graph, loss, wrt);
  const NodeId last = loss.node;

  // Pass 1: needed[n] = the loss depends on node n; reach[n] = some wrt value flows into n.
  std::vector<bool> needed(last + 1, false), reach(last + 1, false);
  needed[last] = true;
  for (NodeId n = last + 1; n-- > 0;)
    if (needed[n])
      for (ValueRef in : graph.node(n).inputs) needed[in.node] = true;
  for (ValueRef w : wrt)
    if (w.node <= last) reach[w.node] = true;
  // stop_gradient cuts the path: nothing it computes from is reached through it, so the ops
  // behind it need no rule and give no gradient (its input is in_const in the schema). Other
  // non-differentiable inputs (argmax's x, labels) still count as reached, so an op without
  // a rule there stays UNIMPLEMENTED rather than a silent zero.
  auto input_reached = [&](const Node& n) {
    if (n.op == "stop_gradient") return false;
    for (ValueRef in : n.inputs)
      if (reach[in.node]) return true;
    return false;
  };
  for (NodeId n = 0; n <= last; ++n)
    if (!reach[n] && input_reached(graph.node(n))) reach[n] = true;
  auto on_path = [&](const Node& n) { return needed[n.id] && input_reached(n); };

  // Pass 2: every op on the path has a rule.
  const autodiff::RuleTable& rules = autodiff::rules();
  for (NodeId n = 0; n <= last; ++n) {
    const Node& node = graph.node(n);
    if (!on_path(node) || rules.count(node.op)) continue;
    std::string why = autodiff::why_no_rule(node.op);
    fail(DLRT_UNIMPLEMENTED,
         fmt::format("gradients: op '{}' (node '{}') has no gradient rule and lies on the path "
                     "from the wrt values to the loss {}{}{}",
                     node.op, node.name, describe(graph, loss), why.empty() ? "" : ": ", why));
  }

  // Pass 3: the backward walk, seeded with d(loss)/d(loss) = 1.
  Contributions grads(graph);
  {
    const Node loss_node = graph.node(loss.node);
    const ops::TensorType lt = graph.type_of(loss);
    grads.add(loss,
              autodiff::emit_gradient_op(graph, loss_node, "fill", "seed", {},
                                         {{"shape", ops::Ints(lt.dims.begin(), lt.dims.end())},
                                          {"value", 1.0},
                                          {"dtype", lt.dtype}})
                  .front());
  }
  for (NodeId n = last + 1; n-- > 0;) {
    if (!on_path(graph.node(n))) continue;
    Node node = graph.node(n);  // a copy: rules add nodes
    std::vector<MaybeValue> dy(node.outputs.size());
    bool any = false;
    for (size_t k = 0; k < dy.size(); ++k) {
      dy[k] = grads.total({n, uint32_t(k)});
      any = any || dy[k].has_value();
    }
    if (!any) continue;  // no gradient flows here (only integer paths lead on to the loss)
    const ops::OpDef* def = ops::find_op(node.op);
    std::vector<bool> needs(node.inputs.size());
    for (size_t i = 0; i < needs.size(); ++i)
      needs[i] = reach[node.inputs[i].node] && is_float(graph.type_of(node.inputs[i]).dtype) &&
                 (def == nullptr || def->inputs.empty() || def->input_spec(i).differentiable);
    autodiff::GradContext ctx(graph, node, std::move(dy), std::move(needs));
    try {
      rules.at(node.op)(ctx);
    } catch (const Error& e) {
      fail(e.code(), fmt::format("gradients: the rule of op '{}' (node '{}') failed: {}", node.op,
                                 node.name, e.message()));
    }
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (ctx.dx()[i]) grads.add(node.inputs[i], *ctx.dx()[i]);
  }

  std::vector<ValueRef> out;
  out.reserve(wrt.size());
  for (ValueRef w : wrt) {
    MaybeValue g = w.node <= last ? grads.total(w) : std::nullopt;
    if (!g) {
      // Zeros, on the device the wrt value was asked for.
      const Node producer = graph.node(w.node);
      const ops::TensorType t = graph.type_of(w);
      g = autodiff::emit_gradient_op(graph, producer, "fill", "zeros", {},
                                     {{"shape", ops::Ints(t.dims.begin(), t.dims.end())},
                                      {"value", 0.0},
                                      {"dtype", t.dtype}})
              .front();
    }
    out.push_back(*g);
  }
  return out;
}

std::vector<std::string> ops_with_gradient_rules() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : autodiff::rules()) names.push_back(name);
  return names;
}

namespace autodiff {

const RuleTable& rules() {
  static const RuleTable table = [] {
    RuleTable t;
    add_nn_rules(t);
    add_math_rules(t);
    add_math_unary_rules(t);
    add_shape_op_rules(t);
    return t;
  }();
  return table;
}

std::string why_no_rule(const std::string& op) {
  const ops::OpDef* def = ops::find_op(op);
  return def != nullptr ? def->no_gradient : "";
}

}  // namespace autodiff
}  // namespace dlrt::core
