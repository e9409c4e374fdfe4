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
                              bool scale = true)
      : axis_(axis), epsilon_(epsilon), center_(center), scale_(scale) {
    if (!(epsilon > 0.0))
      throw Error(DLRT_INVALID_ARGUMENT, "LayerNormalization: epsilon must be > 0");
  }

  std::string type() const override { return "LayerNormalization"; }
  bool float32_only() const override { return true; }  // mixed_precision.hpp
  std::string base_name() const override { return "layer_normalization"; }
  std::shared_ptr<Layer> clone() const override {
    return std::make_shared<LayerNormalization>(*this);
  }
  Shape output_shape(const Shape& in) const override {
    features(in);  // refuses an axis other than the last
    return in;
  }
  std::vector<ParamSpec> params(const Shape& in) const override {
    const Shape d = {features(in)};
    std::vector<ParamSpec> p;
    if (scale_) p.push_back({"gamma", d, Initializer::ones(), true});
    if (center_) p.push_back({"beta", d, Initializer::zeros(), true});
    return p;
  }
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override {
    // x: (B, ..., D); v: params() in order. Outputs (y, mean, rstd): mean and rstd are for
    // the gradient rule only.
    const std::vector<int64_t> dims = x.dims();
    const Shape sample(dims.begin() + 1, dims.end());
    const int64_t d = features(sample);
    size_t k = 0;
    const Value gamma =
        scale_ ? v[k++] : c.graph.constant<float>("", {d}, std::vector<float>(size_t(d), 1.f));
    const Value beta =
        center_ ? v[k++] : c.graph.constant<float>("", {d}, std::vector<float>(size_t(d), 0.f));
    std::vector<Value> out =
        c.graph.op("layer_norm", {x, gamma, beta}, {{"epsilon", epsilon_}}, c.node(name_));
    return out[0];
  }

  double epsilon() const { return epsilon_; }

 private:
  // D, the last axis of a sample (no batch dim); throws unless axis names it.
  int64_t features(const Shape& in) const {
    const int64_t rank = static_cast<int64_t>(in.size());
    if (rank < 1 || !(axis_ == -1 || axis_ == rank))  // Keras' axis counts the batch
      throw bad_input(in, "(None, ..., D) normalised over its last axis (axis -1 or " +
                              std::to_string(rank) + "); axis is " + std::to_string(axis_));
    return in.back();
  }

  int64_t axis_;
  double epsilon_;
  bool center_, scale_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_LAYER_NORM_HPP_
