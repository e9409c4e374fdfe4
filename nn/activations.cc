// activations.cc: Activation by name and LeakyReLU; the table of named activations
// (dlrt/nn/activations.hpp).
#include "dlrt/nn/activations.hpp"

namespace dlrt::nn {

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
