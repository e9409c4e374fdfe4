// rules_math_unary.cc: gradient rules of the unary maths in core/ops/infer_math.cc. Each
// composes forward ops (no backward op of its own), reading y where that is cheaper than
// recomputing from x:
//   sin   dx = dy * cos(x)              asin  dx = dy * rsqrt(1 - x^2)
//   cos   dx = -dy * sin(x)             acos  dx = -dy * rsqrt(1 - x^2)
//   tan   dx = dy * (1 + y^2)           atan  dx = dy / (1 + x^2)
//   sinh  dx = dy * cosh(x)             asinh dx = dy * rsqrt(x^2 + 1)
//   cosh  dx = dy * sinh(x)             acosh dx = dy * rsqrt(x^2 - 1)
//   erf   dx = dy * 2/sqrt(pi) * exp(-x^2)
//   atanh dx = dy / (1 - x^2)
//   ceil, floor, round, sign: zeros (PyTorch's choice; the derivative is 0 almost everywhere)
// Outside an op's domain the gradient is NaN, as the forward value is.
#include <cmath>

#include "rules.hpp"

namespace dlrt::core::autodiff {
namespace {

ValueRef scalar(GradContext& c, double v, const char* what) {
  return c.fill({c.in_type(0).dtype, {}}, v, what);
}
ValueRef x_squared(GradContext& c) { return c.emit("square", "x_squared", {c.input(0)}); }
// dx = dy * f
void times(GradContext& c, ValueRef f) { c.set_dx(0, c.emit("mul", "dx", {*c.dy(0), f})); }
// dx = -dy * f
void minus_times(GradContext& c, ValueRef f) {
  c.set_dx(0, c.emit("neg", "dx", {c.emit("mul", "dy_f", {*c.dy(0), f})}));
}

void sin_rule(GradContext& c) { times(c, c.emit("cos", "cos_x", {c.input(0)})); }
void cos_rule(GradContext& c) { minus_times(c, c.emit("sin", "sin_x", {c.input(0)})); }
void tan_rule(GradContext& c) {
  ValueRef y2 = c.emit("square", "y_squared", {c.output(0)});
  times(c, c.emit("add", "one_plus_y2", {y2, scalar(c, 1.0, "one")}));
}
// rsqrt(1 - x^2): asin' and, negated, acos'.
ValueRef inverse_cos_of_asin(GradContext& c) {
  ValueRef t = c.emit("sub", "one_minus_x2", {scalar(c, 1.0, "one"), x_squared(c)});
  return c.emit("rsqrt", "rsqrt", {t});
}
void asin_rule(GradContext& c) { times(c, inverse_cos_of_asin(c)); }
void acos_rule(GradContext& c) { minus_times(c, inverse_cos_of_asin(c)); }
void atan_rule(GradContext& c) {
  ValueRef t = c.emit("add", "one_plus_x2", {x_squared(c), scalar(c, 1.0, "one")});
  c.set_dx(0, c.emit("div", "dx", {*c.dy(0), t}));
}
void sinh_rule(GradContext& c) { times(c, c.emit("cosh", "cosh_x", {c.input(0)})); }
void cosh_rule(GradContext& c) { times(c, c.emit("sinh", "sinh_x", {c.input(0)})); }
void asinh_rule(GradContext& c) {
  ValueRef t = c.emit("add", "x2_plus_one", {x_squared(c), scalar(c, 1.0, "one")});
  times(c, c.emit("rsqrt", "rsqrt", {t}));
}
void acosh_rule(GradContext& c) {
  ValueRef t = c.emit("sub", "x2_minus_one", {x_squared(c), scalar(c, 1.0, "one")});
  times(c, c.emit("rsqrt", "rsqrt", {t}));
}
void atanh_rule(GradContext& c) {
  ValueRef t = c.emit("sub", "one_minus_x2", {scalar(c, 1.0, "one"), x_squared(c)});
  c.set_dx(0, c.emit("div", "dx", {*c.dy(0), t}));
}
void erf_rule(GradContext& c) {
  ValueRef e = c.emit("exp", "exp_minus_x2", {c.emit("neg", "minus_x2", {x_squared(c)})});
  const double two_over_sqrt_pi = 2.0 / std::sqrt(M_PI);
  times(c, c.emit("mul", "erf_slope", {e, scalar(c, two_over_sqrt_pi, "two_over_sqrt_pi")}));
}
void zero_rule(GradContext& c) { c.set_dx(0, c.fill(c.in_type(0), 0.0, "dx")); }

}  // namespace

void add_math_unary_rules(RuleTable& t) {
  t["sin"] = sin_rule;
  t["cos"] = cos_rule;
  t["tan"] = tan_rule;
  t["asin"] = asin_rule;
  t["acos"] = acos_rule;
  t["atan"] = atan_rule;
  t["sinh"] = sinh_rule;
  t["cosh"] = cosh_rule;
  t["asinh"] = asinh_rule;
  t["acosh"] = acosh_rule;
  t["atanh"] = atanh_rule;
  t["erf"] = erf_rule;
  for (const char* op : {"ceil", "floor", "round", "sign"}) t[op] = zero_rule;
}

}  // namespace dlrt::core::autodiff
