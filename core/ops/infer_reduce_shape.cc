// core/ops/infer_reduce_shape.cc: reductions (reduce_sum/mean/max and reduce_max_grad) and
// the ops that only rearrange or restate a shape: broadcast_to, reshape, flatten, transpose.
#include <fmt/format.h>

#include <algorithm>

#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in;
using detail::kFloatAndF64Types;
using detail::in_const;
using detail::out;

// The output dims of reducing x over `axes` (empty = all), e.g. x (2,3,4), axes (-1,0):
// keepdims -> (1,3,1), else (3). Negative axes count from the end; an axis twice is an error.
Result<Dims> reduced_dims(const InferContext& ctx, int input) {
  const Dims& x = ctx.dims(input);
  const Ints& axes = ctx.attr_ints("axes");
  const bool keepdims = ctx.attr_bool("keepdims");
  std::vector<bool> reduce(x.size(), axes.empty());
  for (int64_t a : axes) {
    std::optional<int> n = normalize_axis(a, ctx.rank(input));
    if (!n)
      return ctx.error(
          "attribute 'axes' {} has axis {}, out of range for {} of rank {} "
          "(expected {}..{})",
          format_dims(axes), a, ctx.label(input), ctx.rank(input), -ctx.rank(input),
          ctx.rank(input) - 1);
    if (reduce[*n])
      return ctx.error("attribute 'axes' {} names axis {} twice", format_dims(axes), *n);
    reduce[*n] = true;
  }
  Dims y;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!reduce[i]) y.push_back(x[i]);
    else if (keepdims) y.push_back(1);
  }
  return y;
}

// x -> y: x reduced over axes
Status infer_reduce(InferContext& ctx) {
  Result<Dims> y = reduced_dims(ctx, 0);
  if (!y.ok()) return y.status();
  ctx.add_output(ctx.input(0).dtype, std::move(*y));
  return Status();
}

// x, y = reduce_max(x), dy (shape of y) -> dx (shape of x)
Status infer_reduce_max_grad(InferContext& ctx) {
  Result<Dims> y = reduced_dims(ctx, 0);
  if (!y.ok()) return y.status();
  for (int i : {1, 2})
    if (ctx.dims(i) != *y)
      return ctx.error("{} has dims {}, expected {} (reduce_max of input 0 (x) {})", ctx.label(i),
                       format_dims(ctx.dims(i)), format_dims(*y), format_dims(ctx.dims(0)));
  return detail::infer_same_as_input0(ctx);
}

// x -> y: shape, when x broadcasts to exactly that shape
Status infer_broadcast_to(InferContext& ctx) {
  const Ints& shape = ctx.attr_ints("shape");
  const Broadcast r = broadcast_shapes(ctx.dims(0), shape);
  if (!r.ok() || r.dims != shape)
    return ctx.error("{} {} does not broadcast to attribute 'shape' {}", ctx.label(0),
                     format_dims(ctx.dims(0)), format_dims(shape));
  ctx.add_output(ctx.input(0).dtype, shape);
  return Status();
}

// x -> y: shape, one -1 standing for whatever keeps the element count
Status infer_reshape(InferContext& ctx) {
  const Ints& shape = ctx.attr_ints("shape");
  const std::string shown = format_dims(shape);
  int unknown = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (unknown >= 0) return ctx.error("attribute 'shape' {} has more than one -1", shown);
      unknown = static_cast<int>(i);
    } else if (shape[i] < 1) {
      return ctx.error("attribute 'shape' {} has {} at index {}, expected >= 1 or -1", shown,
                       shape[i], i);
    } else {
      known *= shape[i];
    }
  }
  const int64_t count = ctx.input(0).num_elements();
  Dims y = shape;
  if (unknown >= 0) {
    if (count % known != 0)
      return ctx.error("attribute 'shape' {} cannot hold the {} elements of {} {}", shown, count,
                       ctx.label(0), format_dims(ctx.dims(0)));
    y[unknown] = count / known;
  } else if (known != count) {
    return ctx.error("attribute 'shape' {} has {} elements, {} {} has {}", shown, known,
                     ctx.label(0), format_dims(ctx.dims(0)), count);
  }
  ctx.add_output(ctx.input(0).dtype, std::move(y));
  return Status();
}

