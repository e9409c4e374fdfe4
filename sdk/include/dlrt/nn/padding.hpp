// dlrt/nn/padding.hpp: Keras' ZeroPadding2D — rows and columns of zeros around an image.
//
//   nn::ZeroPadding2D()                 (None, H, W, C) -> (None, H+2, W+2, C)   (1 everywhere)
//   nn::ZeroPadding2D(2)                (None, H, W, C) -> (None, H+4, W+4, C)
//   nn::ZeroPadding2D({1, 3})           h = 1 above and below, w = 3 left and right
//   nn::ZeroPadding2D({1, 2}, {3, 4})   Keras' ((top, bottom), (left, right))
//   ... , "channels_first")             (None, C, H, W) the same way
//
// As Keras (padding=(1, 1) by default: an int, (h, w), or ((top, bottom), (left, right)); the
// last as two arguments here). Every amount >= 0, refused otherwise when the layer is made.
// No parameters.
//
// Op: pad (docs/ops.md), mode "constant", value 0, pads (0, top, left, 0, 0, bottom, right, 0)
// for NHWC or (0, 0, top, left, 0, 0, bottom, right) for NCHW; its gradient is the middle
// slice of dy.
#ifndef DLRT_NN_PADDING_HPP_
#define DLRT_NN_PADDING_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/global_pooling.hpp"
#include "dlrt/nn/layers.hpp"

namespace dlrt::nn {

class ZeroPadding2D : public Layer {
 public:
  explicit ZeroPadding2D(int64_t padding = 1, const std::string& data_format = "channels_last")
      : ZeroPadding2D(Size2{padding, padding}, Size2{padding, padding}, data_format) {}
  // data_format is a C string here: with std::string, ZeroPadding2D({1, 2}, {3, 4}) would
  // also match this constructor ({3, 4} as a string's two chars).
  explicit ZeroPadding2D(Size2 hw, const char* data_format = "channels_last")
      : ZeroPadding2D(Size2{hw[0], hw[0]}, Size2{hw[1], hw[1]}, data_format) {}
  ZeroPadding2D(Size2 top_bottom, Size2 left_right,
                const std::string& data_format = "channels_last");

  std::string type() const override;
  std::string base_name() const override;
  std::shared_ptr<Layer> clone() const override;
  const Size2& top_bottom() const { return top_bottom_; }
  const Size2& left_right() const { return left_right_; }

  Shape output_shape(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override;

 private:
  Size2 top_bottom_, left_right_;
  bool channels_first_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_PADDING_HPP_
