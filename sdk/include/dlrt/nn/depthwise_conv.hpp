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
  explicit DepthwiseConv2D(Size2 kernel, const DepthwiseConv2DOptions& o = {})
      : kernel_(kernel),
        strides_(o.strides),
        dilation_(o.dilation_rate),
        same_(detail::check_padding(o.padding, "DepthwiseConv2D")),
        multiplier_(o.depth_multiplier),
        activation_(check_activation(o.activation, "DepthwiseConv2D")),
        use_bias_(o.use_bias),
        kernel_init_(o.depthwise_initializer),
        bias_init_(o.bias_initializer),
        kernel_reg_(o.depthwise_regularizer) {
    detail::check_size2(kernel, "kernel", "DepthwiseConv2D");
    detail::check_size2(o.strides, "strides", "DepthwiseConv2D");
    detail::check_size2(o.dilation_rate, "dilation_rate", "DepthwiseConv2D");
    detail::check_strides_dilation(o.strides, o.dilation_rate, "DepthwiseConv2D");
    if (o.depth_multiplier < 1)
      throw Error(DLRT_INVALID_ARGUMENT, "DepthwiseConv2D: depth_multiplier must be >= 1");
  }

  std::shared_ptr<Layer> clone() const override { return std::make_shared<DepthwiseConv2D>(*this); }
  std::string type() const override { return "DepthwiseConv2D"; }
  std::string base_name() const override { return "depthwise_conv2d"; }

  Shape output_shape(const Shape& in) const override {
    if (in.size() != 3) throw bad_input(in, "(None, H, W, C)");
    const int64_t h = detail::window_out(in[0], kernel_[0], strides_[0], same_, dilation_[0]);
    const int64_t w = detail::window_out(in[1], kernel_[1], strides_[1], same_, dilation_[1]);
    if (h < 1 || w < 1) throw bad_input(in, "H and W >= the (dilated) kernel with valid padding");
    return {h, w, in[2] * multiplier_};
  }
  std::vector<ParamSpec> params(const Shape& in) const override {
    std::vector<ParamSpec> p = {{"depthwise_kernel",
                                 {kernel_[0], kernel_[1], in.at(2), multiplier_},
                                 kernel_init_,
                                 true,
                                 kernel_reg_}};
    if (use_bias_) p.push_back({"bias", {in.at(2) * multiplier_}, bias_init_, true});
    return p;
  }
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override {
    // x: (B,H,W,C); depthwise_kernel (KH,KW,C,M) -> filter (KH,KW,1,C*M), groups C.
    const Shape& k = v[0].dims();
    const int64_t channels = k[2];
    Value filter = c.graph.op1("reshape", {v[0]},
                               {{"shape", std::vector<int64_t>{k[0], k[1], 1, channels * k[3]}}});
    OpAttrs conv = {{"strides", {strides_[0], strides_[1]}},
                    {"padding", same_ ? "SAME" : "VALID"},
                    {"dilations", {dilation_[0], dilation_[1]}},
                    {"groups", channels}};
    if (use_bias_ && activation_ != "softmax") {
      conv.emplace_back("activation", activation_);
      return c.graph.op1("conv2d_bias_act", {x, filter, v[1]}, conv, c.node(name_));
    }
    Value y = c.graph.op1("conv2d", {x, filter}, conv, use_bias_ ? "" : c.node(name_));
    if (use_bias_) y = c.graph.op1("bias_add", {y, v[1]}, {}, c.node(name_));
    return apply_activation(c.graph, y, activation_);
  }

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
