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
                const std::string& data_format = "channels_last")
      : top_bottom_(top_bottom),
        left_right_(left_right),
        channels_first_(detail::channels_first(data_format, "ZeroPadding2D")) {
    for (int64_t p : {top_bottom[0], top_bottom[1], left_right[0], left_right[1]})
      if (p < 0)
        throw Error(DLRT_INVALID_ARGUMENT,
                    "ZeroPadding2D: padding must be >= 0, got " + std::to_string(p));
  }

  std::string type() const override { return "ZeroPadding2D"; }
  std::string base_name() const override { return "zero_padding2d"; }
  std::shared_ptr<Layer> clone() const override { return std::make_shared<ZeroPadding2D>(*this); }
  const Size2& top_bottom() const { return top_bottom_; }
  const Size2& left_right() const { return left_right_; }

  Shape output_shape(const Shape& in) const override {
    if (in.size() != 3)
      throw bad_input(in, channels_first_ ? "(None, C, H, W)" : "(None, H, W, C)");
    const int64_t dh = top_bottom_[0] + top_bottom_[1], dw = left_right_[0] + left_right_[1];
    if (channels_first_) return {in[0], in[1] + dh, in[2] + dw};
    return {in[0] + dh, in[1] + dw, in[2]};
  }
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override {
    const int64_t t = top_bottom_[0], b = top_bottom_[1], l = left_right_[0], r = left_right_[1];
    const std::vector<int64_t> pads = channels_first_
                                          ? std::vector<int64_t>{0, 0, t, l, 0, 0, b, r}
                                          : std::vector<int64_t>{0, t, l, 0, 0, b, r, 0};
    return c.graph.op1("pad", {x}, {{"pads", pads}, {"mode", "constant"}, {"value", 0.0}},
                       c.node(name_));
  }

 private:
  Size2 top_bottom_, left_right_;
  bool channels_first_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_PADDING_HPP_
