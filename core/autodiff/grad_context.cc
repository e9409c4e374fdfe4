// grad_context.cc: the helpers gradient rules build with (see rules.hpp).
#include <fmt/format.h>

#include <algorithm>

#include "rules.hpp"
#include "status.hpp"

namespace dlrt::core::autodiff {

GradContext::GradContext(Graph& graph, Node forward, std::vector<MaybeValue> dy,
                         std::vector<bool> needs)
    : graph_(graph),
      fwd_(std::move(forward)),
      dy_(std::move(dy)),
      needs_(std::move(needs)),
      dx_(fwd_.inputs.size()) {}

ValueRef GradContext::dy_or_zeros(int k) {
  if (dy_.at(k)) return *dy_[k];
  dy_[k] = fill(fwd_.outputs.at(k), 0.0, fmt::format("zeros_out{}", k));
  return *dy_[k];
}

const ops::AttrValue& GradContext::attr(const std::string& name) const {
  auto it = fwd_.attrs.find(name);
  if (it == fwd_.attrs.end())
    fail(DLRT_INTERNAL, fmt::format("gradient of {} ({}): the forward node has no attribute '{}'",
                                    fwd_.name, fwd_.op, name));
  return it->second;
}

ops::AttrMap GradContext::attrs_without(std::initializer_list<const char*> names) const {
  ops::AttrMap a = fwd_.attrs;
  for (const char* n : names) a.erase(n);
  return a;
}

namespace {
// "gradients/<forward>/<what>", or with "_1", "_2", ... when taken: by an earlier gradients()
// call, or within this one (a sum of three contributions makes two "accumulate" nodes).
// Graph::add_op refuses a taken name rather than renaming it, so the rename happens here.
std::string unique_gradient_name(const Graph& graph, const std::string& base) {
  std::string name = base;
  for (int k = 1; graph.find(name).has_value(); ++k) name = fmt::format("{}_{}", base, k);
  return name;
}
}  // namespace

std::vector<ValueRef> emit_gradient_op(Graph& graph, const Node& forward, const std::string& op,
                                       const std::string& what, const std::vector<ValueRef>& inputs,
                                       const ops::AttrMap& attrs) {
  std::vector<ValueRef> out = graph.add_op(
      op, unique_gradient_name(graph, "gradients/" + forward.name + "/" + what), inputs, attrs);
  // The backward pass runs where the forward op was asked to run (TensorFlow does the same
  // with colocate_gradients_with_ops): a device scope around the model covers both passes,
  // whatever scope is open when gradients() is called. add_op gave the node that scope's
  // request; it is replaced here.
  Node& n = graph.mutable_node(out.front().node);
  n.is_gradient = true;
  n.requested_device = forward.requested_device;
  n.requested = forward.requested;
  return out;
}

std::vector<ValueRef> GradContext::emit_all(const std::string& op, const std::string& what,
                                            const std::vector<ValueRef>& inputs,
                                            const ops::AttrMap& attrs) {
  return emit_gradient_op(graph_, fwd_, op, what, inputs, attrs);
}

int GradContext::forward_readers(ValueRef v) const {
  int k = 0;
  for (const Node& n : graph_.nodes())
    if (!n.is_gradient)
      for (ValueRef in : n.inputs) k += in == v;
  return k;
}

ValueRef GradContext::fill(const ops::TensorType& type, double value, const std::string& what) {
  return emit("fill", what, {},
              {{"shape", ops::Ints(type.dims.begin(), type.dims.end())},
               {"value", value},
               {"dtype", type.dtype}});
}

ValueRef GradContext::reshape_to(ValueRef g, const ops::Dims& dims, const std::string& what) {
  if (type_of(g).dims == dims) return g;
  return emit("reshape", what, {g}, {{"shape", ops::Ints(dims.begin(), dims.end())}});
}

ValueRef GradContext::sum_to(ValueRef g, const ops::Dims& target, const std::string& what) {
  const ops::Dims have = type_of(g).dims;
  if (have == target) return g;
  const int lead = int(have.size()) - int(target.size());
  if (lead < 0)
    fail(DLRT_INTERNAL, fmt::format("gradient of {} ({}): cannot sum {} down to {}", fwd_.name,
                                    fwd_.op, ops::format_dims(have), ops::format_dims(target)));
  ops::Ints axes;
  for (int a = 0; a < int(have.size()); ++a)
    if (a < lead || (target[a - lead] == 1 && have[a] != 1)) axes.push_back(a);
  // axes empty means "all" to reduce_sum, so only reduce when there is something to reduce.
  if (!axes.empty())
    g = emit("reduce_sum", what + "_sum", {g}, {{"axes", axes}, {"keepdims", true}});
  return reshape_to(g, target, what);
}

void GradContext::set_dx(int i, ValueRef g) {
  if (!needs_.at(i)) return;
  const ops::TensorType& want = graph_.type_of(input(i));
  const ops::TensorType& got = graph_.type_of(g);
  if (want != got)
    fail(DLRT_INTERNAL,
         fmt::format("gradient rule of {} ({}) gave input {} a gradient of type {}, expected {}",
                     fwd_.name, fwd_.op, i, ops::to_string(got), ops::to_string(want)));
  dx_[i] = g;
}

ValueRef activation_input_grad(GradContext& ctx, ValueRef dy, ValueRef y) {
  const std::string& act = ctx.attr("activation").as_string();
  if (act == "none") return dy;
  // relu_grad's second operand is x (dx = dy where x > 0); y = relu(z) > 0 exactly where
  // z > 0, so the output serves and z never has to be materialised.
  return ctx.emit(act + "_grad", act + "_grad", {dy, y});
}

}  // namespace dlrt::core::autodiff