// x: (N,...) -> y: (N, prod(...)); a rank-1 x (N) gives (N,1), as Keras' Flatten
Status infer_flatten(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_min_rank(0, 1));
  const Dims& x = ctx.dims(0);
  ctx.add_output(ctx.input(0).dtype, {x[0], num_elements(Dims(x.begin() + 1, x.end()))});
  return Status();
}

// x -> y: y.dims[i] = x.dims[perm[i]], perm a permutation of 0..rank-1
Status infer_transpose(InferContext& ctx) {
  const Ints& perm = ctx.attr_ints("perm");
  const int rank = ctx.rank(0);
  if (static_cast<int>(perm.size()) != rank)
    return ctx.error("attribute 'perm' {} has {} values, expected {} (the rank of {})",
                     format_dims(perm), perm.size(), rank, ctx.label(0));
  std::vector<bool> seen(rank, false);
  Dims y(rank);
  for (int i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank || seen[perm[i]])
      return ctx.error("attribute 'perm' {} is not a permutation of 0..{}: {} at index {}",
                       format_dims(perm), rank - 1, perm[i], i);
    seen[perm[i]] = true;
    y[i] = ctx.dims(0)[perm[i]];
  }
  ctx.add_output(ctx.input(0).dtype, std::move(y));
  return Status();
}

std::vector<AttrSpec> reduce_attrs() {
  return {optional_attr("axes", Ints{}).describe("axes to reduce; empty = all"),
          optional_attr("keepdims", false)};
}

// reduce_sum/mean/max take f64 too (kFloatAndF64Types: ONNX's DOUBLE reductions).
OpDef reduce(const char* name, const char* doc) {
  return OpDef{name,       "reduce_shape", doc,          {in("x", kFloatAndF64Types)},
               {out("y")}, reduce_attrs(), infer_reduce, {}}
      .tol(kReductionTol);
}

}  // namespace

std::vector<OpDef> reduce_shape_ops() {
  using samples::ReducePass;
  const DtypeSet& A = kAllTypes;
  return {
      reduce("reduce_sum", "sum over axes").sampled(samples::reduce(ReducePass::kSum)),
      reduce("reduce_mean", "mean over axes").sampled(samples::reduce(ReducePass::kMean)),
      reduce("reduce_max", "max over axes").sampled(samples::reduce(ReducePass::kMax)),
      OpDef{"reduce_max_grad",
            "reduce_shape",
            "dy split equally among the maxima of x",
            {in_const("x", kFloatTypes), in_const("y", kFloatTypes), in_const("dy", kFloatTypes)},
            {out("dx")},
            reduce_attrs(),
            infer_reduce_max_grad,
            {}}
          .sampled(samples::reduce(ReducePass::kMaxGrad))
          .gradient_free("it is a backward op, and dlrt differentiates to first order only")
          .tol(kReductionTol),
      OpDef{"broadcast_to",
            "reduce_shape",
            "x stretched to shape, NumPy rules",
            {in("x", A)},
            {out("y")},
            {required_attr("shape", DLRT_ATTR_INTS).at_least(1)},
            infer_broadcast_to,
            {}}
          .sampled(samples::broadcast_to),
      OpDef{"reshape",
            "reduce_shape",
            "same elements, new dims (one -1 inferred)",
            {in("x", A)},
            {out("y")},
            {required_attr("shape", DLRT_ATTR_INTS)},
            infer_reshape,
            {}}
          .sampled(samples::reshape),
      OpDef{"flatten",
            "reduce_shape",
            "(N,...) -> (N, prod(...))",
            {in("x", A, "(N,...)")},
            {out("y", "(N,prod(...))")},
            {},
            infer_flatten,
            {}}
          .sampled(samples::flatten),
      OpDef{"transpose",
            "reduce_shape",
            "y.dims[i] = x.dims[perm[i]]",
            {in("x", A)},
            {out("y")},
            {required_attr("perm", DLRT_ATTR_INTS)},
            infer_transpose,
            {}}
          .sampled(samples::transpose),
  };
}

}  // namespace dlrt::ops
