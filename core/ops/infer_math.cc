// core/ops/infer_math.cc: the unary maths ONNX, NumPy and PyTorch share beyond exp/log/sqrt:
// trigonometry (sin cos tan asin acos atan), hyperbolic functions (sinh cosh asinh acosh
// atanh), erf, and the rounding family (ceil floor round sign).
//
// Each keeps its input's type and shape and takes f32, the 16-bit floats and f64 (ONNX's
// DOUBLE models use them too). Domains are IEEE's: asin/acos of |x| > 1, acosh of x < 1 and
// atanh of |x| > 1 are NaN; atanh(+-1) is +-inf. `round` rounds halves to even (ONNX Round,
// NumPy's round, torch.round), not away from zero as C's round() does.
//
// Gradients (core/autodiff/rules_math_unary.cc) compose existing ops, so no backward ops are
// needed; ceil/floor/round/sign have zero derivative almost everywhere and their rules give
// zeros, as PyTorch's do (TensorFlow gives no gradient at all, which stops training through
// them silently).
#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in;
using detail::kFloatAndF64Types;
using detail::out;

// x -> y of x's type and shape; samples from `x`, plus an f64 sample in the same range.
OpDef math_unary(const char* name, const char* doc, Values x, std::vector<Sample> extra = {}) {
  extra.push_back({{typed_in("x", DLRT_F64, {3, 4}, x)}, {}, false, "f64"});
  return OpDef{name,
               "elementwise",
               doc,
               {in("x", kFloatAndF64Types)},
               {out("y")},
               {},
               detail::infer_same_as_input0,
               {}}
      .sampled(samples::unary(x, std::move(extra)));
}

}  // namespace

std::vector<OpDef> math_ops() {
  // Outside the domain: NaN (asin, acos, acosh) as the spec states.
  const Sample outside{{f32_in("x", {6}, uniform(1.5, 4))}, {}, true, "outside [-1, 1] gives NaN"};
  const Sample below_one{{f32_in("x", {6}, uniform(-2, 0.9))}, {}, true, "x < 1 gives NaN"};
  // Integers stay integers; a tie rounds to the even neighbour (2.5 -> 2, 3.5 -> 4).
  const Sample integral{{f32_in("x", {9}, integers(-9, 9))}, {}, true, "integers"};
  const Sample tie_down{{f32_in("x", {3}, constant(2.5))}, {}, true, "2.5 rounds to 2"};
  const Sample tie_up{{f32_in("x", {3}, constant(3.5))}, {}, true, "3.5 rounds to 4"};
  return {
      math_unary("sin", "y = sin(x) (radians)", uniform(-6, 6)),
      math_unary("cos", "y = cos(x) (radians)", uniform(-6, 6)),
      // Away from the poles at +-pi/2, where tan's slope makes any rounding visible.
      math_unary("tan", "y = tan(x) (radians)", uniform(-1.3, 1.3)),
      math_unary("asin", "y = asin(x); NaN outside [-1, 1]", uniform(-0.95, 0.95), {outside}),
      math_unary("acos", "y = acos(x); NaN outside [-1, 1]", uniform(-0.95, 0.95), {outside}),
      math_unary("atan", "y = atan(x)", uniform(-8, 8)),
      math_unary("sinh", "y = sinh(x)", uniform(-5, 5)),
      math_unary("cosh", "y = cosh(x)", uniform(-5, 5)),
      math_unary("asinh", "y = asinh(x)", uniform(-8, 8)),
      math_unary("acosh", "y = acosh(x); NaN below 1", uniform(1.05, 10), {below_one}),
      math_unary("atanh", "y = atanh(x); NaN outside [-1, 1], +-inf at +-1", uniform(-0.95, 0.95)),
      math_unary("erf", "y = erf(x) = 2/sqrt(pi) * integral of exp(-t^2) from 0 to x",
                 uniform(-3, 3)),
      math_unary("ceil", "y = the least integer >= x", uniform(-5, 5), {integral}).tol(kExact),
      math_unary("floor", "y = the greatest integer <= x", uniform(-5, 5), {integral}).tol(kExact),
      math_unary("round", "y = x rounded to the nearest integer, halves to even", uniform(-5, 5),
                 {integral, tie_down, tie_up})
          .tol(kExact),
      math_unary("sign", "y = -1, 0 or 1 as x < 0, x = 0, x > 0 (NaN stays NaN)", uniform(-2, 2),
                 {{{f32_in("x", {4}, constant(0))}, {}, true, "sign(0) = 0"}})
          .tol(kExact),
  };
}

}  // namespace dlrt::ops
