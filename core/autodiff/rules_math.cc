// rules_math.cc: gradient rules of elementwise arithmetic, reductions, shape ops, copy, cast.
//
// Broadcasting: a binary op's output has the broadcast shape; the gradient of an input is
// the output gradient summed over the axes that input was stretched along (GradContext::
// sum_to), so that it has the input's shape again.
#include <fmt/format.h>

#include "rules.hpp"
#include "status.hpp"

namespace dlrt::core::autodiff {
namespace {

// c = a + b: da = sum_to(dc, a), db = sum_to(dc, b).
void add_rule(GradContext& c) {
  ValueRef dy = *c.dy(0);
  if (c.needs(0)) c.set_dx(0, c.sum_to(dy, c.in_dims(0), "da"));
  if (c.needs(1)) c.set_dx(1, c.sum_to(dy, c.in_dims(1), "db"));
}

// c = a - b: da = sum_to(dc, a), db = -sum_to(dc, b) (negated after the sum: fewer elements).
void sub_rule(GradContext& c) {
  ValueRef dy = *c.dy(0);
  if (c.needs(0)) c.set_dx(0, c.sum_to(dy, c.in_dims(0), "da"));
  if (c.needs(1)) c.set_dx(1, c.emit("neg", "db", {c.sum_to(dy, c.in_dims(1), "db")}));
}

// c = a * b: da = sum_to(dc * b, a), db = sum_to(dc * a, b).
void mul_rule(GradContext& c) {
  ValueRef dy = *c.dy(0);
  if (c.needs(0))
    c.set_dx(0, c.sum_to(c.emit("mul", "da_mul", {dy, c.input(1)}), c.in_dims(0), "da"));
  if (c.needs(1))
    c.set_dx(1, c.sum_to(c.emit("mul", "db_mul", {dy, c.input(0)}), c.in_dims(1), "db"));
}

// c = a / b: da = sum_to(dc / b, a), db = -sum_to(dc * c / b, b)  (dc * a / b^2, written with
// the output c so no square is needed).
void div_rule(GradContext& c) {
  ValueRef dy = *c.dy(0);
  if (c.needs(0))
    c.set_dx(0, c.sum_to(c.emit("div", "da_div", {dy, c.input(1)}), c.in_dims(0), "da"));
  if (c.needs(1)) {
    ValueRef t = c.emit("mul", "db_mul", {dy, c.output(0)});
    t = c.emit("div", "db_div", {t, c.input(1)});
    c.set_dx(1, c.emit("neg", "db", {c.sum_to(t, c.in_dims(1), "db")}));
  }
}

void neg_rule(GradContext& c) { c.set_dx(0, c.emit("neg", "dx", {*c.dy(0)})); }
// y = exp(x): dx = dy * y.
void exp_rule(GradContext& c) { c.set_dx(0, c.emit("mul", "dx", {*c.dy(0), c.output(0)})); }
// y = log(x): dx = dy / x.
void log_rule(GradContext& c) { c.set_dx(0, c.emit("div", "dx", {*c.dy(0), c.input(0)})); }
// y = sqrt(x): dx = dy / (2y), with 2y as y + y.
void sqrt_rule(GradContext& c) {
  ValueRef two_y = c.emit("add", "two_y", {c.output(0), c.output(0)});
  c.set_dx(0, c.emit("div", "dx", {*c.dy(0), two_y}));
}

// y = x^2: dx = dy * (x + x).
void square_rule(GradContext& c) {
  ValueRef two_x = c.emit("add", "two_x", {c.input(0), c.input(0)});
  c.set_dx(0, c.emit("mul", "dx", {*c.dy(0), two_x}));
}
// y = x^(-1/2): dx = dy * (-1/2) x^(-3/2) = dy * y^3 * (-1/2).
void rsqrt_rule(GradContext& c) {
  const ValueRef y = c.output(0);
  ValueRef y3 = c.emit("mul", "y_cubed", {y, c.emit("mul", "y_squared", {y, y})});
  ValueRef t = c.emit("mul", "dy_y_cubed", {*c.dy(0), y3});
  c.set_dx(0, c.emit("mul", "dx", {t, c.fill({c.in_type(0).dtype, {}}, -0.5, "minus_half")}));
}

// The gradient picks: where(mask, dy, 0) to the first operand and where(mask, 0, dy) to the
// second, each summed back to its operand's shape (mask has dy's broadcast shape).
void split_by_mask(GradContext& c, ValueRef mask, int first, int second) {
  ValueRef dy = *c.dy(0);
  ValueRef zero = c.fill({c.type_of(dy).dtype, {}}, 0.0, "zero");
  if (c.needs(first))
    c.set_dx(first, c.sum_to(c.emit("where", "pick_first", {mask, dy, zero}), c.in_dims(first),
                             "d_first"));
  if (c.needs(second))
    c.set_dx(second, c.sum_to(c.emit("where", "pick_second", {mask, zero, dy}), c.in_dims(second),
                              "d_second"));
}
// c = maximum(a, b): dy goes to a where a >= b, else to b; minimum: to a where a <= b. Ties
// go to a, as TensorFlow's tf.maximum/tf.minimum gradients give (PyTorch splits them in half).
void maximum_rule(GradContext& c) {
  split_by_mask(c, c.emit("greater_equal", "a_selected", {c.input(0), c.input(1)}), 0, 1);
}
void minimum_rule(GradContext& c) {
  split_by_mask(c, c.emit("less_equal", "a_selected", {c.input(0), c.input(1)}), 0, 1);
}
// z = where(cond, x, y): dz to x where cond, else to y; cond gets none.
void where_rule(GradContext& c) { split_by_mask(c, c.input(0), 1, 2); }

// c = a ** b: da = sum_to(dc * b * a^(b-1), a); db = sum_to(dc * c * log(a), b), with 0 where
// a == 0 (PyTorch's choice for a = 0, b >= 0; log(0) would give -inf * 0 = NaN). db is NaN for
// a < 0, as PyTorch gives it.
void pow_rule(GradContext& c) {
  ValueRef dy = *c.dy(0);
  const ValueRef a = c.input(0), b = c.input(1);
  const dlrt_dtype t = c.in_type(0).dtype;
  if (c.needs(0)) {
    ValueRef b_minus_1 = c.emit("sub", "b_minus_1", {b, c.fill({t, {}}, 1.0, "one")});
    ValueRef slope = c.emit("mul", "b_pow", {b, c.emit("pow", "pow_b_minus_1", {a, b_minus_1})});
    c.set_dx(0, c.sum_to(c.emit("mul", "da_mul", {dy, slope}), c.in_dims(0), "da"));
  }
  if (c.needs(1)) {
    ValueRef zero = c.fill({t, {}}, 0.0, "zero");
    ValueRef c_log_a = c.emit("mul", "c_log_a", {c.output(0), c.emit("log", "log_a", {a})});
    ValueRef a_zero = c.emit("equal", "a_is_zero", {a, zero});
    ValueRef slope = c.emit("where", "db_slope", {a_zero, zero, c_log_a});
    c.set_dx(1, c.sum_to(c.emit("mul", "db_mul", {dy, slope}), c.in_dims(1), "db"));
  }
}

// The reduced axes of a reduce op, normalised (empty "axes" = every axis), and the shape of
// its output with keepdims, i.e. x's shape with those axes set to 1.
ops::Dims kept_dims(GradContext& c, int64_t* count) {
  const ops::Dims& x = c.in_dims(0);
  const ops::Ints& axes = c.attr("axes").as_ints();
  ops::Dims kept = x;
  *count = 1;
  for (int a = 0; a < int(x.size()); ++a) {
    bool reduced = axes.empty();
    for (int64_t ax : axes) reduced = reduced || (ax < 0 ? ax + int64_t(x.size()) : ax) == a;
    if (reduced) *count *= x[a], kept[a] = 1;
  }
  return kept;
}

// dy (the reduced shape) back to x's shape: reshape to the keepdims shape, then broadcast.
// reduce_mean first scales by 1/count, on the small tensor.
void reduce_sum_mean_rule(GradContext& c) {
  int64_t count = 1;
  const ops::Dims kept = kept_dims(c, &count);
  ValueRef g = c.reshape_to(*c.dy(0), kept, "dy_kept");
  if (c.op() == "reduce_mean") {
    ops::TensorType t = c.type_of(g);
    g = c.emit("mul", "scale", {g, c.fill(t, 1.0 / double(count), "inv_count")});
  }
  if (c.type_of(g).dims != c.in_dims(0))
    g = c.emit("broadcast_to", "dx", {g},
               {{"shape", ops::Ints(c.in_dims(0).begin(), c.in_dims(0).end())}});
  c.set_dx(0, g);
}

// dy split equally among the maxima of each reduced group.
void reduce_max_rule(GradContext& c) {
  c.set_dx(0, c.emit("reduce_max_grad", "dx", {c.input(0), c.output(0), *c.dy(0)}, c.attrs()));
}

// y = broadcast_to(x): dx = dy summed back to x's shape.
void broadcast_to_rule(GradContext& c) { c.set_dx(0, c.sum_to(*c.dy(0), c.in_dims(0), "dx")); }

// reshape, flatten: the same elements in the same order, so reshape back.
void reshape_rule(GradContext& c) { c.set_dx(0, c.reshape_to(*c.dy(0), c.in_dims(0), "dx")); }

// y.dims[i] = x.dims[perm[i]]: transposing by the inverse permutation undoes it.
void transpose_rule(GradContext& c) {
  const ops::Ints& perm = c.attr("perm").as_ints();
  ops::Ints inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[size_t(perm[i])] = int64_t(i);
  c.set_dx(0, c.emit("transpose", "dx", {*c.dy(0)}, {{"perm", inverse}}));
}

// Identity: the gradient passes through unchanged (no node; placement inserts any copy the
// devices need, as for every other edge).
void copy_rule(GradContext& c) { c.set_dx(0, *c.dy(0)); }

// float -> float: cast the gradient back to x's dtype. An integer x never needs a gradient,
// and an integer y never receives one, so nothing flows through float <-> int casts.
void cast_rule(GradContext& c) {
  c.set_dx(0, c.emit("cast", "dx", {*c.dy(0)}, {{"dtype", c.in_type(0).dtype}}));
}

}  // namespace

void add_math_rules(RuleTable& t) {
  t["add"] = add_rule;
  t["sub"] = sub_rule;
  t["mul"] = mul_rule;
  t["div"] = div_rule;
  t["neg"] = neg_rule;
  t["exp"] = exp_rule;
  t["log"] = log_rule;
  t["sqrt"] = sqrt_rule;
  t["square"] = square_rule;
  t["rsqrt"] = rsqrt_rule;
  t["maximum"] = maximum_rule;
  t["minimum"] = minimum_rule;
  t["where"] = where_rule;
  t["pow"] = pow_rule;
  t["reduce_sum"] = reduce_sum_mean_rule;
  t["reduce_mean"] = reduce_sum_mean_rule;
  t["reduce_max"] = reduce_max_rule;
  t["broadcast_to"] = broadcast_to_rule;
  t["reshape"] = reshape_rule;
  t["flatten"] = reshape_rule;
  t["transpose"] = transpose_rule;
  t["copy"] = copy_rule;
  t["cast"] = cast_rule;
}

}  // namespace dlrt::core::autodiff
