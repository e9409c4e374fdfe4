// global_pooling.cc: the global pooling layers (dlrt/nn/global_pooling.hpp).
#include "dlrt/nn/global_pooling.hpp"

#include <cstdint>

namespace dlrt::nn {

bool detail::channels_first(const std::string& f, const std::string& who) {
  if (f == "channels_last") return false;
  if (f == "channels_first") return true;
  throw Error(DLRT_INVALID_ARGUMENT,
              who + ": data_format '" + f + "'; expected channels_last or channels_first");
}

Shape GlobalPooling2D::output_shape(const Shape& in) const {
  if (in.size() != 3) throw bad_input(in, channels_first_ ? "(None, C, H, W)" : "(None, H, W, C)");
  const int64_t c = channels_first_ ? in[0] : in[2];
  if (!keepdims_) return {c};
  return channels_first_ ? Shape{c, 1, 1} : Shape{1, 1, c};
}

Value GlobalPooling2D::call(CallContext& c, Value x, const std::vector<Value>&) const {
  // x: (B, H, W, C) -> (B, C) or (B, 1, 1, C); NCHW: (B, C, H, W) -> (B, C) or (B, C, 1, 1).
  return c.graph.op1(op_, {x},
                     {{"data_format", channels_first_ ? "NCHW" : "NHWC"}, {"keepdims", keepdims_}},
                     c.node(name_));
}

std::string GlobalAveragePooling2D::type() const { return "GlobalAveragePooling2D"; }

std::string GlobalAveragePooling2D::base_name() const { return "global_average_pooling2d"; }

std::shared_ptr<Layer> GlobalAveragePooling2D::clone() const {
  return std::make_shared<GlobalAveragePooling2D>(*this);
}

std::string GlobalMaxPooling2D::type() const { return "GlobalMaxPooling2D"; }

std::string GlobalMaxPooling2D::base_name() const { return "global_max_pooling2d"; }

std::shared_ptr<Layer> GlobalMaxPooling2D::clone() const {
  return std::make_shared<GlobalMaxPooling2D>(*this);
}

}  // namespace dlrt::nn
