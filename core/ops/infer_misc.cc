// core/ops/infer_misc.cc: matmul (+ fused bias/activation), softmax and the loss, argmax and
// equal_count (accuracy), the generators (fill, random_uniform, random_normal), dropout,
// cast, gather_rows and copy.
#include <fmt/format.h>

#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in;
using detail::in_const;
using detail::out;

// a: (M,K) or (K,M) when transpose_a; b: (K,N) or (N,K) when transpose_b -> c: (M,N)
Status infer_matmul(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(0, 2, ctx.attr_bool("transpose_a") ? "(K,M)" : "(M,K)"));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(1, 2, ctx.attr_bool("transpose_b") ? "(N,K)" : "(K,N)"));
  const bool ta = ctx.attr_bool("transpose_a"), tb = ctx.attr_bool("transpose_b");
  const Dims &a = ctx.dims(0), &b = ctx.dims(1);
  const int64_t m = ta ? a[1] : a[0], ka = ta ? a[0] : a[1];
  const int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (ka != kb)
    return ctx.error(
        "inner dimensions differ: a is {} and b is {} (transpose_a={}, "
        "transpose_b={})",
        format_dims(a), format_dims(b), ta, tb);
  ctx.add_output(ctx.input(0).dtype, {m, n});
  return Status();
}

// matmul plus bias: (N)
Status infer_matmul_bias_act(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(infer_matmul(ctx));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(2, 1, "(N)"));
  const int64_t n = ctx.outputs()[0].dims[1];
  if (ctx.dims(2)[0] != n)
    return ctx.error("{} has {} elements, expected {} to match the columns (N) of c", ctx.label(2),
                     ctx.dims(2)[0], n);
  return Status();
}

// The axis attribute of softmax/argmax, normalised against input 0.
Result<int> axis_of_input0(const InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_min_rank(0, 1));
  const int64_t axis = ctx.attr_int("axis");
  std::optional<int> a = normalize_axis(axis, ctx.rank(0));
  if (!a)
    return ctx.error("attribute 'axis' is {}, out of range for {} of rank {} (expected {}..{})",
                     axis, ctx.label(0), ctx.rank(0), -ctx.rank(0), ctx.rank(0) - 1);
  return *a;
}

// x -> y: x's type
Status infer_softmax(InferContext& ctx) {
  Result<int> axis = axis_of_input0(ctx);
  if (!axis.ok()) return axis.status();
  return detail::infer_same_as_input0(ctx);
}

// logits: (N,K), labels: (N) -> loss: (N), backprop: (N,K)
Status infer_sparse_xent(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(0, 2, "(N,K)"));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(1, 1, "(N)"));
  if (ctx.dims(1)[0] != ctx.dims(0)[0])
    return ctx.error("{} has {} labels in dim 0, expected {} to match input 0 (logits) dim 0 (N)",
                     ctx.label(1), ctx.dims(1)[0], ctx.dims(0)[0]);
  ctx.add_output(ctx.input(0).dtype, {ctx.dims(0)[0]});
  ctx.add_output(ctx.input(0).dtype, ctx.dims(0));
  return Status();
}

// x -> y: x without the axis, of dtype output_type
Status infer_argmax(InferContext& ctx) {
  Result<int> axis = axis_of_input0(ctx);
  if (!axis.ok()) return axis.status();
  Dims y = ctx.dims(0);
  y.erase(y.begin() + *axis);
  ctx.add_output(ctx.attr_dtype("output_type"), std::move(y));
  return Status();
}

// a: (N), b: (N) -> count: () f32
Status infer_equal_count(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(0, 1, "(N)"));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(1, 1, "(N)"));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_same_dims(0, 1));
  ctx.add_output(DLRT_F32, {});
  return Status();
}

// () -> y: shape, dtype
Status infer_generator(InferContext& ctx) {
  const std::string& op = ctx.op();
  if (op == "random_uniform" && !(ctx.attr_float("minval") < ctx.attr_float("maxval")))
    return ctx.error("attribute 'minval' ({}) must be less than 'maxval' ({})",
                     ctx.attr_float("minval"), ctx.attr_float("maxval"));
  if (op == "random_normal" && !(ctx.attr_float("stddev") >= 0))
    return ctx.error("attribute 'stddev' is {}, expected >= 0", ctx.attr_float("stddev"));
  ctx.add_output(ctx.attr_dtype("dtype"), ctx.attr_ints("shape"));
  return Status();
}

