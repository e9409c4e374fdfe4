// dlrt/nn/pooling.hpp: MaxPool2D and AvgPool2D, Keras' 2-D pooling over windows of NHWC
// images (ops max_pool2d, avg_pool2d). No parameters; the channels are kept. The pooling over
// the whole image is in global_pooling.hpp.
#ifndef DLRT_NN_POOLING_HPP_
#define DLRT_NN_POOLING_HPP_

#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/layer.hpp"
#include "dlrt/nn/window.hpp"

namespace dlrt::nn {

// MaxPool2D / AvgPool2D(pool = (2,2), strides = pool, padding = "valid").
class Pool2D : public Layer {
 public:
  Shape output_shape(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override;

 protected:
  Pool2D(std::string op, Size2 pool, Size2 strides, const std::string& padding);

 private:
  std::string op_;
  Size2 pool_, strides_;
  bool same_;
};

class MaxPool2D : public Pool2D {
 public:
  // strides {0, 0}: the pool size (Keras' strides=None).
  explicit MaxPool2D(Size2 pool = {2, 2}, Size2 strides = {0, 0},
                     const std::string& padding = "valid")
      : Pool2D("max_pool2d", pool, strides, padding) {}
  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;
};

class AvgPool2D : public Pool2D {
 public:
  explicit AvgPool2D(Size2 pool = {2, 2}, Size2 strides = {0, 0},
                     const std::string& padding = "valid")
      : Pool2D("avg_pool2d", pool, strides, padding) {}
  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_POOLING_HPP_
