// core/ops/infer_elementwise.cc: unary and binary elementwise ops, bias_add and the
// activation gradients. Unary ops keep their input's type; binary ops broadcast with
// NumPy's rules ((3,1,5) + (4,5) -> (3,4,5)).
#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {

Status detail::infer_same_as_input0(InferContext& ctx) {
  ctx.add_output(ctx.input(0).dtype, ctx.dims(0));
  return Status();
}

// a, b -> c: broadcast(a, b)
Status detail::infer_broadcast_binary(InferContext& ctx) {
  const Broadcast r = broadcast_shapes(ctx.dims(0), ctx.dims(1));
  if (!r.ok())
    return ctx.error("cannot broadcast a {} with b {}: a dim {} is {} and b dim {} is {}",
                     format_dims(ctx.dims(0)), format_dims(ctx.dims(1)), r.conflict_a,
                     ctx.dims(0)[r.conflict_a], r.conflict_b, ctx.dims(1)[r.conflict_b]);
  ctx.add_output(ctx.input(0).dtype, r.dims);
  return Status();
}

// dy, x (or y) of one shape -> dx of that shape
Status detail::infer_activation_grad(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_same_dims(0, 1));
  return detail::infer_same_as_input0(ctx);
}

namespace {
using detail::in;
using detail::kFloatAndF64Types;
using detail::in_const;
using detail::infer_activation_grad;
using detail::infer_broadcast_binary;
using detail::out;

// Channel axis of bias_add / bias_add_grad: last for NHWC-style (...,C), dim 1 for NCHW.
Result<int> channel_axis(const InferContext& ctx, int input) {
  const bool nchw = ctx.attr_string("data_format") == "NCHW";
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_min_rank(input, nchw ? 2 : 1));
  return nchw ? 1 : ctx.rank(input) - 1;
}

// x: (...,C), b: (C) -> y: x's type
Status infer_bias_add(InferContext& ctx) {
  Result<int> c = channel_axis(ctx, 0);
  if (!c.ok()) return c.status();
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(1, 1, "(C)"));
  if (ctx.dims(1)[0] != ctx.dims(0)[*c])
    return ctx.error("{} has {} elements, expected {} to match input 0 (x) dim {} (C, {})",
                     ctx.label(1), ctx.dims(1)[0], ctx.dims(0)[*c], *c,
                     ctx.attr_string("data_format"));
  return detail::infer_same_as_input0(ctx);
}

// dy: (...,C) -> db: (C)
Status infer_bias_add_grad(InferContext& ctx) {
  Result<int> c = channel_axis(ctx, 0);
  if (!c.ok()) return c.status();
  ctx.add_output(ctx.input(0).dtype, {ctx.dims(0)[*c]});
  return Status();
}

OpDef unary(const char* name, const char* doc, Values x, std::vector<Sample> extra = {},
            const DtypeSet& dtypes = kFloatTypes) {
  return OpDef{name,
               "elementwise",
               doc,
               {in("x", dtypes)},
               {out("y")},
               {},
               detail::infer_same_as_input0,
               {}}
      .sampled(samples::unary(x, std::move(extra)));
}
OpDef binary(const char* name, const char* doc, Values b = uniform(-2, 2),
             Values a = uniform(-2, 2), std::vector<Sample> extra = {},
             const DtypeSet& dtypes = kFloatTypes) {
  return OpDef{name, "elementwise",          doc, {in("a", dtypes), in("b", dtypes)}, {out("c")},
               {},   infer_broadcast_binary, {}}
      .sampled(samples::binary(b, a, std::move(extra)));
}
// add, sub, mul, div, maximum, minimum take every number (kNumericTypes): exact in integers,
// so ONNX's integer arithmetic (shape sums, index offsets, 8-bit pixels) runs as written. pow
// stays floats.
OpDef numeric_binary(const char* name, const char* doc, Values b = uniform(-2, 2),
                     Values a = uniform(-2, 2), std::vector<Sample> extra = {}) {
  std::vector<Sample> all = samples::integer_binary();
  all.insert(all.begin(), extra.begin(), extra.end());
  return binary(name, doc, b, a, std::move(all), kNumericTypes);
}
// Backward ops: autodiff emits them and differentiates to first order only.
constexpr const char* kBackward =
    "it is a backward op, and dlrt differentiates to first order only";
OpDef activation_grad(const char* name, const char* second, const char* doc, Values second_values) {
  return OpDef{name,
               "elementwise",
               doc,
               {in_const("dy", kFloatTypes), in_const(second, kFloatTypes)},
               {out("dx")},
               {},
               infer_activation_grad,
               {}}
      .sampled(samples::activation_grad(second_values))
      .gradient_free(kBackward);
}

}  // namespace

