// pooling.cc: MaxPool2D and AvgPool2D (dlrt/nn/pooling.hpp).
#include "dlrt/nn/pooling.hpp"

#include <utility>

namespace dlrt::nn {

Shape Pool2D::output_shape(const Shape& in) const {
  if (in.size() != 3) throw bad_input(in, "(None, H, W, C)");
  const int64_t h = detail::window_out(in[0], pool_[0], strides_[0], same_);
  const int64_t w = detail::window_out(in[1], pool_[1], strides_[1], same_);
  if (h < 1 || w < 1) throw bad_input(in, "H and W >= the pool size with valid padding");
  return {h, w, in[2]};
}

Value Pool2D::call(CallContext& c, Value x, const std::vector<Value>&) const {
  return c.graph.op1(op_, {x},
                     {{"ksize", {pool_[0], pool_[1]}},
                      {"strides", {strides_[0], strides_[1]}},
                      {"padding", same_ ? "SAME" : "VALID"}},
                     c.node(name_));
}

Pool2D::Pool2D(std::string op, Size2 pool, Size2 strides, const std::string& padding)
    : op_(std::move(op)),
      pool_(pool),
      strides_(strides[0] == 0 ? pool : strides),
      same_(detail::check_padding(padding, op_)) {
  detail::check_size2(pool_, "pool size", op_);
  detail::check_size2(strides_, "strides", op_);
}

std::shared_ptr<Layer> MaxPool2D::clone() const { return std::make_shared<MaxPool2D>(*this); }

std::string MaxPool2D::type() const { return "MaxPooling2D"; }

std::string MaxPool2D::base_name() const { return "max_pooling2d"; }

std::shared_ptr<Layer> AvgPool2D::clone() const { return std::make_shared<AvgPool2D>(*this); }

std::string AvgPool2D::type() const { return "AveragePooling2D"; }

std::string AvgPool2D::base_name() const { return "average_pooling2d"; }

}  // namespace dlrt::nn
