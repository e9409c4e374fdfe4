// dlrt/nn/loss_scale.hpp: dynamic loss scaling for f16 compute, as Keras' LossScaleOptimizer
// (mixed_precision.hpp). Used by fit's step (session.hpp) and by custom steps
// (train_step.hpp): both build, in the one compiled step,
//
//   grads  = gradients(loss * scale) * (1 / scale)
//   finite = every element of every gradient is finite
//   the optimizer's updates and step count   only where finite (Optimizer::apply_all's apply_if)
//   scale  = finite ? (2000 finite steps in a row ? 2 * scale : scale) : max(scale / 2, 1)
//
// with `scale` (2^15 at first) and the count of finite steps as f32 state variables of the
// step. f16's largest value is 65504 and its smallest normal 6e-5: small gradients underflow
// to 0 unless the loss is scaled up, and a scale too large overflows, which this detects and
// backs off from. bf16 has f32's exponent range and needs none of it.
#pragma once

#include <vector>

#include "dlrt/dlrt.hpp"

namespace dlrt::nn::detail {

// The first scale, and how many finite steps in a row double it (Keras' defaults).
inline constexpr float kInitialLossScale = 32768.f;  // 2^15
inline constexpr int64_t kLossScaleGrowthSteps = 2000;

// A bool scalar: every element of every gradient is finite.
Value all_finite(Graph& g, const std::vector<Value>& grads);

// The unscaled gradients of `loss` with respect to `wrt` (f32 values), computed from
// loss * scale; *finite gets all_finite of them. `gradients_of` is the caller's gradient
// function (fit's works on variable indices, a custom step's on values).
template <typename GradientsOf>
std::vector<Value> scaled_gradients(Graph& g, Value loss, Value scale, GradientsOf gradients_of,
                                    Value* finite) {
  std::vector<Value> grads = gradients_of(g.op1("mul", {loss, scale}));
  Value inverse = g.op1("div", {g.constant<float>("", {}, {1.f}), scale});
  for (Value& gr : grads) gr = g.op1("mul", {gr, inverse});
  *finite = all_finite(g, grads);
  return grads;
}

// The scale's update after a step (the top of this file): assigns `scale` and `good_steps`.
void update_loss_scale(Graph& g, Value scale, Value good_steps, Value finite);

}  // namespace dlrt::nn::detail