// x -> y, mask: both x's type
Status infer_dropout(InferContext& ctx) {
  const double rate = ctx.attr_float("rate");
  if (!(rate >= 0.0 && rate < 1.0))
    return ctx.error("attribute 'rate' is {}, expected a value in [0, 1)", rate);
  ctx.add_output(ctx.input(0).dtype, ctx.dims(0));
  ctx.add_output(ctx.input(0).dtype, ctx.dims(0));
  return Status();
}

// x -> y: x's dims, dtype
Status infer_cast(InferContext& ctx) {
  ctx.add_output(ctx.attr_dtype("dtype"), ctx.dims(0));
  return Status();
}

// params: (R,...), indices: (B) -> y: (B,...)
Status infer_gather_rows(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_min_rank(0, 1));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(1, 1, "(B)"));
  Dims y = ctx.dims(0);
  y[0] = ctx.dims(1)[0];
  ctx.add_output(ctx.input(0).dtype, std::move(y));
  return Status();
}

std::vector<AttrSpec> matmul_attrs() {
  return {optional_attr("transpose_a", false), optional_attr("transpose_b", false)};
}

OpDef softmax(const char* name, const char* doc) {
  return OpDef{
      name,          "misc", doc, {in("x", kFloatTypes)}, {out("y")}, {optional_attr("axis", -1)},
      infer_softmax, {}}
      .sampled(samples::softmax)
      .tol(kReductionTol);
}

}  // namespace

