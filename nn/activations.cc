// activations.cc: the activation layers (ReLU, Sigmoid, Tanh, Softmax, Activation by name,
// LeakyReLU), the table of named activations, and the activations layers fuse
// (dlrt/nn/activations.hpp).
#include "dlrt/nn/activations.hpp"

namespace dlrt::nn {

std::string check_activation(const std::string& a, const std::string& who) {
  if (a.empty() || a == "linear") return "none";
  if (a == "relu" || a == "sigmoid" || a == "tanh" || a == "softmax") return a;
  throw Error(DLRT_INVALID_ARGUMENT, who + ": unknown activation '" + a +
                                         "'; expected linear, relu, sigmoid, tanh or softmax");
}

Value apply_activation(Graph& g, Value x, const std::string& act) {
  if (act == "none") return x;
  // Softmax in f32 whatever came in (a mixed-precision policy's 16-bit logits): its
  // exponentials and sum are where 16 bits lose the most (mixed_precision.hpp).
  if (act == "softmax" && x.dtype() != DLRT_F32)
    return g.op1("softmax", {g.op1("cast", {x}, {{"dtype", DLRT_F32}})});
  if (act == "softmax") return g.op1("softmax", {x});
  return g.op1(act, {x});
}

Shape ActivationLayer::output_shape(const Shape& in) const { return in; }

Value ActivationLayer::call(CallContext& c, Value x, const std::vector<Value>&) const {
  return apply_activation(c.graph, x, activation_);
}

std::string ActivationLayer::type() const { return type_; }

std::string ActivationLayer::base_name() const { return base_; }

std::shared_ptr<Layer> ReLU::clone() const { return std::make_shared<ReLU>(*this); }

std::shared_ptr<Layer> Softmax::clone() const { return std::make_shared<Softmax>(*this); }

std::shared_ptr<Layer> Sigmoid::clone() const { return std::make_shared<Sigmoid>(*this); }

std::shared_ptr<Layer> Tanh::clone() const { return std::make_shared<Tanh>(*this); }

const std::vector<detail::NamedActivation>& detail::named_activations() {
  static const std::vector<NamedActivation> table = {
      {"linear", "", 0},
      {"relu", "relu", 0},
      {"sigmoid", "sigmoid", 0},
      {"tanh", "tanh", 0},
      {"softmax", "softmax", 0},
      {"elu", "elu", 0},
      {"gelu", "gelu", 0},
      {"silu", "silu", 0},
      {"swish", "silu", 0},
      {"hard_swish", "hard_swish", 0},
      {"softplus", "softplus", 0},
      {"mish", "mish", 0},
      {"leaky_relu", "leaky_relu", 0.2},
  };
  return table;
}

bool detail::op_registered(const std::string& op) {
  if (op.empty()) return true;
  for (const OpInfo& info : op_list())
    if (info.name == op) return true;
  return false;
}

std::string detail::available_activations() {
  std::string out;
  for (const NamedActivation& a : named_activations())
    if (op_registered(a.op)) out += (out.empty() ? "" : ", ") + std::string(a.name);
  return out;
}

Activation::Activation(const std::string& name) {
  for (const detail::NamedActivation& a : detail::named_activations())
    if (name == a.name) entry_ = &a;
  if (entry_ == nullptr)
    throw Error(DLRT_INVALID_ARGUMENT, "Activation: unknown activation '" + name +
                                           "'; known here: " + detail::available_activations());
}

std::string Activation::type() const { return "Activation"; }

std::string Activation::base_name() const { return "activation"; }

std::shared_ptr<Layer> Activation::clone() const { return std::make_shared<Activation>(*this); }

Shape Activation::output_shape(const Shape& in) const {
  if (!detail::op_registered(entry_->op))
    throw Error(DLRT_INVALID_ARGUMENT,
                display_name() + " (Activation): '" + entry_->name + "' needs the op '" +
                    entry_->op +
                    "', which this runtime's op registry does not have; known "
                    "here: " +
                    detail::available_activations());
  return in;
}

Value Activation::call(CallContext& c, Value x, const std::vector<Value>&) const {
  const std::string op = entry_->op;
  if (op.empty()) return x;
  OpAttrs attrs;
  if (entry_->leaky_alpha > 0) attrs.emplace_back("alpha", entry_->leaky_alpha);
  return c.graph.op1(op, {x}, attrs, c.node(name_));
}

LeakyReLU::LeakyReLU(double alpha) : alpha_(alpha) {
  if (!(alpha >= 0.0))
    throw Error(DLRT_INVALID_ARGUMENT,
                "LeakyReLU: alpha = " + std::to_string(alpha) + "; expected a value >= 0");
}

std::string LeakyReLU::type() const { return "LeakyReLU"; }

std::string LeakyReLU::base_name() const { return "leaky_re_lu"; }

std::shared_ptr<Layer> LeakyReLU::clone() const { return std::make_shared<LeakyReLU>(*this); }

Shape LeakyReLU::output_shape(const Shape& in) const { return in; }

Value LeakyReLU::call(CallContext& c, Value x, const std::vector<Value>&) const {
  return c.graph.op1("leaky_relu", {x}, {{"alpha", alpha_}}, c.node(name_));
}

}  // namespace dlrt::nn
