// depthwise_conv.cc: DepthwiseConv2D (dlrt/nn/depthwise_conv.hpp).
#include "dlrt/nn/depthwise_conv.hpp"

namespace dlrt::nn {

DepthwiseConv2D::DepthwiseConv2D(Size2 kernel, const DepthwiseConv2DOptions& o)
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

std::shared_ptr<Layer> DepthwiseConv2D::clone() const {
  return std::make_shared<DepthwiseConv2D>(*this);
}

std::string DepthwiseConv2D::type() const { return "DepthwiseConv2D"; }

std::string DepthwiseConv2D::base_name() const { return "depthwise_conv2d"; }

Shape DepthwiseConv2D::output_shape(const Shape& in) const {
  if (in.size() != 3) throw bad_input(in, "(None, H, W, C)");
  const int64_t h = detail::window_out(in[0], kernel_[0], strides_[0], same_, dilation_[0]);
  const int64_t w = detail::window_out(in[1], kernel_[1], strides_[1], same_, dilation_[1]);
  if (h < 1 || w < 1) throw bad_input(in, "H and W >= the (dilated) kernel with valid padding");
  return {h, w, in[2] * multiplier_};
}

std::vector<ParamSpec> DepthwiseConv2D::params(const Shape& in) const {
  std::vector<ParamSpec> p = {{"depthwise_kernel",
                               {kernel_[0], kernel_[1], in.at(2), multiplier_},
                               kernel_init_,
                               true,
                               kernel_reg_}};
  if (use_bias_) p.push_back({"bias", {in.at(2) * multiplier_}, bias_init_, true});
  return p;
}

Value DepthwiseConv2D::call(CallContext& c, Value x, const std::vector<Value>& v) const {
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

}  // namespace dlrt::nn
