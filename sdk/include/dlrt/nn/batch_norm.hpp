// dlrt/nn/batch_norm.hpp: Keras' BatchNormalization layer.
//
//   nn::BatchNormalization(axis = -1, momentum = 0.99, epsilon = 1e-3, center = true,
//                          scale = true)
//
// Parameters, in Keras' order and with its initial values: gamma (C) ones (when `scale`),
// beta (C) zeros (when `center`), both trainable; moving_mean (C) zeros and
// moving_variance (C) ones, non-trainable. All four are state variables of the model
// ("batch_normalization/moving_mean", ...), so state(), save_weights and load_weights carry
// the moving statistics like any weight.
//
// Training vs inference, as Keras:
//   fit (the training step): y = gamma*(x - mean_B)/sqrt(var_B + epsilon) + beta with the
//     batch's own statistics (op batch_norm_train), and the step assigns the moving
//     statistics their new values,
//       moving = momentum*moving + (1 - momentum)*batch
//     (Keras' and ONNX's side of momentum; PyTorch's momentum m is 1 - m here). The batch
//     variance that normalises is the biased one; the one moving_variance follows is unbiased
//     (count/(count-1), count = values per channel in the batch), as PyTorch's running_var
//     (Keras follows the biased one; docs/ops.md, batch_norm_train).
//   evaluate / predict: y = gamma*(x - moving_mean)/sqrt(moving_variance + epsilon) + beta
//     (op batch_norm), which changes nothing. A frozen layer (set_trainable(false), taken at
//     compile()) computes this in the training step too, and its statistics stay as they are.
//     After a linear Conv2D or Dense that nothing else reads, the compile's graph pass
//     fold_batch_norm folds this affine map into its weights (core/passes;
//     CompileConfig::fold_batch_norm turns it off).
// Known differences from Keras: fit pads the last partial batch of an epoch with copies of
// row 0 (session.hpp), and those rows count in that step's batch statistics; under a
// distribution strategy the replicated step normalises with each replica's batch statistics
// but does not move the moving statistics (they keep their initial or loaded values).
//
// In a functional model: `x = nn::BatchNormalization()(nn::Conv2D(16, {3, 3})(in));` — the
// same ops, moving-statistic updates and checkpoint names as in a Sequential.
//
// Inputs: images (H, W, C) with axis -1 or 3 (NHWC, the channel last) or axis 1 (the
// channel first, data_format NCHW); flat features (C) with axis -1 or 1 (after Dense).
// Anything else is INVALID_ARGUMENT naming the layer.
#ifndef DLRT_NN_BATCH_NORM_HPP_
#define DLRT_NN_BATCH_NORM_HPP_

#include <cstdint>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/layer.hpp"

namespace dlrt::nn {

class BatchNormalization : public Layer {
 public:
  explicit BatchNormalization(int64_t axis = -1, double momentum = 0.99, double epsilon = 1e-3,
                              bool center = true, bool scale = true);

  std::string type() const override;
  bool float32_only() const override;  // mixed_precision.hpp
  std::string base_name() const override;
  // Callable on symbolic tensors (functional models): the node keeps this copy. The moving
  // statistics are the model's variables, not the layer's, so a copy holds no values and
  // a functional model updates and checkpoints them exactly as a Sequential does.
  std::shared_ptr<Layer> clone() const override;
  Shape output_shape(const Shape& in) const override;
  std::vector<ParamSpec> params(const Shape& in) const override;
  // batch_norm_train in a training step (trainable layers), batch_norm elsewhere, activation
  // none: a ReLU after it, or a residual block's Add + ReLU, is fused by the core's graph
  // passes (fuse_bias_activation, fuse_residual_tail; CompileConfig turns them off).
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override;

  double momentum() const { return momentum_; }
  double epsilon() const { return epsilon_; }

 private:
  // The channel axis of a sample (no batch dim) as a positive index; throws when it fits none
  // of the layouts the ops take.
  size_t channel_axis(const Shape& in) const;
  bool channels_first(const Shape& in) const { return in.size() == 3 && channel_axis(in) == 0; }
  int64_t channels(const Shape& in) const { return in.at(channel_axis(in)); }
  static std::vector<float> ones(int64_t n) { return std::vector<float>(size_t(n), 1.f); }

  int64_t axis_;
  double momentum_, epsilon_;
  bool center_, scale_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_BATCH_NORM_HPP_