std::vector<OpDef> elementwise_ops() {
  const Values u = uniform(-2, 2);
  // IEEE edge cases the spec states: log/sqrt of negatives are NaN, log(0) is -inf.
  const Sample negatives{{f32_in("x", {9}, uniform(-3, -0.1))}, {}, true, "negatives give NaN"};
  const Sample f64_sample{{typed_in("x", DLRT_F64, {3, 4}, uniform(-6, 6))}, {}, false, "f64"};
  return {
      unary("relu", "y = max(x, 0)", u),
      // alpha defaults to ONNX's and PyTorch's 0.01 (Keras' LeakyReLU layer passes its own).
      unary("leaky_relu", "y = x where x > 0, else alpha * x", u)
          .with_attr(optional_attr("alpha", 0.01).try_values({0.2, 1.5}).describe("slope below 0")),
      unary("sigmoid", "y = 1 / (1 + exp(-x))", uniform(-8, 8)),
      unary("tanh", "y = tanh(x)", uniform(-4, 4)),
      unary("neg", "y = -x", u),
      // exp and log take f64 too (kFloatAndF64Types): ONNX's DOUBLE models reduce through them.
      unary("exp", "y = exp(x)", uniform(-6, 6),
            {{{f32_in("x", {5}, uniform(-80, 80))}, {}, true, "large magnitudes"}, f64_sample},
            kFloatAndF64Types),
      unary("log", "y = log(x); NaN for negatives", uniform(0.01, 20),
            {negatives, {{f32_in("x", {4}, constant(0))}, {}, true, "log(0) = -inf"},
             {{typed_in("x", DLRT_F64, {3, 4}, uniform(0.01, 20))}, {}, false, "f64"}},
            kFloatAndF64Types),
      unary("sqrt", "y = sqrt(x); NaN for negatives", uniform(0, 50), {negatives}),
      numeric_binary("add", "c = a + b, broadcasting; integers wrap"),
      numeric_binary("sub", "c = a - b, broadcasting; integers wrap"),
      numeric_binary("mul", "c = a * b, broadcasting; integers wrap"),
      // Denominators away from 0, so the quotient is well conditioned.
      // Integers: truncated toward zero (C's, and ONNX's integer Div), x / 0 = 0 (NumPy's
      // integer division by zero), the lowest value / -1 wraps to itself.
      numeric_binary("div", "c = a / b, broadcasting; integers truncate, x / 0 = 0",
                     away_from_zero(0.25, 4)),
      // Integer values, so that ties (a == b) occur.
      numeric_binary("maximum", "c = max(a, b), broadcasting; NaN if either is NaN",
                     integers(-3, 3), integers(-3, 3)),
      numeric_binary("minimum", "c = min(a, b), broadcasting; NaN if either is NaN",
                     integers(-3, 3), integers(-3, 3)),
      // Positive bases for real exponents; negative bases with integer exponents (and 0 to a
      // negative power, inf) as std::pow and NumPy give them.
      binary("pow", "c = a ** b, broadcasting; NaN for a < 0 and a non-integer b", uniform(-2, 2),
             uniform(0.1, 3),
             {{{f32_in("a", {3, 5}, integers(-3, 3)), f32_in("b", {5}, integers(-3, 3))},
               {},
               true,
               "negative bases, integer exponents, 0 ** negative = inf"}}),
      OpDef{"bias_add",
            "elementwise",
            "y = x + b along the channel axis",
            {in("x", kFloatTypes, "(...,C)"), in("b", kFloatTypes, "(C)")},
            {out("y", "(...,C)")},
            {detail::data_format_attr()},
            infer_bias_add,
            {}}
          .sampled(samples::bias(false)),
      OpDef{"bias_add_grad",
            "elementwise",
            "db = dy summed over every axis but the channel axis",
            {in_const("dy", kFloatTypes, "(...,C)")},
            {out("db", "(C)")},
            {detail::data_format_attr()},
            infer_bias_add_grad,
            {}}
          .sampled(samples::bias(true))
          .gradient_free(kBackward)
          .tol(kReductionTol),
      // relu_grad's x away from the kink at 0; sigmoid_grad's y in (0,1) and tanh_grad's y in
      // (-1,1), as the forward ops produce them.
      activation_grad("relu_grad", "x", "dx = dy where x > 0, else 0", away_from_zero(0.01, 2)),
      activation_grad("leaky_relu_grad", "x", "dx = dy where x > 0, else alpha * dy",
                      away_from_zero(0.01, 2))
          .with_attr(optional_attr("alpha", 0.01).try_values({0.2, 1.5}).describe("slope below 0")),
      activation_grad("sigmoid_grad", "y", "dx = dy * y * (1 - y)", uniform(0.001, 0.999)),
      activation_grad("tanh_grad", "y", "dx = dy * (1 - y^2)", uniform(-0.999, 0.999)),
  };
}

}  // namespace dlrt::ops
