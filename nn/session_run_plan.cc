// session_run_plan.cc: run_plan, a plan's layer calls built into a graph, with its fusions and
// mixed-precision casts (dlrt/nn/session.hpp).
#include "dlrt/nn/session.hpp"

#include "dlrt/nn/activations.hpp"
#include "dlrt/nn/batch_norm.hpp"

namespace dlrt::nn::detail {

Value cast_float_to(Graph& g, Value v, dlrt_dtype to) {
  if (!is_float_dtype(v.dtype()) || v.dtype() == to) return v;
  return g.op1("cast", {v}, {{"dtype", to}});
}

bool is_relu_layer(const Layer& layer) {
  if (const auto* a = dynamic_cast<const ActivationLayer*>(&layer))
    return a->activation() == "relu";
  if (const auto* a = dynamic_cast<const Activation*>(&layer)) return a->activation() == "relu";
  return false;
}

std::vector<Value> run_plan(const Plan& plan, CallContext& c, std::vector<Value> inputs,
                            const std::vector<Value>& vars) {
  std::vector<Value> slots = std::move(inputs);
  // Slots a BatchNormalization made with its ReLU fused (Plan::fuse_bn_relu): the ReLU node
  // reading one passes it on.
  std::vector<char> relu_done(slots.size() + plan.nodes.size(), 0);
  const bool mixed = !plan.compute_dtype.empty();
  const bool add_relu = c.training && !plan.fuse_bn_add_relu.empty();
  for (size_t j = 0; j < plan.nodes.size(); ++j) {
    const PlanNode& n = plan.nodes[j];
    if (n.inputs.size() == 1 && relu_done[n.inputs[0]] && is_relu_layer(*plan.layers[n.layer])) {
      slots.push_back(slots.at(n.inputs[0]));
      continue;
    }
    if (add_relu && plan.fuse_bn_add_relu[j] == Plan::kBuiltByItsAdd) {
      // Its Add builds it; only that Add reads this slot, and skips it.
      slots.push_back(slots.at(n.inputs.at(0)));
      continue;
    }
    if (add_relu && plan.fuse_bn_add_relu[j] >= 0) {
      // The residual tail: BatchNormalization node b on its input, plus this Add's other input,
      // plus the ReLU after it, built in node b's call context (its node names and seed).
      const size_t b = static_cast<size_t>(plan.fuse_bn_add_relu[j]);
      const PlanNode& bn_node = plan.nodes[b];
      const size_t bn_slot = plan.inputs.size() + b;
      const size_t shortcut = n.inputs.at(0) == bn_slot ? n.inputs.at(1) : n.inputs.at(0);
      std::vector<Value> params;
      for (size_t i : plan.layer_state[bn_node.layer]) params.push_back(vars.at(i));
      const auto& bn = static_cast<const BatchNormalization&>(*plan.layers[bn_node.layer]);
      relu_done[slots.size()] = 1;
      const Value x = slots.at(bn_node.inputs.at(0)), r = slots.at(shortcut);
      if (bn_node.call == 0) {
        slots.push_back(bn.call_with_add_relu(c, x, r, params));
      } else {
        const std::string k = std::to_string(bn_node.call);
        CallContext again{c.graph, c.training, derive_seed(c.seed, "call/" + k),
                          c.scope + "call_" + k + "/"};
        slots.push_back(bn.call_with_add_relu(again, x, r, params));
      }
      continue;
    }
    std::vector<Value> params, in;
    for (size_t i : plan.layer_state[n.layer]) params.push_back(vars.at(i));
    for (size_t s : n.inputs) in.push_back(slots.at(s));
    if (mixed) {
      const dlrt_dtype to = plan.compute_dtype.at(n.layer);
      for (Value& v : in) v = cast_float_to(c.graph, v, to);
      for (Value& v : params) v = cast_float_to(c.graph, v, to);
    }
    if (!plan.fuse_bn_relu.empty() && plan.fuse_bn_relu[j]) {
      // As call_multi below, the ReLU fused.
      const auto& bn = static_cast<const BatchNormalization&>(*plan.layers[n.layer]);
      relu_done[slots.size()] = 1;
      if (n.call == 0) {
        slots.push_back(bn.call_with_relu(c, in.at(0), params));
      } else {
        const std::string k = std::to_string(n.call);
        CallContext again{c.graph, c.training, derive_seed(c.seed, "call/" + k),
                          c.scope + "call_" + k + "/"};
        slots.push_back(bn.call_with_relu(again, in.at(0), params));
      }
      continue;
    }
    if (n.call == 0) {
      slots.push_back(plan.layers[n.layer]->call_multi(c, in, params));
    } else {
      const std::string k = std::to_string(n.call);
      CallContext again{c.graph, c.training, derive_seed(c.seed, "call/" + k),
                        c.scope + "call_" + k + "/"};
      slots.push_back(plan.layers[n.layer]->call_multi(again, in, params));
    }
  }
  std::vector<Value> out;
  for (size_t s : plan.outputs)
    out.push_back(mixed ? cast_float_to(c.graph, slots.at(s), DLRT_F32) : slots.at(s));
  return out;
}

}  // namespace dlrt::nn::detail
