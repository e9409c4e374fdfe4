// batch_norm.cc: BatchNormalization (dlrt/nn/batch_norm.hpp).
#include "dlrt/nn/batch_norm.hpp"

#include <optional>

namespace dlrt::nn {

BatchNormalization::BatchNormalization(int64_t axis, double momentum, double epsilon, bool center,
                                       bool scale)
    : axis_(axis), momentum_(momentum), epsilon_(epsilon), center_(center), scale_(scale) {
  if (!(momentum >= 0.0 && momentum <= 1.0))
    throw Error(DLRT_INVALID_ARGUMENT, "BatchNormalization: momentum must be in [0, 1]");
  if (!(epsilon > 0.0))
    throw Error(DLRT_INVALID_ARGUMENT, "BatchNormalization: epsilon must be > 0");
}

std::string BatchNormalization::type() const { return "BatchNormalization"; }

bool BatchNormalization::float32_only() const { return true; }

std::string BatchNormalization::base_name() const { return "batch_normalization"; }

std::shared_ptr<Layer> BatchNormalization::clone() const {
  return std::make_shared<BatchNormalization>(*this);
}

Shape BatchNormalization::output_shape(const Shape& in) const {
  channels(in);  // refuses an axis that does not fit
  return in;
}

std::vector<ParamSpec> BatchNormalization::params(const Shape& in) const {
  const Shape c = {channels(in)};
  std::vector<ParamSpec> p;
  if (scale_) p.push_back({"gamma", c, Initializer::ones(), true});
  if (center_) p.push_back({"beta", c, Initializer::zeros(), true});
  p.push_back({"moving_mean", c, Initializer::zeros(), false});
  p.push_back({"moving_variance", c, Initializer::ones(), false});
  return p;
}

// x: (B, H, W, C) or (B, C, H, W) or (B, C); v: params() in order.
Value BatchNormalization::call(CallContext& c, Value x, const std::vector<Value>& v) const {
  const std::vector<int64_t> dims = x.dims();  // by value: one copy for both iterators
  const Shape sample(dims.begin() + 1, dims.end());
  const int64_t ch = channels(sample);
  size_t k = 0;
  const Value gamma = scale_ ? v[k++] : c.graph.constant<float>("", {ch}, ones(ch));
  const Value beta =
      center_ ? v[k++] : c.graph.constant<float>("", {ch}, std::vector<float>(size_t(ch), 0.f));
  const Value moving_mean = v[k], moving_variance = v[k + 1];
  const std::string format = channels_first(sample) ? "NCHW" : "NHWC";
  // A frozen layer (set_trainable(false)) runs in inference mode even in a training step,
  // as Keras' BatchNormalization does since TF 2.0: fine-tuning keeps its statistics.
  if (!c.training || !trainable())
    return c.graph.op1("batch_norm", {x, gamma, beta, moving_mean, moving_variance},
                       {{"epsilon", epsilon_}, {"data_format", format}}, c.node(name_));
  // (y, moving_mean', moving_variance', saved_mean, saved_inv_std)
  std::vector<Value> out = c.graph.op(
      "batch_norm_train", {x, gamma, beta, moving_mean, moving_variance},
      {{"epsilon", epsilon_}, {"momentum", momentum_}, {"data_format", format}}, c.node(name_));
  if (c.state_updates != nullptr) {
    c.state_updates->push_back({moving_mean, out[1]});
    c.state_updates->push_back({moving_variance, out[2]});
  }
  return out[0];
}

size_t BatchNormalization::channel_axis(const Shape& in) const {
  const int64_t rank = static_cast<int64_t>(in.size());
  const int64_t a = axis_ < 0 ? axis_ + rank : axis_ - 1;  // Keras' axis counts the batch
  if (rank == 3 && (a == 2 || a == 0)) return static_cast<size_t>(a);
  if (rank == 1 && a == 0) return 0;
  throw bad_input(in,
                  "(None, H, W, C) with axis -1 or 3, (None, C, H, W) with axis 1, or "
                  "(None, C) with axis -1 or 1; axis is " +
                      std::to_string(axis_));
}

}  // namespace dlrt::nn
