// core/ops/infer_resize.cc: resize (an image resampled to a given size, nearest or bilinear,
// ONNX Resize's coordinate rules) and its backward op resize_grad, in the "conv_pool" family
// of docs/ops.md (its "Decisions" section says what each mode means and how it maps onto
// ONNX, TensorFlow, Keras and PyTorch).
//
// Shapes: x (N,H,W,C) or, with data_format "NCHW", (N,C,H,W); y (N,OH,OW,C) / (N,C,OH,OW)
// with (OH,OW) = size. resize_grad takes dy of y's shape and gives dx of input_shape.
//
// Where output row o reads (per axis; `in` and `out` are the axis' input and output lengths),
// one rounded division of two integers, so every device computes the same coordinate:
//   half_pixel     c = ((2o+1)*in - out) / (2*out)      ((o + 0.5) * in/out - 0.5)
//   align_corners  c = o*(in-1) / (out-1), 0 when out = 1
//   asymmetric     c = o*in / out
// nearest takes input row nearest_mode(c) (round_prefer_floor, round_prefer_ceil, floor,
// ceil) clamped to [0, in-1]; bilinear clamps c to [0, in-1] and mixes rows floor(c) and
// floor(c)+1 (the last row when past the end) with weights 1-f and f, f = c - floor(c).
#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in;
using detail::in_const;
using detail::out;

Status expect_image(const InferContext& ctx, int i) {
  return ctx.expect_rank(i, 4, detail::image_axes(ctx.attr_string("data_format")).dims_doc);
}

// x: (N,H,W,C) -> y: (N,OH,OW,C); NCHW likewise
Status infer_resize(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(expect_image(ctx, 0));
  const detail::ImageAxes ax = detail::image_axes(ctx.attr_string("data_format"));
  const Dims& x = ctx.dims(0);
  const Ints& size = ctx.attr_ints("size");
  ctx.add_output(ctx.input(0).dtype, detail::make_image(ax, x[ax.n], size[0], size[1], x[ax.c]));
  return Status();
}

// dy: (N,OH,OW,C) -> dx: input_shape (N,H,W,C); N and C of dy must be input_shape's.
Status infer_resize_grad(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(expect_image(ctx, 0));
  const detail::ImageAxes ax = detail::image_axes(ctx.attr_string("data_format"));
  const Ints& x = ctx.attr_ints("input_shape");
  const Dims& dy = ctx.dims(0);
  if (dy[ax.n] != x[ax.n] || dy[ax.c] != x[ax.c])
    return ctx.error(
        "{} has dims {}, expected N = {} and C = {} (those of attribute input_shape {})",
        ctx.label(0), format_dims(dy), x[ax.n], x[ax.c], format_dims(x));
  ctx.add_output(ctx.input(0).dtype, x);
  return Status();
}

std::vector<AttrSpec> resize_mode_attrs() {
  return {detail::data_format_attr(),
          optional_attr("mode", "nearest")
              .one_of({"nearest", "bilinear"})
              .describe("nearest: one input cell; bilinear: four, weighted by distance"),
          optional_attr("coordinate_transformation", "half_pixel")
              .one_of({"half_pixel", "align_corners", "asymmetric"})
              .describe("ONNX Resize's coordinate_transformation_mode (docs/ops.md, Decisions)"),
          optional_attr("nearest_mode", "round_prefer_floor")
              .one_of({"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
              .describe("how nearest rounds the source coordinate (ONNX's nearest_mode)")};
}

}  // namespace

std::vector<OpDef> resize_ops() {
  const DtypeSet& F = kFloatTypes;
  std::vector<AttrSpec> fwd = resize_mode_attrs();
  fwd.push_back(required_attr("size", DLRT_ATTR_INTS).exactly(2).at_least(1).describe("(OH,OW)"));
  std::vector<AttrSpec> bwd = resize_mode_attrs();
  bwd.push_back(required_attr("input_shape", DLRT_ATTR_INTS).exactly(4).at_least(1));
  return {
      OpDef{"resize",
            "conv_pool",
            "image resampled to (OH,OW): nearest or bilinear",
            {in("x", F, "(N,H,W,C)")},
            {out("y", "(N,OH,OW,C)")},
            fwd,
            infer_resize,
            {}}
          .sampled(samples::resize(false))
          .tol(kElementwiseTol),
      OpDef{"resize_grad",
            "conv_pool",
            "dx = the interpolation weights' transpose applied to dy (a deterministic sum)",
            {in_const("dy", F, "(N,OH,OW,C)")},
            {out("dx", "input_shape (N,H,W,C)")},
            bwd,
            infer_resize_grad,
            {}}
          .sampled(samples::resize(true))
          .gradient_free("it is a backward op, and dlrt differentiates to first order only")
          .tol(kReductionTol),
  };
}

}  // namespace dlrt::ops
