// dlrt/nn/depthwise_conv.hpp: Keras' DepthwiseConv2D — each input channel convolved with its
// own depth_multiplier filters, the first half of a depthwise-separable convolution (MobileNet:
// DepthwiseConv2D then a 1x1 Conv2D).
//
//   nn::DepthwiseConv2D({3, 3})                                   (None, H, W, C) -> (.., C)
//   nn::DepthwiseConv2D({3, 3}, {.padding = "same", .depth_multiplier = 2})  -> (.., 2*C)
//
// As Keras: strides (1,1), padding valid|same, depth_multiplier 1, dilation_rate (1,1) (not
// together with strides > 1), activation linear, use_bias true, depthwise_initializer
// glorot_uniform, bias_initializer zeros; NHWC (channels_last) only. Its variables are
// "depthwise_kernel" with Keras' shape (KH,KW,C,depth_multiplier) — so its Glorot fans are
// Keras' too, fan_in = KH*KW*C, fan_out = KH*KW*depth_multiplier — and "bias"
// (C*depth_multiplier). Output channel c*depth_multiplier + m is input channel c convolved with
// depthwise_kernel[:, :, c, m], as Keras/TF.
//
// Ops: the kernel is reshaped (not transposed: row-major (KH,KW,C,M) is (KH,KW,1,C*M)) into
// the filter of a grouped conv2d with groups = C, whose output channel o belongs to group
// o / M = c (docs/ops.md, conv2d). With a bias and activation linear/relu/sigmoid/tanh that is
// one conv2d_bias_act, as Conv2D; softmax, or no bias, is conv2d then bias_add / the activation.
#ifndef DLRT_NN_DEPTHWISE_CONV_HPP_
#define DLRT_NN_DEPTHWISE_CONV_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/layers.hpp"

namespace dlrt::nn {

// DepthwiseConv2D's settings beyond the kernel size, as Keras' keyword arguments, in Keras'
// order: nn::DepthwiseConv2D({3, 3}, {.padding = "same", .activation = "relu"}).
struct DepthwiseConv2DOptions {
  Size2 strides = {1, 1};
  std::string padding = "valid";  // valid | same
  int64_t depth_multiplier = 1;
  Size2 dilation_rate = {1, 1};
  std::string activation = "linear";
  bool use_bias = true;
  Initializer depthwise_initializer = Initializer::glorot_uniform();
  Initializer bias_initializer = Initializer::zeros();
  Regularizer depthwise_regularizer = {};
};

class DepthwiseConv2D : public Layer {
 public:
  explicit DepthwiseConv2D(Size2 kernel, const DepthwiseConv2DOptions& o = {});

  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;

  Shape output_shape(const Shape& in) const override;
  std::vector<ParamSpec> params(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override;

 private:
  Size2 kernel_, strides_, dilation_;
  bool same_;
  int64_t multiplier_;
  std::string activation_;
  bool use_bias_;
  Initializer kernel_init_, bias_init_;
  Regularizer kernel_reg_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_DEPTHWISE_CONV_HPP_
