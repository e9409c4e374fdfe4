// core/ops/infer_grid_sample.cc: grid_sample (an image read at per-output sampling points,
// ONNX GridSample / PyTorch F.grid_sample / a spatial transformer's sampler) and its backward
// op grid_sample_grad, in the "conv_pool" family of docs/ops.md (its "Decisions" section says
// how each mode maps onto ONNX and PyTorch).
//
// Shapes: x (N,H,W,C) or, with data_format "NCHW", (N,C,H,W); grid (N,OH,OW,2) in both
// formats, grid[n,oh,ow] = (gx, gy) normalised to [-1,1] (gx along W, gy along H, ONNX's and
// PyTorch's order); y (N,OH,OW,C) / (N,C,OH,OW). grid_sample_grad takes dy of y's shape, x
// and grid, and gives dx of x's shape and dgrid of grid's.
//
// Per axis of length L a grid value g denormalises to the source coordinate
//   align_corners  u = (g+1)/2 * (L-1)        (-1 and 1 are the centres of the end cells)
//   otherwise      u = ((g+1)*L - 1) / 2      (-1 and 1 are the outer edges of the end cells)
// computed in double on every device (nearest's ties then agree bit for bit). A coordinate
// outside [lo, hi] ((0, L-1) with align_corners, else (-0.5, L-0.5)) is first moved back by
// padding_mode border (clamped to [0, L-1]) or reflection (mirrored at lo and hi until inside);
// nearest rounds u half to even before that. The taps are then read with the same padding_mode
// per index: zeros reads 0 outside [0, L-1], border the clamped index, reflection the mirrored
// one. Exactly ONNX's reference (onnx/reference/ops/op_grid_sample.py), which is PyTorch's
// for every case ONNX's suite has.
#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in;
using detail::in_const;
using detail::out;

// x: image (N,H,W,C), grid: (N,OH,OW,2) with grid's N that of x.
Status expect_image_and_grid(const InferContext& ctx, int x, int grid) {
  const detail::ImageAxes ax = detail::image_axes(ctx.attr_string("data_format"));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(x, 4, ax.dims_doc));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(grid, 4, "(N,OH,OW,2)"));
  const Dims& xd = ctx.dims(x);
  const Dims& gd = ctx.dims(grid);
  if (gd[0] != xd[ax.n] || gd[3] != 2)
    return ctx.error("{} has dims {}, expected (N,OH,OW,2) with N = {} (that of {} {})",
                     ctx.label(grid), format_dims(gd), xd[ax.n], ctx.label(x), format_dims(xd));
  return Status();
}

// y's dims: x's N and C, grid's OH and OW, in x's data_format.
Dims sampled_dims(const InferContext& ctx, const Dims& x, const Dims& grid) {
  const detail::ImageAxes ax = detail::image_axes(ctx.attr_string("data_format"));
  return detail::make_image(ax, x[ax.n], grid[1], grid[2], x[ax.c]);
}

// x: (N,H,W,C), grid: (N,OH,OW,2) -> y: (N,OH,OW,C); NCHW likewise
Status infer_grid_sample(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(expect_image_and_grid(ctx, 0, 1));
  ctx.add_output(ctx.input(0).dtype, sampled_dims(ctx, ctx.dims(0), ctx.dims(1)));
  return Status();
}

// dy: y's dims, x, grid -> dx: x's dims, dgrid: grid's dims
Status infer_grid_sample_grad(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(expect_image_and_grid(ctx, 1, 2));
  const Dims want = sampled_dims(ctx, ctx.dims(1), ctx.dims(2));
  if (ctx.dims(0) != want)
    return ctx.error("{} has dims {}, expected {} (grid_sample's y for {} {} and {} {})",
                     ctx.label(0), format_dims(ctx.dims(0)), format_dims(want), ctx.label(1),
                     format_dims(ctx.dims(1)), ctx.label(2), format_dims(ctx.dims(2)));
  ctx.add_output(ctx.input(1).dtype, ctx.dims(1));
  ctx.add_output(ctx.input(2).dtype, ctx.dims(2));
  return Status();
}

std::vector<AttrSpec> grid_sample_attrs() {
  return {detail::data_format_attr(),
          optional_attr("mode", "bilinear")
              .one_of({"bilinear", "nearest", "bicubic"})
              .describe("bilinear: 2x2 taps; nearest: one (half to even); bicubic: 4x4, "
                        "Keys' kernel with a = -0.75 (ONNX's linear, nearest, cubic)"),
          optional_attr("padding_mode", "zeros")
              .one_of({"zeros", "border", "reflection"})
              .describe("what a tap outside the image reads: 0, the edge, or the mirror image"),
          optional_attr("align_corners", false)
              .describe("true: -1 and 1 are the centres of the corner cells; false: their "
                        "outer edges")};
}

}  // namespace

std::vector<OpDef> grid_sample_ops() {
  // f64 too: the reference and cpu kernels compute it (ONNX models of DOUBLE images); cuda
  // declines it.
  const DtypeSet& F = detail::kFloatAndF64Types;
  return {
      OpDef{"grid_sample",
            "conv_pool",
            "x read at the (x,y) points of grid, normalised to [-1,1] (ONNX GridSample)",
            {in("x", F, "(N,H,W,C)"), in("grid", F, "(N,OH,OW,2)")},
            {out("y", "(N,OH,OW,C)")},
            grid_sample_attrs(),
            infer_grid_sample,
            {}}
          .sampled(samples::grid_sample(false))
          .tol(kReductionTol),
      OpDef{"grid_sample_grad",
            "conv_pool",
            "dx = the taps' weights transposed onto dy (a sum in output order); dgrid = dy "
            "times the taps' slopes (0 for nearest)",
            {in_const("dy", F, "(N,OH,OW,C)"), in_const("x", F, "(N,H,W,C)"),
             in_const("grid", F, "(N,OH,OW,2)")},
            {out("dx", "(N,H,W,C)"), out("dgrid", "(N,OH,OW,2)")},
            grid_sample_attrs(),
            infer_grid_sample_grad,
            {}}
          .sampled(samples::grid_sample(true))
          .gradient_free("it is a backward op, and dlrt differentiates to first order only")
          .tol(kReductionTol),
  };
}

}  // namespace dlrt::ops
