// core/ops/infer_seq.cc: the sequence-model ops that are neither gathers nor
// norms, in the "misc" family of docs/ops.md:
//
//   one_hot  indices (I...) i32|i64, depth D -> y (I..., D) of `dtype` (f32|f64|i32|i64; f64 on the reference device only, for top_k's gradient in f64 checks):
//            y[i..., d] = on_value if indices[i...] == d else off_value (TF's tf.one_hot /
//            ONNX OneHot with axis -1). An id outside [0, D) gives a row of off_value only
//            (TF's behaviour, not an error): every device does the same, docs/ops.md says so.
//            Integer input, so no gradient.
//   cumsum   x (any rank >= 1), axis (default 0, negative counts from the end), exclusive,
//            reverse -> y of x's type and dims (TF's tf.math.cumsum / ONNX CumSum):
//            y[..j..] = sum of x[..i..] along the axis over i <= j (i < j when exclusive;
//            i >= j / i > j when reverse). Gradient: cumsum(dy) with reverse flipped, the same
//            exclusive (core/autodiff/rules_nn.cc).
//   top_k    x (..., N) float, k in [1, N], sorted -> values (..., k) x's type, indices
//            (..., k) i64: the k largest along the last axis, largest first; equal values
//            rank by lower index; NaN ranks above every number. sorted = false gives the
//            same k elements in ascending index order. Gradient (values only): dy scattered
//            to the indices positions, as one_hot(indices, N) * dy summed over k.
#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in;
using detail::in_const;
using detail::out;

// indices (I...) -> y (I..., depth)
Status infer_one_hot(InferContext& ctx) {
  Dims y = ctx.dims(0);
  y.push_back(ctx.attr_int("depth"));
  if (y.size() > DLRT_MAX_RANK)
    return ctx.error("y would have rank {} (indices' rank {} + 1), more than {}", y.size(),
                     ctx.rank(0), DLRT_MAX_RANK);
  ctx.add_output(ctx.attr_dtype("dtype"), std::move(y));
  return Status();
}

// x -> y: x's type; the axis must lie in [-rank, rank)
Status infer_cumsum(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_min_rank(0, 1));
  const int64_t axis = ctx.attr_int("axis");
  if (!normalize_axis(axis, ctx.rank(0)))
    return ctx.error("attribute 'axis' is {}, out of range for {} of rank {} (expected {}..{})",
                     axis, ctx.label(0), ctx.rank(0), -ctx.rank(0), ctx.rank(0) - 1);
  return detail::infer_same_as_input0(ctx);
}

// x (..., N) -> values (..., k) x's type, indices (..., k) i64
Status infer_top_k(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_min_rank(0, 1));
  const int64_t k = ctx.attr_int("k"), n = ctx.dims(0).back();
  if (k > n)
    return ctx.error("attribute 'k' is {}, more than the {} elements of {}'s last axis", k, n,
                     ctx.label(0));
  Dims y = ctx.dims(0);
  y.back() = k;
  ctx.add_output(ctx.input(0).dtype, y);
  ctx.add_output(DLRT_I64, std::move(y));
  return Status();
}

}  // namespace

std::vector<OpDef> seq_ops() {
  std::vector<OpDef> ops;
  ops.push_back(
      OpDef{"one_hot",
            "misc",
            "y[i...,d] = on_value if indices[i...] == d else off_value; an id outside [0,depth) "
            "gives an all-off row",
            {in_const("indices", kIndexTypes, "(I...)", 0)},
            {out("y", "(I...,depth)")},
            {required_attr("depth", DLRT_ATTR_INT).at_least(1).describe("D, the number of classes"),
             optional_attr("on_value", 1.0), optional_attr("off_value", 0.0),
             optional_attr("dtype", DLRT_F32).dtypes({DLRT_F32, DLRT_F64, DLRT_I32, DLRT_I64})},
            infer_one_hot,
            {}}
          .sampled(samples::one_hot)
          .tol(kExact)
          .gradient_free("its only input is integer ids: there is nothing to differentiate"));
  ops.push_back(OpDef{"cumsum",
                      "misc",
                      "y[..j..] = sum of x[..i..] along axis for i <= j (i < j when exclusive; "
                      "from the end when reverse); integers wrap",
                      {in("x", kNumericTypes)},
                      {out("y")},
                      {optional_attr("axis", int64_t{0}), optional_attr("exclusive", false),
                       optional_attr("reverse", false)},
                      infer_cumsum,
                      {}}
                    .sampled(samples::cumsum)
                    .tol(kReductionTol));
  ops.push_back(OpDef{"top_k",
                      "misc",
                      "the k largest along the last axis, largest first (ties: lower index "
                      "first; NaN largest), and their i64 indices",
                      {in("x", kFloatTypes, "(...,N)")},
                      {out("values", "(...,k)"), out("indices", "(...,k)")},
                      {required_attr("k", DLRT_ATTR_INT).at_least(1).describe("1..N"),
                       optional_attr("sorted", true)},
                      infer_top_k,
                      {}}
                    .sampled(samples::top_k)
                    .tol(kExact));
  return ops;
}

}  // namespace dlrt::ops
