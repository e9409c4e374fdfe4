// dlrt/nn/global_pooling.hpp: Keras' GlobalAveragePooling2D and GlobalMaxPooling2D — the mean
// or the max of every channel over the whole image, the layers a ResNet or a small CNN puts
// between its last convolution and its classifier.
//
//   nn::GlobalAveragePooling2D()                         (None, H, W, C) -> (None, C)
//   nn::GlobalAveragePooling2D(/*keepdims=*/true)        (None, H, W, C) -> (None, 1, 1, C)
//   nn::GlobalAveragePooling2D(false, "channels_first")  (None, C, H, W) -> (None, C)
//   nn::GlobalMaxPooling2D(), nn::GlobalMaxPooling2D(true), ... the same shapes
//
// As Keras: keepdims false by default; data_format "channels_last" (NHWC, dlrt's image
// layout) or "channels_first" (NCHW, the layout BatchNormalization(axis=1) takes); anything
// else is refused when the layer is made. No parameters.
//
// Ops: global_avg_pool2d / global_max_pool2d (docs/ops.md) with the layer's keepdims and
// data_format "NHWC" / "NCHW"; their gradient rules give global_avg_pool2d_backward (dy /
// (H*W) at every cell) and global_max_pool2d_backward (dy to the first maximum of each plane,
// rows first). On the cpu plugin the average is one oneDNN pooling over the whole image.
#ifndef DLRT_NN_GLOBAL_POOLING_HPP_
#define DLRT_NN_GLOBAL_POOLING_HPP_

#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/layers.hpp"

namespace dlrt::nn {

namespace detail {
// true for "channels_first", false for "channels_last"; INVALID_ARGUMENT naming `who` else.
bool channels_first(const std::string& f, const std::string& who);
}  // namespace detail

// The two global pools: the same shapes, one op each.
class GlobalPooling2D : public Layer {
 public:
  bool keepdims() const { return keepdims_; }

  Shape output_shape(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override;

 protected:
  GlobalPooling2D(std::string op, bool keepdims, const std::string& data_format,
                  const std::string& who)
      : op_(std::move(op)),
        keepdims_(keepdims),
        channels_first_(detail::channels_first(data_format, who)) {}

 private:
  std::string op_;
  bool keepdims_;
  bool channels_first_;
};

class GlobalAveragePooling2D : public GlobalPooling2D {
 public:
  explicit GlobalAveragePooling2D(bool keepdims = false,
                                  const std::string& data_format = "channels_last")
      : GlobalPooling2D("global_avg_pool2d", keepdims, data_format, "GlobalAveragePooling2D") {}

  std::string type() const override;
  std::string base_name() const override;
  std::shared_ptr<Layer> clone() const override;
};

class GlobalMaxPooling2D : public GlobalPooling2D {
 public:
  explicit GlobalMaxPooling2D(bool keepdims = false,
                              const std::string& data_format = "channels_last")
      : GlobalPooling2D("global_max_pool2d", keepdims, data_format, "GlobalMaxPooling2D") {}

  std::string type() const override;
  std::string base_name() const override;
  std::shared_ptr<Layer> clone() const override;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_GLOBAL_POOLING_HPP_