std::vector<OpDef> misc_ops() {
  const DtypeSet& F = kFloatTypes;
  const AttrSpec shape = required_attr("shape", DLRT_ATTR_INTS).at_least(1);
  const AttrSpec seed = optional_attr("seed", int64_t{0}).describe("Philox key; 64 bits");
  // Why some ops have no gradient rule (autodiff's message when one lies on a gradient path).
  const char* kPiecewiseConstant =
      "its output is piecewise constant (integer), so no gradient flows through it; compute "
      "metrics such as accuracy beside the loss, not inside it";
  const char* kGenerator = "it has no inputs to differentiate";
  std::vector<OpDef> ops;
  ops.push_back(OpDef{"matmul",
                      "misc",
                      "c = op(a) . op(b), op = transpose when asked",
                      {in("a", F, "(M,K)"), in("b", F, "(K,N)")},
                      {out("c", "(M,N)")},
                      matmul_attrs(),
                      infer_matmul,
                      {}}
                    .sampled(samples::matmul(false))
                    .tol(kGemmTol));
  std::vector<AttrSpec> fused = matmul_attrs();
  fused.push_back(detail::activation_attr());
  ops.push_back(OpDef{"matmul_bias_act",
                      "misc",
                      "fused c = act(a . b + bias)",
                      {in("a", F, "(M,K)"), in("b", F, "(K,N)"), in("bias", F, "(N)")},
                      {out("c", "(M,N)")},
                      fused,
                      infer_matmul_bias_act,
                      {}}
                    .sampled(samples::matmul(true))
                    .tol(kGemmTol));
  ops.push_back(softmax("softmax", "exp(x) / sum(exp(x)) along axis, max-subtracted"));
  ops.push_back(softmax("log_softmax", "x - logsumexp(x) along axis, max-subtracted"));
  ops.push_back(OpDef{"sparse_softmax_cross_entropy",
                      "misc",
                      "loss = logsumexp(logits) - logits[label]; backprop = softmax - onehot",
                      {in("logits", F, "(N,K)"), in_const("labels", kIndexTypes, "(N)", 0)},
                      {out("loss", "(N)"), out("backprop", "(N,K)")},
                      {},
                      infer_sparse_xent,
                      {}}
                    .sampled(samples::sparse_xent)
                    .tol(kReductionTol));
  ops.push_back(OpDef{
      "argmax",
      "misc",
      "first index of the max along axis",
      {in_const("x", F)},
      {out("y")},
      {optional_attr("axis", -1), optional_attr("output_type", DLRT_I32).dtypes(kIndexTypes)},
      infer_argmax,
      {}}.sampled(samples::argmax)
                    .tol(kExact)
                    .gradient_free(kPiecewiseConstant));
  ops.push_back(OpDef{"equal_count",
                      "misc",
                      "number of i with a[i] == b[i], as f32",
                      {in_const("a", kIndexTypes, "(N)", 0), in_const("b", kIndexTypes, "(N)", 0)},
                      {out("count", "()")},
                      {},
                      infer_equal_count,
                      {}}
                    .sampled(samples::equal_count)
                    .tol(kExact)
                    .gradient_free(kPiecewiseConstant));
  ops.push_back(OpDef{"fill",
                      "misc",
                      "every element = value",
                      {},
                      {out("y")},
                      {shape, optional_attr("value", 0.0), optional_attr("dtype", DLRT_F32)},
                      infer_generator,
                      {}}
                    .sampled(samples::fill)
                    .tol(kExact)
                    .gradient_free(kGenerator));
  ops.push_back(OpDef{"random_uniform",
                      "misc",
                      "Philox uniform in [minval, maxval)",
                      {},
                      {out("y")},
                      {shape, optional_attr("minval", 0.0), optional_attr("maxval", 1.0), seed,
                       optional_attr("dtype", DLRT_F32).dtypes(F)},
                      infer_generator,
                      {}}
                    .sampled(samples::random_uniform)
                    .tol(kExact)
                    .gradient_free(kGenerator)
                    .draws_random());
  ops.push_back(OpDef{"random_normal",
                      "misc",
                      "Philox + Box-Muller normal",
                      {},
                      {out("y")},
                      {shape, optional_attr("mean", 0.0), optional_attr("stddev", 1.0), seed,
                       optional_attr("dtype", DLRT_F32).dtypes(F)},
                      infer_generator,
                      {}}
                    .sampled(samples::random_normal)
                    .tol(kExact)
                    .gradient_free(kGenerator)
                    .draws_random());
  ops.push_back(OpDef{"dropout",
                      "misc",
                      "mask = (u >= rate) / (1 - rate); y = x * mask",
                      {in("x", F)},
                      {out("y"), out("mask")},
                      {required_attr("rate", DLRT_ATTR_FLOAT), seed},
                      infer_dropout,
                      {}}
                    .sampled(samples::dropout)
                    .tol(kExact)
                    .draws_random());
  ops.push_back(OpDef{"cast",
                      "misc",
                      "y = x converted to dtype; float -> int truncates; out of range saturates",
                      {in("x", kAllTypes)},
                      {out("y")},
                      {required_attr("dtype", DLRT_ATTR_DTYPE)},
                      infer_cast,
                      {}}
                    .sampled(samples::cast)
                    .tol(kExact));
  ops.push_back(OpDef{
      "gather_rows",
      "misc",
      "y[i] = params[indices[i]]; zero row when out of range",
      {in("params", kAllTypes, "(R,...)"), in_const("indices", kIndexTypes, "(B)", 0)},
      {out("y", "(B,...)")},
      {},
      infer_gather_rows,
      {}}.sampled(samples::gather_rows)
                    .gradient_free("the gradient with respect to params needs a scatter-add op, "
                                   "which the op set (docs/ops.md) does not have yet"));
  ops.push_back(OpDef{
      "copy",
      "misc",
      "y = x",
      {in("x", kAllTypes)},
      {out("y")},
      {},
      detail::infer_same_as_input0,
      {}}.sampled(samples::copy));
  // stop_gradient: a copy whose input autodiff does not propagate into (in_const), so the value
  // is a constant for gradients(): d(loss)/d(x) through it is zero and the walk never enters
  // the ops that compute x on its account (they need no rule). The VAE / GAN pattern of a
  // target that must not be trained through. Kernels: the copy's, on every backend.
  ops.push_back(OpDef{
      "stop_gradient",
      "misc",
      "y = x; a constant for autodiff (no gradient flows into x)",
      {in_const("x", kAllTypes)},
      {out("y")},
      {},
      detail::infer_same_as_input0,
      {}}.sampled(samples::copy)
                    .gradient_free("stop_gradient is the identity whose gradient is defined as "
                                   "zero: its input is not differentiable, so gradients() "
                                   "never walks into it"));
  return ops;
}

}  // namespace dlrt::ops
