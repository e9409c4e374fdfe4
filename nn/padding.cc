// padding.cc: the padding and cropping layers (dlrt/nn/padding.hpp).
#include "dlrt/nn/padding.hpp"

namespace dlrt::nn {

ZeroPadding2D::ZeroPadding2D(Size2 top_bottom, Size2 left_right, const std::string& data_format)
    : top_bottom_(top_bottom),
      left_right_(left_right),
      channels_first_(detail::channels_first(data_format, "ZeroPadding2D")) {
  for (int64_t p : {top_bottom[0], top_bottom[1], left_right[0], left_right[1]})
    if (p < 0)
      throw Error(DLRT_INVALID_ARGUMENT,
                  "ZeroPadding2D: padding must be >= 0, got " + std::to_string(p));
}

std::string ZeroPadding2D::type() const { return "ZeroPadding2D"; }

std::string ZeroPadding2D::base_name() const { return "zero_padding2d"; }

std::shared_ptr<Layer> ZeroPadding2D::clone() const {
  return std::make_shared<ZeroPadding2D>(*this);
}

Shape ZeroPadding2D::output_shape(const Shape& in) const {
  if (in.size() != 3) throw bad_input(in, channels_first_ ? "(None, C, H, W)" : "(None, H, W, C)");
  const int64_t dh = top_bottom_[0] + top_bottom_[1], dw = left_right_[0] + left_right_[1];
  if (channels_first_) return {in[0], in[1] + dh, in[2] + dw};
  return {in[0] + dh, in[1] + dw, in[2]};
}

Value ZeroPadding2D::call(CallContext& c, Value x, const std::vector<Value>&) const {
  const int64_t t = top_bottom_[0], b = top_bottom_[1], l = left_right_[0], r = left_right_[1];
  const std::vector<int64_t> pads = channels_first_ ? std::vector<int64_t>{0, 0, t, l, 0, 0, b, r}
                                                    : std::vector<int64_t>{0, t, l, 0, 0, b, r, 0};
  return c.graph.op1("pad", {x}, {{"pads", pads}, {"mode", "constant"}, {"value", 0.0}},
                     c.node(name_));
}

}  // namespace dlrt::nn
