// core/ops/infer_global_pool.cc: global_avg_pool2d and global_max_pool2d (the mean / max over
// all of H and W, as Keras' GlobalAveragePooling2D / GlobalMaxPooling2D) and their backward
// ops, in the "conv_pool" family of docs/ops.md.
//
// Shapes: x (N,H,W,C) or, with data_format "NCHW", (N,C,H,W); the pooled tensor is (N,C) by
// default (Keras' keepdims=False: the layer feeds Dense directly), or with keepdims (N,1,1,C) /
// (N,C,1,1) (ONNX GlobalAveragePool's shape). In every one of these shapes element (n, c)
// sits at n*C + c, which the kernels rely on.
#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in;
using detail::in_const;
using detail::out;

// ---- global pools ---------------------------------------------------------------------------

// The pooled dims of image x: (N,C), or with keepdims (N,1,1,C) / (N,C,1,1).
Dims global_pooled(const InferContext& ctx, const Dims& x) {
  const detail::ImageAxes ax = detail::image_axes(ctx.attr_string("data_format"));
  if (!ctx.attr_bool("keepdims")) return {x[ax.n], x[ax.c]};
  return detail::make_image(ax, x[ax.n], 1, 1, x[ax.c]);
}

Status expect_image(const InferContext& ctx, int i) {
  return ctx.expect_rank(i, 4, detail::image_axes(ctx.attr_string("data_format")).dims_doc);
}

// x: (N,H,W,C) -> y: (N,C) (keepdims: (N,1,1,C)); NCHW likewise
Status infer_global_pool(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(expect_image(ctx, 0));
  ctx.add_output(ctx.input(0).dtype, global_pooled(ctx, ctx.dims(0)));
  return Status();
}

// x: (N,H,W,C), dy: pooled -> dx: (N,H,W,C)
Status infer_global_max_pool_backward(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(expect_image(ctx, 0));
  const Dims y = global_pooled(ctx, ctx.dims(0));
  if (ctx.dims(1) != y)
    return ctx.error("{} has dims {}, expected {} (global_max_pool2d of input 0 (x) {})",
                     ctx.label(1), format_dims(ctx.dims(1)), format_dims(y),
                     format_dims(ctx.dims(0)));
  ctx.add_output(ctx.input(0).dtype, ctx.dims(0));
  return Status();
}

// dy: pooled -> dx: input_shape (N,H,W,C)
Status infer_global_avg_pool_backward(InferContext& ctx) {
  const Ints& x = ctx.attr_ints("input_shape");
  const Dims y = global_pooled(ctx, x);
  if (ctx.dims(0) != y)
    return ctx.error("{} has dims {}, expected {} (global_avg_pool2d of input_shape {})",
                     ctx.label(0), format_dims(ctx.dims(0)), format_dims(y), format_dims(x));
  ctx.add_output(ctx.input(0).dtype, x);
  return Status();
}

const char* const kBackward = "it is a backward op, and dlrt differentiates to first order only";

std::vector<AttrSpec> global_pool_attrs() {
  return {detail::data_format_attr(),
          optional_attr("keepdims", false).describe("(N,1,1,C) / (N,C,1,1) instead of (N,C)")};
}
std::vector<AttrSpec> plus(std::vector<AttrSpec> a, AttrSpec b) {
  a.push_back(std::move(b));
  return a;
}

}  // namespace

std::vector<OpDef> global_pool_ops() {
  const DtypeSet& F = kFloatTypes;
  return {
      OpDef{"global_avg_pool2d",
            "conv_pool",
            "mean over H and W",
            {in("x", F, "(N,H,W,C)")},
            {out("y", "(N,C); keepdims: (N,1,1,C)")},
            global_pool_attrs(),
            infer_global_pool,
            {}}
          .sampled(samples::global_pool(samples::GlobalPoolPass::kAvg))
          .tol(kReductionTol),
      OpDef{"global_max_pool2d",
            "conv_pool",
            "max over H and W",
            {in("x", F, "(N,H,W,C)")},
            {out("y", "(N,C); keepdims: (N,1,1,C)")},
            global_pool_attrs(),
            infer_global_pool,
            {}}
          .sampled(samples::global_pool(samples::GlobalPoolPass::kMax))
          .tol(kExact),
      OpDef{"global_avg_pool2d_backward",
            "conv_pool",
            "dx = dy / (H*W) at every cell",
            {in_const("dy", F, "(N,C) or (N,1,1,C)")},
            {out("dx", "(N,H,W,C)")},
            plus(global_pool_attrs(),
                 required_attr("input_shape", DLRT_ATTR_INTS).exactly(4).at_least(1)),
            infer_global_avg_pool_backward,
            {}}
          .sampled(samples::global_pool(samples::GlobalPoolPass::kAvgBackward))
          .gradient_free(kBackward),
      OpDef{"global_max_pool2d_backward",
            "conv_pool",
            "dy to the first max of each (n, c) plane, rows first",
            {in_const("x", F, "(N,H,W,C)"), in_const("dy", F, "(N,C) or (N,1,1,C)")},
            {out("dx", "(N,H,W,C)")},
            global_pool_attrs(),
            infer_global_max_pool_backward,
            {}}
          .sampled(samples::global_pool(samples::GlobalPoolPass::kMaxBackward))
          .gradient_free(kBackward)
          .tol(kExact),
  };
}

}  // namespace dlrt::ops
