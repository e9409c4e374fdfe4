// dlrt/nn/activations.hpp: activation layers by name — Activation("gelu") as
// keras.layers.Activation, and LeakyReLU(alpha) as keras.layers.LeakyReLU.
//
// Activation names and the op each one builds (the layer keeps the shape):
//   linear   none (identity)          relu, sigmoid, tanh, softmax   the op of that name
//   elu      elu (the op's alpha, 1.0 as Keras)
//   gelu     gelu (the op's default approximate = "none": the exact erf form, Keras' default)
//   silu, swish   silu                hard_swish   hard_swish        softplus   softplus
//   leaky_relu    leaky_relu, alpha 0.2 (keras.activations.leaky_relu's negative_slope)
// A name maps to its op only if the op registry has that op when the model is built (the
// layer's output shape is asked for: at its call and at compile); otherwise, as for a name
// not in the table, INVALID_ARGUMENT lists the names that work in this runtime. Unknown
// names are refused when the layer is made.
#ifndef DLRT_NN_ACTIVATIONS_HPP_
#define DLRT_NN_ACTIVATIONS_HPP_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/layers.hpp"

namespace dlrt::nn {

namespace detail {
// One Activation name: the op it builds ("" = identity) and that op's attributes.
struct NamedActivation {
  const char* name;
  const char* op;
  double leaky_alpha;  // leaky_relu's alpha; 0 = no attribute
};
inline const std::vector<NamedActivation>& named_activations() {
  static const std::vector<NamedActivation> table = {
      {"linear", "", 0},           {"relu", "relu", 0},
      {"sigmoid", "sigmoid", 0},   {"tanh", "tanh", 0},
      {"softmax", "softmax", 0},   {"elu", "elu", 0},
      {"gelu", "gelu", 0},         {"silu", "silu", 0},
      {"swish", "silu", 0},        {"hard_swish", "hard_swish", 0},
      {"softplus", "softplus", 0}, {"leaky_relu", "leaky_relu", 0.2}};
  return table;
}
inline bool op_registered(const std::string& op) {
  if (op.empty()) return true;
  for (const OpInfo& info : op_list())
    if (info.name == op) return true;
  return false;
}
// "linear, relu, ..." of the names whose op this runtime has.
inline std::string available_activations() {
  std::string out;
  for (const NamedActivation& a : named_activations())
    if (op_registered(a.op)) out += (out.empty() ? "" : ", ") + std::string(a.name);
  return out;
}
}  // namespace detail

class Activation : public Layer {
 public:
  explicit Activation(const std::string& name) {
    for (const detail::NamedActivation& a : detail::named_activations())
      if (name == a.name) entry_ = &a;
    if (entry_ == nullptr)
      throw Error(DLRT_INVALID_ARGUMENT, "Activation: unknown activation '" + name +
                                             "'; known here: " + detail::available_activations());
  }
  std::string type() const override { return "Activation"; }
  std::string base_name() const override { return "activation"; }
  std::shared_ptr<Layer> clone() const override { return std::make_shared<Activation>(*this); }
  std::string activation() const { return entry_->name; }

  Shape output_shape(const Shape& in) const override {
    if (!detail::op_registered(entry_->op))
      throw Error(DLRT_INVALID_ARGUMENT,
                  display_name() + " (Activation): '" + entry_->name + "' needs the op '" +
                      entry_->op +
                      "', which this runtime's op registry does not have; known "
                      "here: " +
                      detail::available_activations());
    return in;
  }
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override {
    const std::string op = entry_->op;
    if (op.empty()) return x;
    OpAttrs attrs;
    if (entry_->leaky_alpha > 0) attrs.emplace_back("alpha", entry_->leaky_alpha);
    return c.graph.op1(op, {x}, attrs, c.node(name_));
  }

 private:
  const detail::NamedActivation* entry_ = nullptr;  // into the static table
};

// LeakyReLU(alpha = 0.3): y = x for x > 0, else alpha * x (Keras' LeakyReLU layer default;
// its function form keras.activations.leaky_relu uses 0.2). Op: leaky_relu.
class LeakyReLU : public Layer {
 public:
  explicit LeakyReLU(double alpha = 0.3) : alpha_(alpha) {
    if (!(alpha >= 0.0))
      throw Error(DLRT_INVALID_ARGUMENT,
                  "LeakyReLU: alpha = " + std::to_string(alpha) + "; expected a value >= 0");
  }
  std::string type() const override { return "LeakyReLU"; }
  std::string base_name() const override { return "leaky_re_lu"; }
  std::shared_ptr<Layer> clone() const override { return std::make_shared<LeakyReLU>(*this); }
  double alpha() const { return alpha_; }
  Shape output_shape(const Shape& in) const override { return in; }
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override {
    return c.graph.op1("leaky_relu", {x}, {{"alpha", alpha_}}, c.node(name_));
  }

 private:
  double alpha_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_ACTIVATIONS_HPP_
