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
int64_t deconv_output_length(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                             bool same, int64_t op);
}  // namespace detail

class Conv2DTranspose : public Layer {
 public:
  Conv2DTranspose(int64_t filters, Size2 kernel, const Conv2DTransposeOptions& o);
  Conv2DTranspose(int64_t filters, Size2 kernel)
      : Conv2DTranspose(filters, kernel, Conv2DTransposeOptions{}) {}

  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;

  Shape output_shape(const Shape& in) const override;
  std::vector<ParamSpec> params(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override;

 private:
  int64_t filters_;
  Size2 kernel_;
  Conv2DTransposeOptions o_;
  bool same_;
  std::string activation_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_CONV_TRANSPOSE_HPP_
