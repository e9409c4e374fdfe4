// core/ops/infer_activation.cc: the activations beyond relu/sigmoid/tanh (elu, gelu, silu,
// hard_swish, softplus, mish, clip), the unary maths abs/square/rsqrt, and the backward ops
// <name>_grad(dy, x) -> dx that their gradient rules emit.
//
// Every forward op keeps its input's type and shape. Each backward op reads x (not y), as
// oneDNN's eltwise backward primitives of the same algorithm do (elu, gelu_erf, gelu_tanh,
// swish, hardswish, soft_relu, mish, clip, abs), so the cpu plugin runs both passes on oneDNN.
// square and rsqrt have no backward op: their rules compose mul/add (core/autodiff).
//
// Where a derivative has a kink, the value at the kink follows PyTorch (docs/ops.md, "Notes"):
// abs' (0) = 0, clip passes dy for min <= x <= max, hard_swish' (-3) = -0.5 and (3) = 1.5.
#include <limits>

#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in;
using detail::in_const;
using detail::out;

constexpr const char* kBackward =
    "it is a backward op, and dlrt differentiates to first order only";

// x -> y of x's type and shape.
OpDef act(const char* name, const char* doc, Values x, std::vector<Sample> extra = {}) {
  return OpDef{name,
               "elementwise",
               doc,
               {in("x", kFloatTypes)},
               {out("y")},
               {},
               detail::infer_same_as_input0,
               {}}
      .sampled(samples::unary(x, std::move(extra)));
}

// (dy, x) -> dx, both of one shape; x drawn from `x` (the forward op's range).
OpDef act_grad(const char* name, const char* doc, Values x) {
  return OpDef{name,
               "elementwise",
               doc,
               {in_const("dy", kFloatTypes), in_const("x", kFloatTypes)},
               {out("dx")},
               {},
               detail::infer_activation_grad,
               {}}
      .sampled(samples::activation_grad(x))
      .gradient_free(kBackward);
}

// Attributes shared by a forward op and its backward op.
AttrSpec elu_alpha() {
  // Keras, PyTorch and ONNX all default to 1.0.
  return optional_attr("alpha", 1.0).try_values({0.5, 2.0}).describe("scale of the negative part");
}
AttrSpec gelu_approximate() {
  // PyTorch's name and values; Keras' approximate=True is "tanh".
  return optional_attr("approximate", "none")
      .one_of({"none", "tanh"})
      .describe("\"none\": the exact erf form; \"tanh\": the tanh approximation");
}
// ONNX Clip: an absent bound does not clip, so the defaults are -inf and +inf.
AttrSpec clip_min() {
  return optional_attr("min", -std::numeric_limits<double>::infinity())
      .try_values({-1.0, 0.25})
      .describe("lower bound");
}
AttrSpec clip_max() {
  return optional_attr("max", std::numeric_limits<double>::infinity())
      .try_values({0.5})
      .describe("upper bound");
}

// clip with both bounds, and with min > max (every element becomes max, as PyTorch's clamp
// and NumPy's clip give).
std::vector<Sample> clip_extra() {
  Sample both{{f32_in("x", {3, 5, 7}, uniform(-3, 3))}};
  both.attrs.emplace("min", -1.5);
  both.attrs.emplace("max", 0.75);
  Sample inverted{{f32_in("x", {11}, uniform(-3, 3))}, {}, true, "min > max gives max"};
  inverted.attrs.emplace("min", 1.0);
  inverted.attrs.emplace("max", -1.0);
  return {both, inverted};
}

}  // namespace

std::vector<OpDef> activation_ops() {
  const Values u = uniform(-3, 3);
  // softplus and silu stay finite and accurate at large magnitudes (no exp overflow).
  const Sample large{{f32_in("x", {9}, uniform(-100, 100))}, {}, true, "large magnitudes"};
  const Sample negatives{{f32_in("x", {9}, uniform(-3, -0.1))}, {}, true, "negatives give NaN"};
  // hard_swish's three pieces: x < -3, -3 <= x <= 3, x > 3.
  const Values hs = uniform(-5, 5);
  return {
      act("elu", "y = x where x > 0, else alpha * (exp(x) - 1)", u).with_attr(elu_alpha()),
      act("gelu", "y = x * Phi(x) (erf form), or its tanh approximation", u)
          .with_attr(gelu_approximate()),
      act("silu", "y = x * sigmoid(x) (Keras swish)", uniform(-6, 6), {large}),
      act("hard_swish", "y = x * relu6(x + 3) / 6", hs),
      act("softplus", "y = log(1 + exp(x)), computed as max(x, 0) + log1p(exp(-abs(x)))",
          uniform(-6, 6), {large}),
      act("mish", "y = x * tanh(softplus(x)) (Keras mish)", uniform(-6, 6), {large}),
      act("clip", "y = min(max(x, min), max)", u, clip_extra())
          .with_attr(clip_min())
          .with_attr(clip_max()),
      act("abs", "y = abs(x)", u),
      act("square", "y = x * x", u),
      act("rsqrt", "y = 1 / sqrt(x); NaN for negatives, inf at 0", uniform(0.05, 20),
          {negatives, {{f32_in("x", {4}, constant(0))}, {}, true, "rsqrt(0) = inf"}}),
      // Backward ops: x from the forward op's range. Random values never land exactly on a
      // kink (clip's bounds, hard_swish's -3 and 3; the reference and CUDA math tests check
      // those values); abs_grad's x keeps away from 0, where the sign flips.
      act_grad("elu_grad", "dx = dy where x > 0, else dy * alpha * exp(x)", u)
          .with_attr(elu_alpha()),
      act_grad("gelu_grad", "dx = dy * gelu'(x), of the form `approximate` names", u)
          .with_attr(gelu_approximate()),
      act_grad("silu_grad", "dx = dy * s * (1 + x * (1 - s)), s = sigmoid(x)", uniform(-6, 6)),
      act_grad("hard_swish_grad", "dx = 0 where x < -3, dy where x > 3, else dy * (2x + 3) / 6",
               hs),
      act_grad("softplus_grad", "dx = dy * sigmoid(x)", uniform(-6, 6)),
      act_grad("mish_grad", "dx = dy * (t + x * sigmoid(x) * (1 - t^2)), t = tanh(softplus(x))",
               uniform(-6, 6)),
      act_grad("clip_grad", "dx = dy where min <= x <= max, else 0", u)
          .with_attr(clip_min())
          .with_attr(clip_max()),
      act_grad("abs_grad", "dx = dy * sign(x) (0 at x = 0)", away_from_zero(0.01, 3)),
  };
}

}  // namespace dlrt::ops
