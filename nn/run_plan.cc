// run_plan.cc: run_plan, a plan's layer calls built into a graph, with its mixed-precision
// casts, and Scopes, the plan's device scopes around every build (dlrt/nn/run_plan.hpp).
#include "dlrt/nn/run_plan.hpp"

#include <memory>
#include <string>
#include <vector>

namespace dlrt::nn::detail {

Scopes::Scopes(Graph& g, const std::vector<std::string>& specs) {
  for (const std::string& s : specs) scopes_.push_back(std::make_unique<dlrt::DeviceScope>(g, s));
}

Scopes::~Scopes() {
  while (!scopes_.empty()) scopes_.pop_back();  // innermost first
}

Value cast_float_to(Graph& g, Value v, dlrt_dtype to) {
  if (!is_float_dtype(v.dtype()) || v.dtype() == to) return v;
  return g.op1("cast", {v}, {{"dtype", to}});
}

std::vector<Value> run_plan(const Plan& plan, CallContext& c, std::vector<Value> inputs,
                            const std::vector<Value>& vars) {
  std::vector<Value> slots = std::move(inputs);
  const bool mixed = !plan.compute_dtype.empty();
  for (const PlanNode& n : plan.nodes) {
    std::vector<Value> params, in;
    for (size_t i : plan.layer_state[n.layer]) params.push_back(vars.at(i));
    for (size_t s : n.inputs) in.push_back(slots.at(s));
    if (mixed) {
      const dlrt_dtype to = plan.compute_dtype.at(n.layer);
      for (Value& v : in) v = cast_float_to(c.graph, v, to);
      for (Value& v : params) v = cast_float_to(c.graph, v, to);
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
