// loss_scale.cc: dynamic loss scaling's ops (dlrt/nn/loss_scale.hpp).
#include "dlrt/nn/loss_scale.hpp"

namespace dlrt::nn::detail {

// x * 0 is 0 for a finite x and NaN for an infinite or NaN one, so the sum of all of them is
// 0 exactly when all are finite.
Value all_finite(Graph& g, const std::vector<Value>& grads) {
  Value zero = g.constant<float>("", {}, {0.f});
  Value sum;
  for (const Value& gr : grads) {
    Value z = g.op1("reduce_sum", {g.op1("mul", {gr, zero})});
    sum = sum ? g.op1("add", {sum, z}) : z;
  }
  return sum ? g.op1("equal", {sum, zero}) : g.op1("equal", {zero, zero});
}

void update_loss_scale(Graph& g, Value scale, Value good_steps, Value finite) {
  auto constant = [&](float v) { return g.constant<float>("", {}, {v}); };
  Value counted = g.op1("add", {good_steps, constant(1.f)});
  Value grow = g.op1("equal", {counted, constant(static_cast<float>(kLossScaleGrowthSteps))});
  Value grown = g.op1("where", {grow, g.op1("mul", {scale, constant(2.f)}), scale});
  Value halved = g.op1("maximum", {g.op1("mul", {scale, constant(0.5f)}), constant(1.f)});
  g.assign(scale, g.op1("where", {finite, grown, halved}));
  g.assign(good_steps,
           g.op1("where", {finite, g.op1("where", {grow, constant(0.f), counted}), constant(0.f)}));
}

}  // namespace dlrt::nn::detail
