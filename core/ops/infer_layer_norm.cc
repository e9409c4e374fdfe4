// core/ops/infer_layer_norm.cc: layer normalization (Ba et al. 2016; PyTorch's
// native_layer_norm / native_layer_norm_backward, Keras' LayerNormalization, ONNX's
// LayerNormalization) and its fused backward op layer_norm_grad, in the "norm" family.
//
// x (..., D): every "row" (one index of the leading dims) is normalised over its D values:
//   mean = sum(x)/D, var = sum((x-mean)^2)/D (biased, as every framework uses),
//   rstd = 1/sqrt(var + epsilon), y = (x-mean)*rstd*gamma + beta, gamma and beta (D).
// mean and rstd are outputs too, one per row (x's dims without the last), saved for
// layer_norm_grad as batch_norm_train saves its statistics.
// Only axis = -1 (or rank-1, the last axis) is supported: other axes are INVALID_ARGUMENT.
#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in;
using detail::in_const;
using detail::out;

// Checks epsilon and axis, x's rank and that inputs [first, first + n) are (D).
// Returns the rows' dims (x's dims without the last).
Result<Dims> rows_of(InferContext& ctx, int x_index, int first, int n) {
  if (!(ctx.attr_float("epsilon") > 0))
    return ctx.error("attribute 'epsilon' is {}, expected > 0", ctx.attr_float("epsilon"));
  const int r = ctx.rank(x_index);
  if (r < 1) return ctx.error("{} has rank 0, expected rank >= 1 (..., D)", ctx.label(x_index));
  const int64_t axis = ctx.attr_int("axis");
  if (axis != -1 && axis != r - 1)
    return ctx.error(
        "attribute 'axis' is {}, expected -1 (or {}, the last axis of {}): layer_norm "
        "normalises over the last axis only",
        axis, r - 1, ctx.label(x_index));
  const Dims& x = ctx.dims(x_index);
  const int64_t d = x.back();
  for (int i = first; i < first + n; ++i)
    if (ctx.dims(i) != Dims{d})
      return ctx.error("{} has dims {}, expected ({}): one value per element of {}'s last axis",
                       ctx.label(i), format_dims(ctx.dims(i)), d, ctx.label(x_index));
  return Dims(x.begin(), x.end() - 1);
}

// x (..., D), gamma (D), beta (D) -> y (..., D), mean (...), rstd (...)
Status infer_layer_norm(InferContext& ctx) {
  Result<Dims> rows = rows_of(ctx, 0, 1, 2);
  if (!rows.ok()) return rows.status();
  ctx.add_output(ctx.input(0).dtype, ctx.dims(0));
  ctx.add_output(ctx.input(0).dtype, *rows);
  ctx.add_output(ctx.input(0).dtype, *rows);
  return Status();
}

// dy (..., D), x (..., D), gamma (D), mean (...), rstd (...) -> dx (..., D), dgamma, dbeta (D)
Status infer_layer_norm_grad(InferContext& ctx) {
  if (ctx.dims(1) != ctx.dims(0))
    return ctx.error("{} has dims {}, expected {} (the dims of input 0 (dy))", ctx.label(1),
                     format_dims(ctx.dims(1)), format_dims(ctx.dims(0)));
  Result<Dims> rows = rows_of(ctx, 1, 2, 1);
  if (!rows.ok()) return rows.status();
  for (int i = 3; i < 5; ++i)
    if (ctx.dims(i) != *rows)
      return ctx.error("{} has dims {}, expected {}: one value per row of {} (its dims less the "
                       "last)",
                       ctx.label(i), format_dims(ctx.dims(i)), format_dims(*rows), ctx.label(1));
  const Dims d{ctx.dims(1).back()};
  ctx.add_output(ctx.input(0).dtype, ctx.dims(0));
  ctx.add_output(ctx.input(0).dtype, d);
  ctx.add_output(ctx.input(0).dtype, d);
  return Status();
}

// epsilon defaults to PyTorch's and ONNX's 1e-5; Keras' LayerNormalization passes its 1e-3.
std::vector<AttrSpec> layer_norm_attrs() {
  return {optional_attr("epsilon", 1e-5).try_values({1e-3}).describe("added to the variance"),
          optional_attr("axis", -1).describe("the normalised axis: the last (-1) only")};
}

}  // namespace

std::vector<OpDef> layer_norm_ops() {
  const DtypeSet& F = kFloatTypes;
  return {
      OpDef{"layer_norm",
            "norm",
            "y = (x - mean) * rstd * gamma + beta, statistics per row over the last axis",
            {in("x", F, "(..., D)"), in("gamma", F, "(D)"), in("beta", F, "(D)")},
            {out("y", "(..., D)"), out("mean", "(...)"), out("rstd", "(...)")},
            layer_norm_attrs(),
            infer_layer_norm,
            {}}
          .sampled(samples::layer_norm(false))
          .tol(kReductionTol),
      OpDef{"layer_norm_grad",
            "norm",
            "dx, dgamma, dbeta of layer_norm's y (through the row statistics)",
            {in_const("dy", F, "(..., D)"), in_const("x", F, "(..., D)"),
             in_const("gamma", F, "(D)"), in_const("mean", F, "(...)"),
             in_const("rstd", F, "(...)")},
            {out("dx", "(..., D)"), out("dgamma", "(D)"), out("dbeta", "(D)")},
            layer_norm_attrs(),
            infer_layer_norm_grad,
            {}}
          .sampled(samples::layer_norm(true))
          .gradient_free("it is a backward op, and dlrt differentiates to first order only")
          .tol(kReductionTol),
  };
}

}  // namespace dlrt::ops
