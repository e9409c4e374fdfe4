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
                        const std::string& data_format = "channels_last");

  std::string type() const override;
  std::string base_name() const override;
  std::shared_ptr<Layer> clone() const override;
  const Size2& size() const { return size_; }
  std::string interpolation() const { return bilinear_ ? "bilinear" : "nearest"; }

  Shape output_shape(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override;

 private:
  static bool check_interpolation(const std::string& i);

  Size2 size_;
  bool bilinear_;
  bool channels_first_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_RESAMPLING_HPP_
