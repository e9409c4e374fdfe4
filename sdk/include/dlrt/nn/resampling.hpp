// dlrt/nn/resampling.hpp: Keras' UpSampling2D — an image made larger by whole factors.
//
//   nn::UpSampling2D()                        (None, H, W, C) -> (None, 2H, 2W, C)
//   nn::UpSampling2D({2, 3})                  (None, H, W, C) -> (None, 2H, 3W, C)
//   nn::UpSampling2D({2, 2}, "bilinear")      the same shape, interpolated
//   nn::UpSampling2D({2, 2}, "nearest", "channels_first")   (None, C, H, W) -> (None, C, 2H, 2W)
//
// As Keras (tf.keras.layers.UpSampling2D(size, data_format, interpolation); here size,
// interpolation, data_format): size (2, 2) by default, each factor >= 1; interpolation
// "nearest" (the default: every row and column repeated size times) or "bilinear"
// (tf.image.resize's bilinear, half-pixel centres, the border clamped). Other Keras
// interpolations (bicubic, area, lanczos, ...) are refused when the layer is made. No
// parameters.
//
// Op: resize (docs/ops.md) to (size[0]*H, size[1]*W) with mode "nearest" and
// coordinate_transformation "asymmetric", nearest_mode "floor" (row o reads row floor(o/s):
// a repeat), or mode "bilinear" with "half_pixel"; its gradient is resize_grad.
#ifndef DLRT_NN_RESAMPLING_HPP_
#define DLRT_NN_RESAMPLING_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/global_pooling.hpp"
#include "dlrt/nn/layers.hpp"

namespace dlrt::nn {

class UpSampling2D : public Layer {
 public:
  explicit UpSampling2D(Size2 size = {2, 2}, const std::string& interpolation = "nearest",
                        const std::string& data_format = "channels_last")
      : size_(size),
        bilinear_(check_interpolation(interpolation)),
        channels_first_(detail::channels_first(data_format, "UpSampling2D")) {
    detail::check_size2(size_, "size", "UpSampling2D");
  }

  std::string type() const override { return "UpSampling2D"; }
  std::string base_name() const override { return "up_sampling2d"; }
  std::shared_ptr<Layer> clone() const override { return std::make_shared<UpSampling2D>(*this); }
  const Size2& size() const { return size_; }
  std::string interpolation() const { return bilinear_ ? "bilinear" : "nearest"; }

  Shape output_shape(const Shape& in) const override {
    if (in.size() != 3)
      throw bad_input(in, channels_first_ ? "(None, C, H, W)" : "(None, H, W, C)");
    if (channels_first_) return {in[0], in[1] * size_[0], in[2] * size_[1]};
    return {in[0] * size_[0], in[1] * size_[1], in[2]};
  }
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override {
    const std::vector<int64_t> dims = x.dims();  // (B, H, W, C) or (B, C, H, W)
    const int64_t h = channels_first_ ? dims[2] : dims[1];
    const int64_t w = channels_first_ ? dims[3] : dims[2];
    return c.graph.op1("resize", {x},
                       {{"size", std::vector<int64_t>{h * size_[0], w * size_[1]}},
                        {"mode", bilinear_ ? "bilinear" : "nearest"},
                        {"coordinate_transformation", bilinear_ ? "half_pixel" : "asymmetric"},
                        {"nearest_mode", "floor"},
                        {"data_format", channels_first_ ? "NCHW" : "NHWC"}},
                       c.node(name_));
  }

 private:
  static bool check_interpolation(const std::string& i) {
    if (i == "nearest") return false;
    if (i == "bilinear") return true;
    throw Error(DLRT_INVALID_ARGUMENT,
                "UpSampling2D: interpolation '" + i + "'; expected nearest or bilinear");
  }

  Size2 size_;
  bool bilinear_;
  bool channels_first_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_RESAMPLING_HPP_
