// layer_norm.cc: LayerNormalization (dlrt/nn/layer_norm.hpp).
#include "dlrt/nn/layer_norm.hpp"

namespace dlrt::nn {

LayerNormalization::LayerNormalization(int64_t axis, double epsilon, bool center, bool scale)
    : axis_(axis), epsilon_(epsilon), center_(center), scale_(scale) {
  if (!(epsilon > 0.0))
    throw Error(DLRT_INVALID_ARGUMENT, "LayerNormalization: epsilon must be > 0");
}

std::string LayerNormalization::type() const { return "LayerNormalization"; }

bool LayerNormalization::float32_only() const { return true; }

std::string LayerNormalization::base_name() const { return "layer_normalization"; }

std::shared_ptr<Layer> LayerNormalization::clone() const {
  return std::make_shared<LayerNormalization>(*this);
}

Shape LayerNormalization::output_shape(const Shape& in) const {
  features(in);  // refuses an axis other than the last
  return in;
}

std::vector<ParamSpec> LayerNormalization::params(const Shape& in) const {
  const Shape d = {features(in)};
  std::vector<ParamSpec> p;
  if (scale_) p.push_back({"gamma", d, Initializer::ones(), true});
  if (center_) p.push_back({"beta", d, Initializer::zeros(), true});
  return p;
}

Value LayerNormalization::call(CallContext& c, Value x, const std::vector<Value>& v) const {
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

int64_t LayerNormalization::features(const Shape& in) const {
  const int64_t rank = static_cast<int64_t>(in.size());
  if (rank < 1 || !(axis_ == -1 || axis_ == rank))  // Keras' axis counts the batch
    throw bad_input(in, "(None, ..., D) normalised over its last axis (axis -1 or " +
                            std::to_string(rank) + "); axis is " + std::to_string(axis_));
  return in.back();
}

}  // namespace dlrt::nn
