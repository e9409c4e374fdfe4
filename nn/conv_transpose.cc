// conv_transpose.cc: Conv2DTranspose (dlrt/nn/conv_transpose.hpp).
#include "dlrt/nn/conv_transpose.hpp"

#include <algorithm>

namespace dlrt::nn {

int64_t detail::deconv_output_length(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                     bool same, int64_t op) {
  const int64_t k = (kernel - 1) * dilation + 1;
  if (op < 0) return same ? in * stride : (in - 1) * stride + std::max(k, stride);
  return (in - 1) * stride + (same ? k % 2 : k) + op;
}

Conv2DTranspose::Conv2DTranspose(int64_t filters, Size2 kernel, const Conv2DTransposeOptions& o)
    : filters_(filters),
      kernel_(kernel),
      o_(o),
      same_(detail::check_padding(o.padding, "Conv2DTranspose")),
      activation_(check_activation(o.activation, "Conv2DTranspose")) {
  const std::string who = "Conv2DTranspose";
  if (filters < 1) throw Error(DLRT_INVALID_ARGUMENT, who + ": filters must be >= 1");
  detail::check_size2(kernel, "kernel", who);
  detail::check_size2(o.strides, "strides", who);
  detail::check_size2(o.dilation_rate, "dilation_rate", who);
  if (o.output_padding)
    for (int i = 0; i < 2; ++i)
      if ((*o.output_padding)[i] < 0 || (*o.output_padding)[i] >= o.strides[i])
        throw Error(DLRT_INVALID_ARGUMENT,
                    who + ": output_padding (" + std::to_string((*o.output_padding)[0]) + ", " +
                        std::to_string((*o.output_padding)[1]) +
                        ") must be >= 0 and smaller than the strides (" +
                        std::to_string(o.strides[0]) + ", " + std::to_string(o.strides[1]) + ")");
}

std::shared_ptr<Layer> Conv2DTranspose::clone() const {
  return std::make_shared<Conv2DTranspose>(*this);
}

std::string Conv2DTranspose::type() const { return "Conv2DTranspose"; }

std::string Conv2DTranspose::base_name() const { return "conv2d_transpose"; }

Shape Conv2DTranspose::output_shape(const Shape& in) const {
  if (in.size() != 3) throw bad_input(in, "(None, H, W, C)");
  int64_t out[2];
  for (int i = 0; i < 2; ++i)
    out[i] = detail::deconv_output_length(in[i], kernel_[i], o_.strides[i], o_.dilation_rate[i],
                                          same_, o_.output_padding ? (*o_.output_padding)[i] : -1);
  if (out[0] < 1 || out[1] < 1)
    throw bad_input(in,
                    "an output of at least 1x1 (this kernel, padding and output_padding "
                    "leave none)");
  return {out[0], out[1], filters_};
}

std::vector<ParamSpec> Conv2DTranspose::params(const Shape& in) const {
  std::vector<ParamSpec> p = {{"kernel",
                               {kernel_[0], kernel_[1], filters_, in.at(2)},
                               o_.kernel_initializer,
                               true,
                               o_.kernel_regularizer}};
  if (o_.use_bias) p.push_back({"bias", {filters_}, o_.bias_initializer, true});
  return p;
}

Value Conv2DTranspose::call(CallContext& c, Value x, const std::vector<Value>& v) const {
  // x: (B, H, W, Ci), kernel: (KH, KW, filters, Ci) -> (B, OH, OW, filters)
  OpAttrs attrs = {{"strides", {o_.strides[0], o_.strides[1]}},
                   {"padding", same_ ? "SAME" : "VALID"},
                   {"dilations", {o_.dilation_rate[0], o_.dilation_rate[1]}}};
  if (o_.output_padding)
    attrs.emplace_back("output_padding",
                       std::vector<int64_t>{(*o_.output_padding)[0], (*o_.output_padding)[1]});
  Value y = c.graph.op1("conv2d_transpose", {x, v[0]}, attrs, c.node(name_));
  if (o_.use_bias) y = c.graph.op1("bias_add", {y, v[1]});
  return apply_activation(c.graph, y, activation_);
}

}  // namespace dlrt::nn
