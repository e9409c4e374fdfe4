// dlrt/nn/global_pooling.hpp: Keras' GlobalAveragePooling2D — the mean of every channel over
// the whole image, the layer a ResNet puts between its last convolution and its classifier.
//
//   nn::GlobalAveragePooling2D()                         (None, H, W, C) -> (None, C)
//   nn::GlobalAveragePooling2D(/*keepdims=*/true)        (None, H, W, C) -> (None, 1, 1, C)
//   nn::GlobalAveragePooling2D(false, "channels_first")  (None, C, H, W) -> (None, C)
//
// As Keras: keepdims false by default; data_format "channels_last" (NHWC, dlrt's image
// layout) or "channels_first" (NCHW, the layout BatchNormalization(axis=1) takes); anything
// else is refused when the layer is made. No parameters.
//
// Op: reduce_mean over the two spatial axes ({1, 2} for NHWC, {2, 3} for NCHW) with the
// layer's keepdims; its gradient (dy / (H*W) broadcast back) comes from reduce_mean's rule.
// When the dedicated global_avg_pool2d op lands (issue 13, item 1) this layer can build that
// op instead; the layer's shapes, names and results stay the same.
#ifndef DLRT_NN_GLOBAL_POOLING_HPP_
#define DLRT_NN_GLOBAL_POOLING_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/layers.hpp"

namespace dlrt::nn {

class GlobalAveragePooling2D : public Layer {
 public:
  explicit GlobalAveragePooling2D(bool keepdims = false,
                                  const std::string& data_format = "channels_last")
      : keepdims_(keepdims), channels_first_(check_format(data_format)) {}

  std::string type() const override { return "GlobalAveragePooling2D"; }
  std::string base_name() const override { return "global_average_pooling2d"; }
  std::shared_ptr<Layer> clone() const override {
    return std::make_shared<GlobalAveragePooling2D>(*this);
  }
  bool keepdims() const { return keepdims_; }

  Shape output_shape(const Shape& in) const override {
    if (in.size() != 3)
      throw bad_input(in, channels_first_ ? "(None, C, H, W)" : "(None, H, W, C)");
    const int64_t c = channels_first_ ? in[0] : in[2];
    if (!keepdims_) return {c};
    return channels_first_ ? Shape{c, 1, 1} : Shape{1, 1, c};
  }
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override {
    // x: (B, H, W, C) -> (B, C) or (B, 1, 1, C); NCHW: (B, C, H, W) -> (B, C) or (B, C, 1, 1).
    const std::vector<int64_t> axes =
        channels_first_ ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{1, 2};
    return c.graph.op1("reduce_mean", {x}, {{"axes", axes}, {"keepdims", keepdims_}},
                       c.node(name_));
  }

 private:
  static bool check_format(const std::string& f) {
    if (f == "channels_last") return false;
    if (f == "channels_first") return true;
    throw Error(DLRT_INVALID_ARGUMENT, "GlobalAveragePooling2D: data_format '" + f +
                                           "'; expected channels_last or channels_first");
  }

  bool keepdims_;
  bool channels_first_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_GLOBAL_POOLING_HPP_
