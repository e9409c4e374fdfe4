// dlrt/nn/conv.hpp: Conv2D, Keras' 2-D convolution on NHWC images, kernel (KH,KW,Ci/groups,Co)
// HWIO. With activation none/relu/sigmoid/tanh it is one fused op (conv2d_bias_act); softmax
// is a separate op after it.
#ifndef DLRT_NN_CONV_HPP_
#define DLRT_NN_CONV_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/initializers.hpp"
#include "dlrt/nn/layer.hpp"
#include "dlrt/nn/regularizers.hpp"
#include "dlrt/nn/window.hpp"

namespace dlrt::nn {

// Conv2D's settings beyond filters and kernel, as Keras' keyword arguments:
//   nn::Conv2D(16, {3, 3}, {.padding = "same", .activation = "relu"})  (designated
//   initializers are C++20; GCC and Clang accept them in C++17 as an extension)
struct Conv2DOptions {
  Size2 strides = {1, 1};
  std::string padding = "valid";  // valid | same
  std::string activation = "linear";
  Initializer kernel_initializer = Initializer::glorot_uniform();
  Initializer bias_initializer = Initializer::zeros();
  Regularizer kernel_regularizer = {};  // e.g. Regularizer::l2(1e-4)
  Size2 dilation_rate = {1, 1};         // Keras refuses it > 1 together with strides > 1
  // Keras' use_bias: false leaves out the bias variable (a conv feeding a
  // BatchNormalization, whose beta is the bias, as in ResNets).
  bool use_bias = true;
  // Keras' groups: the input channels and the filters split into this many groups, each
  // convolved on its own; the kernel is (KH,KW,Ci/groups,filters). Both Ci and filters must
  // be multiples of it.
  int64_t groups = 1;
};

// Conv2D(filters, kernel, strides = (1,1), padding = "valid", activation = linear) on NHWC;
// kernel Glorot-uniform, bias zeros unless the options say otherwise; dilation_rate, groups
// and use_bias as Keras (ops conv2d / conv2d_bias_act with dilations and groups; without a
// bias a linear conv is one conv2d, an activated one conv2d_bias_act with a zero constant
// bias, so the activation stays fused).
class Conv2D : public Layer {
 public:
  Conv2D(int64_t filters, Size2 kernel, const Conv2DOptions& o);
  Conv2D(int64_t filters, Size2 kernel, Size2 strides, std::string padding,
         std::string activation = "linear")
      : Conv2D(filters, kernel, options(strides, std::move(padding), std::move(activation))) {}
  // Conv2D(32, {3, 3}, "relu"): stride 1, valid padding. A template so that a braced list
  // ({.padding = "same"}) goes to the options, never to the string.
  template <typename S, typename = std::enable_if_t<std::is_convertible_v<S, std::string>>>
  Conv2D(int64_t filters, Size2 kernel, S&& activation)
      : Conv2D(filters, kernel, {1, 1}, "valid", std::string(std::forward<S>(activation))) {}
  Conv2D(int64_t filters, Size2 kernel) : Conv2D(filters, kernel, {1, 1}, "valid") {}

  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;
  Shape output_shape(const Shape& in) const override;
  std::vector<ParamSpec> params(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override;

 private:
  OpAttrs conv_attrs() const;
  // (filters) zeros: the bias operand of conv2d_bias_act for a conv without a bias.
  Value zero_bias(CallContext& c) const;
  static Conv2DOptions options(Size2 strides, std::string padding, std::string activation);
  int64_t filters_;
  Size2 kernel_, strides_;
  bool same_;
  std::string activation_;
  Initializer kernel_init_, bias_init_;
  Regularizer kernel_reg_;
  Size2 dilation_;
  int64_t groups_;
  bool use_bias_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_CONV_HPP_
