// dlrt/nn/activations.hpp: the activation layers — ReLU(), Sigmoid(), Tanh(), Softmax() (one
// fixed activation each), Activation("gelu") by name as keras.layers.Activation, and
// LeakyReLU(alpha) as keras.layers.LeakyReLU — and the activation names that layers with a
// built-in activation (Conv2D, Dense, ...) take (check_activation, apply_activation).
//
// Activation's names and the op each one builds (the layer keeps the shape):
//   linear   none (identity)          relu, sigmoid, tanh, softmax   the op of that name
//   elu      elu (the op's alpha, 1.0 as Keras)
//   gelu     gelu (the op's default approximate = "none": the exact erf form, Keras' default)
//   silu, swish   silu                hard_swish   hard_swish        softplus   softplus
//   mish     mish
//   leaky_relu    leaky_relu, alpha 0.2 (keras.activations.leaky_relu's negative_slope)
// A name maps to its op only if the op registry has that op when the model is built (the
// layer's output shape is asked for: at its call and at compile); otherwise, as for a name
// not in the table, INVALID_ARGUMENT lists the names that work in this runtime. Unknown
// names are refused when the layer is made.
#ifndef DLRT_NN_ACTIVATIONS_HPP_
#define DLRT_NN_ACTIVATIONS_HPP_

#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/layer.hpp"

namespace dlrt::nn {

// "linear" (or "") = none, "relu", "sigmoid", "tanh", "softmax"; anything else is refused
// when the layer is made.
std::string check_activation(const std::string& a, const std::string& who);

// Builds activation `act`, a name as check_activation returns it, on x ("none": x itself).
Value apply_activation(Graph& g, Value x, const std::string& act);

// An activation on its own: ReLU(), Sigmoid(), Tanh(), Softmax().
class ActivationLayer : public Layer {
 public:
  Shape output_shape(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override;
  std::string type() const override;
  std::string base_name() const override;
  const std::string& activation() const { return activation_; }

 protected:
  ActivationLayer(std::string activation, std::string type, std::string base)
      : activation_(std::move(activation)), type_(std::move(type)), base_(std::move(base)) {}

 private:
  std::string activation_, type_, base_;
};

class ReLU : public ActivationLayer {
 public:
  ReLU() : ActivationLayer("relu", "ReLU", "re_lu") {}
  std::shared_ptr<Layer> clone() const override;
};
class Softmax : public ActivationLayer {
 public:
  Softmax() : ActivationLayer("softmax", "Softmax", "softmax") {}
  std::shared_ptr<Layer> clone() const override;
};
// Keras has no Sigmoid/Tanh layer classes; these are its Activation("sigmoid"/"tanh").
class Sigmoid : public ActivationLayer {
 public:
  Sigmoid() : ActivationLayer("sigmoid", "Activation", "activation") {}
  std::shared_ptr<Layer> clone() const override;
};
class Tanh : public ActivationLayer {
 public:
  Tanh() : ActivationLayer("tanh", "Activation", "activation") {}
  std::shared_ptr<Layer> clone() const override;
};

namespace detail {
// One Activation name: the op it builds ("" = identity) and that op's attributes.
struct NamedActivation {
  const char* name;
  const char* op;
  double leaky_alpha;  // leaky_relu's alpha; 0 = no attribute
};
const std::vector<NamedActivation>& named_activations();
bool op_registered(const std::string& op);
// "linear, relu, ..." of the names whose op this runtime has.
std::string available_activations();
}  // namespace detail

class Activation : public Layer {
 public:
  explicit Activation(const std::string& name);
  std::string type() const override;
  std::string base_name() const override;
  std::shared_ptr<Layer> clone() const override;
  std::string activation() const { return entry_->name; }

  Shape output_shape(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override;

 private:
  const detail::NamedActivation* entry_ = nullptr;  // into the static table
};

// LeakyReLU(alpha = 0.3): y = x for x > 0, else alpha * x (Keras' LeakyReLU layer default;
// its function form keras.activations.leaky_relu uses 0.2). Op: leaky_relu.
class LeakyReLU : public Layer {
 public:
  explicit LeakyReLU(double alpha = 0.3);
  std::string type() const override;
  std::string base_name() const override;
  std::shared_ptr<Layer> clone() const override;
  double alpha() const { return alpha_; }
  Shape output_shape(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override;

 private:
  double alpha_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_ACTIVATIONS_HPP_
