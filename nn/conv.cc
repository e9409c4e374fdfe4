// conv.cc: Conv2D (dlrt/nn/conv.hpp).
#include "dlrt/nn/conv.hpp"

#include "dlrt/nn/activations.hpp"

namespace dlrt::nn {

Conv2D::Conv2D(int64_t filters, Size2 kernel, const Conv2DOptions& o)
    : filters_(filters),
      kernel_(kernel),
      strides_(o.strides),
      same_(detail::check_padding(o.padding, "Conv2D")),
      activation_(check_activation(o.activation, "Conv2D")),
      kernel_init_(o.kernel_initializer),
      bias_init_(o.bias_initializer),
      kernel_reg_(o.kernel_regularizer),
      dilation_(o.dilation_rate),
      groups_(o.groups),
      use_bias_(o.use_bias) {
  if (filters < 1) throw Error(DLRT_INVALID_ARGUMENT, "Conv2D: filters must be >= 1");
  detail::check_size2(kernel, "kernel", "Conv2D");
  detail::check_size2(o.strides, "strides", "Conv2D");
  detail::check_size2(o.dilation_rate, "dilation_rate", "Conv2D");
  detail::check_strides_dilation(o.strides, o.dilation_rate, "Conv2D");
  if (o.groups < 1) throw Error(DLRT_INVALID_ARGUMENT, "Conv2D: groups must be >= 1");
  if (filters % o.groups != 0)
    throw Error(DLRT_INVALID_ARGUMENT, "Conv2D: filters (" + std::to_string(filters) +
                                           ") must be a multiple of groups (" +
                                           std::to_string(o.groups) + ")");
}

std::shared_ptr<Layer> Conv2D::clone() const { return std::make_shared<Conv2D>(*this); }

std::string Conv2D::type() const { return "Conv2D"; }

std::string Conv2D::base_name() const { return "conv2d"; }

Shape Conv2D::output_shape(const Shape& in) const {
  if (in.size() != 3) throw bad_input(in, "(None, H, W, C)");
  if (in[2] % groups_ != 0)
    throw bad_input(in, "C a multiple of groups (" + std::to_string(groups_) + ")");
  const int64_t h = detail::window_out(in[0], kernel_[0], strides_[0], same_, dilation_[0]);
  const int64_t w = detail::window_out(in[1], kernel_[1], strides_[1], same_, dilation_[1]);
  if (h < 1 || w < 1) throw bad_input(in, "H and W >= the (dilated) kernel with valid padding");
  return {h, w, filters_};
}

std::vector<ParamSpec> Conv2D::params(const Shape& in) const {
  std::vector<ParamSpec> p = {{"kernel",
                               {kernel_[0], kernel_[1], in.at(2) / groups_, filters_},
                               kernel_init_,
                               true,
                               kernel_reg_}};
  if (use_bias_) p.push_back({"bias", {filters_}, bias_init_, true});
  return p;
}

Value Conv2D::call(CallContext& c, Value x, const std::vector<Value>& v) const {
  const OpAttrs conv = conv_attrs();
  if (!use_bias_ && activation_ == "none")
    return c.graph.op1("conv2d", {x, v[0]}, conv, c.node(name_));
  if (activation_ == "softmax") {
    Value y = c.graph.op1("conv2d", {x, v[0]}, conv);
    if (use_bias_) y = c.graph.op1("bias_add", {y, v[1]});
    return apply_activation(c.graph, y, activation_);
  }
  OpAttrs fused = conv;
  fused.emplace_back("activation", activation_);
  return c.graph.op1("conv2d_bias_act", {x, v[0], use_bias_ ? v[1] : zero_bias(c)}, fused,
                     c.node(name_));
}

OpAttrs Conv2D::conv_attrs() const {
  OpAttrs conv = {{"strides", {strides_[0], strides_[1]}}, {"padding", same_ ? "SAME" : "VALID"}};
  // Only when not the default, so a plain Conv2D builds the op it always built.
  if (dilation_ != Size2{1, 1})
    conv.emplace_back("dilations", std::vector<int64_t>{dilation_[0], dilation_[1]});
  if (groups_ != 1) conv.emplace_back("groups", groups_);
  return conv;
}

Value Conv2D::zero_bias(CallContext& c) const {
  return c.graph.constant<float>("", {filters_}, std::vector<float>(size_t(filters_), 0.f));
}

Conv2DOptions Conv2D::options(Size2 strides, std::string padding, std::string activation) {
  Conv2DOptions o;
  o.strides = strides;
  o.padding = std::move(padding);
  o.activation = std::move(activation);
  return o;
}

}  // namespace dlrt::nn
