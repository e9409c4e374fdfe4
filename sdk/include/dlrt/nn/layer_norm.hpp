// dlrt/nn/layer_norm.hpp: Keras' LayerNormalization layer.
//
//   nn::LayerNormalization(axis = -1, epsilon = 1e-3, center = true, scale = true)
//
// Each sample's feature vector (the last axis, D values) is normalised on its own:
//   y = gamma * (x - mean) / sqrt(var + epsilon) + beta,
// mean and biased var over the D values of that row (op layer_norm; the same in training and
// inference: no moving statistics, no batch dependence). Parameters, in Keras' order and with
// its initial values: gamma (D) ones (when `scale`), beta (D) zeros (when `center`), both
// trainable. Input: any sample shape (..., D), e.g. (T, D) for sequences or (D) after Dense.
// Only the last axis (-1, or rank as Keras counts it with the batch) is supported; any other
// axis is INVALID_ARGUMENT naming the layer. epsilon is Keras' 1e-3 (the op's default is
// PyTorch's 1e-5; the layer always passes its own).
#ifndef DLRT_NN_LAYER_NORM_HPP_
#define DLRT_NN_LAYER_NORM_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/layers.hpp"

namespace dlrt::nn {

class LayerNormalization : public Layer {
 public:
  explicit LayerNormalization(int64_t axis = -1, double epsilon = 1e-3, bool center = true,
                              bool scale = true);

  std::string type() const override;
  bool float32_only() const override;  // mixed_precision.hpp
  std::string base_name() const override;
  std::shared_ptr<Layer> clone() const override;
  Shape output_shape(const Shape& in) const override;
  std::vector<ParamSpec> params(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override;

  double epsilon() const { return epsilon_; }

 private:
  // D, the last axis of a sample (no batch dim); throws unless axis names it.
  int64_t features(const Shape& in) const;

  int64_t axis_;
  double epsilon_;
  bool center_, scale_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_LAYER_NORM_HPP_
