// resampling.cc: the resampling layers (dlrt/nn/resampling.hpp).
#include "dlrt/nn/resampling.hpp"

#include <cstdint>

namespace dlrt::nn {

UpSampling2D::UpSampling2D(Size2 size, const std::string& interpolation,
                           const std::string& data_format)
    : size_(size),
      bilinear_(check_interpolation(interpolation)),
      channels_first_(detail::channels_first(data_format, "UpSampling2D")) {
  detail::check_size2(size_, "size", "UpSampling2D");
}

std::string UpSampling2D::type() const { return "UpSampling2D"; }

std::string UpSampling2D::base_name() const { return "up_sampling2d"; }

std::shared_ptr<Layer> UpSampling2D::clone() const { return std::make_shared<UpSampling2D>(*this); }

Shape UpSampling2D::output_shape(const Shape& in) const {
  if (in.size() != 3) throw bad_input(in, channels_first_ ? "(None, C, H, W)" : "(None, H, W, C)");
  if (channels_first_) return {in[0], in[1] * size_[0], in[2] * size_[1]};
  return {in[0] * size_[0], in[1] * size_[1], in[2]};
}

Value UpSampling2D::call(CallContext& c, Value x, const std::vector<Value>&) const {
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

bool UpSampling2D::check_interpolation(const std::string& i) {
  if (i == "nearest") return false;
  if (i == "bilinear") return true;
  throw Error(DLRT_INVALID_ARGUMENT,
              "UpSampling2D: interpolation '" + i + "'; expected nearest or bilinear");
}

}  // namespace dlrt::nn
