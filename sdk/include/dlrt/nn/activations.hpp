// dlrt/nn/activations.hpp: activation layers by name — Activation("gelu") as
// keras.layers.Activation, and LeakyReLU(alpha) as keras.layers.LeakyReLU.
//
// Activation names and the op each one builds (the layer keeps the shape):
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
#include "dlrt/nn/layers.hpp"

namespace dlrt::nn {

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
