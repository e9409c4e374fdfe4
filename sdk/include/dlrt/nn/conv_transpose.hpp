// dlrt/nn/conv_transpose.hpp: Keras' Conv2DTranspose — the transposed convolution that
// upsamples (a decoder's, a generator's "deconvolution"), on NHWC images.
//
//   nn::Conv2DTranspose(16, {3, 3})                                  (None, 7, 7, C) -> (None, 9, 9, 16)
//   nn::Conv2DTranspose(16, {3, 3}, {.strides = {2, 2}, .padding = "same"})  -> (None, 14, 14, 16)
//   nn::Conv2DTranspose(1, {3, 3}, {.strides = {2, 2}, .padding = "same",
//                                   .output_padding = nn::Size2{1, 1}, .activation = "sigmoid"})
//
// As Keras: strides (1,1), padding "valid", output_padding None, dilation_rate (1,1), activation
// linear, use_bias true, kernel Glorot-uniform and bias zeros by default. The kernel is
// (KH, KW, filters, Ci), Keras' transpose layout (output channels in dim 2), so the summary's
// parameter count is KH*KW*filters*Ci + filters, Keras' number; Glorot's fans are Keras' for
// that shape (fan_in = KH*KW*filters, fan_out = KH*KW*Ci). Each output length is Keras'
// conv_utils.deconv_output_length with k = (kernel-1)*dilation + 1:
//   output_padding None:  valid (in-1)*s + max(k, s)     same in*s
//   output_padding op:    valid (in-1)*s + k + op        same (in-1)*s + k%2 + op
// where op must be smaller than the stride (Keras' check; refused when the layer is made).
// Unlike TF's Keras, a stride and a dilation above 1 may be combined (the op runs both).
//
// Ops: conv2d_transpose (docs/ops.md, whose schema has the same length rule), then bias_add
// when use_bias, then the activation's op.
#ifndef DLRT_NN_CONV_TRANSPOSE_HPP_
#define DLRT_NN_CONV_TRANSPOSE_HPP_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/initializers.hpp"
#include "dlrt/nn/layers.hpp"
#include "dlrt/nn/regularizers.hpp"

namespace dlrt::nn {

// Conv2DTranspose's settings beyond filters and kernel, as Keras' keyword arguments.
struct Conv2DTransposeOptions {
  Size2 strides = {1, 1};
  std::string padding = "valid";        // valid | same
  std::optional<Size2> output_padding;  // none: Keras' None (the length rule above)
  Size2 dilation_rate = {1, 1};
  std::string activation = "linear";
  bool use_bias = true;
  Initializer kernel_initializer = Initializer::glorot_uniform();
  Initializer bias_initializer = Initializer::zeros();
  Regularizer kernel_regularizer = {};
};

namespace detail {
// Keras' conv_utils.deconv_output_length for valid/same; op < 0 is None.
inline int64_t deconv_output_length(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                    bool same, int64_t op) {
  const int64_t k = (kernel - 1) * dilation + 1;
  if (op < 0) return same ? in * stride : (in - 1) * stride + std::max(k, stride);
  return (in - 1) * stride + (same ? k % 2 : k) + op;
}
}  // namespace detail

class Conv2DTranspose : public Layer {
 public:
  Conv2DTranspose(int64_t filters, Size2 kernel, const Conv2DTransposeOptions& o)
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
  Conv2DTranspose(int64_t filters, Size2 kernel)
      : Conv2DTranspose(filters, kernel, Conv2DTransposeOptions{}) {}

  std::shared_ptr<Layer> clone() const override { return std::make_shared<Conv2DTranspose>(*this); }
  std::string type() const override { return "Conv2DTranspose"; }
  std::string base_name() const override { return "conv2d_transpose"; }

  Shape output_shape(const Shape& in) const override {
    if (in.size() != 3) throw bad_input(in, "(None, H, W, C)");
    int64_t out[2];
    for (int i = 0; i < 2; ++i)
      out[i] =
          detail::deconv_output_length(in[i], kernel_[i], o_.strides[i], o_.dilation_rate[i], same_,
                                       o_.output_padding ? (*o_.output_padding)[i] : -1);
    if (out[0] < 1 || out[1] < 1)
      throw bad_input(in,
                      "an output of at least 1x1 (this kernel, padding and output_padding "
                      "leave none)");
    return {out[0], out[1], filters_};
  }
  std::vector<ParamSpec> params(const Shape& in) const override {
    std::vector<ParamSpec> p = {{"kernel",
                                 {kernel_[0], kernel_[1], filters_, in.at(2)},
                                 o_.kernel_initializer,
                                 true,
                                 o_.kernel_regularizer}};
    if (o_.use_bias) p.push_back({"bias", {filters_}, o_.bias_initializer, true});
    return p;
  }
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override {
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

 private:
  int64_t filters_;
  Size2 kernel_;
  Conv2DTransposeOptions o_;
  bool same_;
  std::string activation_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_CONV_TRANSPOSE_HPP_
