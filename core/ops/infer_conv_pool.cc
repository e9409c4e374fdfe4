// core/ops/infer_conv_pool.cc: conv2d, conv2d_bias_act, max/avg_pool2d and their backward
// ops. Images are NHWC (N,H,W,C) unless data_format="NCHW" (N,C,H,W); filters are HWIO
// (KH,KW,Ci/groups,Co) in both formats (groups = 1 unless given: TF's grouped conv2d, where
// output channel o reads the input channels of group o / (Co/groups)). Spatial sizes follow
// TF's SAME/VALID (shape_util.hpp).
#include <fmt/format.h>

#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::image_axes;
using detail::ImageAxes;
using detail::in;
using detail::in_const;
using detail::make_image;
using detail::out;

// One spatial axis of a window op: H or W.
//   in: input length, k: taps, stride, dilation, pads: the padding the op applies (SAME's
//   rule or the explicit pads) -> the output length, or an error when nothing is left
//   ("VALID output height would be 0 (input 1, ksize 2, stride 2)").
Result<int64_t> spatial_out(const InferContext& ctx, const char* axis_name, int64_t in_len,
                            int64_t k, int64_t stride, int64_t dilation, PadPair pads,
                            bool is_pool) {
  const int64_t o = padded_output_size(in_len, pads, k, stride, dilation);
  if (o >= 1) return o;
  const std::string& padding = ctx.attr_string("padding");
  const std::string padded =
      padding == "EXPLICIT" ? fmt::format(", pads ({},{})", pads.before, pads.after) : "";
  if (is_pool)
    return ctx.error("{} output {} would be 0 (input {}, ksize {}, stride {}{})", padding,
                     axis_name, in_len, k, stride, padded);
  return ctx.error("{} output {} would be 0 (input {}, kernel {}, dilation {}, stride {}{})",
                   padding, axis_name, in_len, k, dilation, stride, padded);
}

// The padding of both spatial axes from "padding" and "pads" (h_before, w_before, h_after,
// w_after), and the instance's "pads" set to it, so plugins read the padding instead of
// re-deriving SAME (docs/ops.md, Conventions). With VALID or SAME, "pads" may only repeat what
// the rule gives (an instance the core normalised is instantiated again unchanged, e.g. by a
// gradient rule that copies the forward attributes); other values need padding "EXPLICIT".
// For pooling an explicit pad must be smaller than the window, so that no window lies wholly
// in the padding (ONNX's rule).
Result<std::pair<PadPair, PadPair>> window_pads(InferContext& ctx, int64_t in_h, int64_t in_w,
                                                int64_t kh, int64_t kw, const Ints& strides,
                                                const Ints& dilations, bool is_pool) {
  const Padding padding = *parse_padding(ctx.attr_string("padding"));
  const Ints& given = ctx.attr_ints("pads");
  if (padding == Padding::kExplicit && is_pool)
    for (int i = 0; i < 4; ++i)
      if (given[i] >= (i % 2 == 0 ? kh : kw))
        return ctx.error("attribute 'pads' is {}: pad {} must be smaller than the window ({})",
                         format_dims(given), i, i % 2 == 0 ? kh : kw);
  const PadPair h =
      window_padding(padding, in_h, kh, strides[0], dilations[0], {given[0], given[2]});
  const PadPair w =
      window_padding(padding, in_w, kw, strides[1], dilations[1], {given[1], given[3]});
  const Ints pads{h.before, w.before, h.after, w.after};
  if (padding != Padding::kExplicit && given != Ints{0, 0, 0, 0} && given != pads)
    return ctx.error(
        "attribute 'pads' is {}, but padding \"{}\" gives {}; other pads need "
        "padding \"EXPLICIT\"",
        format_dims(given), ctx.attr_string("padding"), format_dims(pads));
  ctx.normalize("pads", pads);
  return std::make_pair(h, w);
}

// conv2d's output dims from x (image) and w (KH,KW,Ci/groups,Co). x_what/w_what say where the
// two shapes came from, for messages: "input 0 (x)" or "attribute 'input_shape'".
Result<Dims> conv_output(InferContext& ctx, const Dims& x, const std::string& x_what, const Dims& w,
                         const std::string& w_what) {
  const ImageAxes ax = image_axes(ctx.attr_string("data_format"));
  const Ints& strides = ctx.attr_ints("strides");
  const Ints& dilations = ctx.attr_ints("dilations");
  const int64_t groups = ctx.attr_int("groups");
  // w: (KH,KW,Ci/groups,Co)
  if (groups == 1 && w[2] != x[ax.c])
    return ctx.error("{} has {} channels in dim 2 (Ci), expected {} to match {} dim {}", w_what,
                     w[2], x[ax.c], x_what, ax.c);
  if (groups > 1) {
    if (x[ax.c] % groups != 0)
      return ctx.error(
          "attribute 'groups' is {}, which does not divide the {} channels of {} dim {}", groups,
          x[ax.c], x_what, ax.c);
    if (w[3] % groups != 0)
      return ctx.error(
          "attribute 'groups' is {}, which does not divide the {} output channels of {} dim 3 (Co)",
          groups, w[3], w_what);
    if (w[2] * groups != x[ax.c])
      return ctx.error(
          "{} has {} channels in dim 2 (Ci/groups), expected {} = {} channels of {} dim {} / "
          "groups {}",
          w_what, w[2], x[ax.c] / groups, x[ax.c], x_what, ax.c, groups);
  }
  auto pads = window_pads(ctx, x[ax.h], x[ax.w], w[0], w[1], strides, dilations, false);
  if (!pads.ok()) return pads.status();
  Result<int64_t> oh =
      spatial_out(ctx, "height", x[ax.h], w[0], strides[0], dilations[0], pads->first, false);
  if (!oh.ok()) return oh.status();
  Result<int64_t> ow =
      spatial_out(ctx, "width", x[ax.w], w[1], strides[1], dilations[1], pads->second, false);
  if (!ow.ok()) return ow.status();
  return make_image(ax, x[ax.n], *oh, *ow, w[3]);
}

// x: image, w: (KH,KW,Ci/groups,Co) -> y: image (N,OH,OW,Co)
Status infer_conv2d(InferContext& ctx) {
  const char* doc = image_axes(ctx.attr_string("data_format")).dims_doc;
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(0, 4, doc));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(1, 4, "(KH,KW,Ci/groups,Co)"));
  Result<Dims> y = conv_output(ctx, ctx.dims(0), ctx.label(0), ctx.dims(1), ctx.label(1));
  if (!y.ok()) return y.status();
  ctx.add_output(ctx.input(0).dtype, std::move(*y));
  return Status();
}

// conv2d plus b: (Co)
Status infer_conv2d_bias_act(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(infer_conv2d(ctx));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(2, 1, "(Co)"));
  if (ctx.dims(2)[0] != ctx.dims(1)[3])
    return ctx.error("{} has {} elements, expected {} to match input 1 (w) dim 3 (Co)",
                     ctx.label(2), ctx.dims(2)[0], ctx.dims(1)[3]);
  return Status();
}

// dy: (N,OH,OW,Co), w: (KH,KW,Ci/groups,Co) -> dx: input_shape (N,H,W,Ci)
Status infer_conv2d_backward_data(InferContext& ctx) {
  const char* doc = image_axes(ctx.attr_string("data_format")).dims_doc;
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(0, 4, doc));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(1, 4, "(KH,KW,Ci/groups,Co)"));
  const Ints& x = ctx.attr_ints("input_shape");
  const std::string x_what = fmt::format("attribute 'input_shape' {}", format_dims(x));
  Result<Dims> y = conv_output(ctx, x, x_what, ctx.dims(1), ctx.label(1));
  if (!y.ok()) return y.status();
  if (*y != ctx.dims(0))
    return ctx.error("{} has dims {}, expected {}: conv2d of input_shape {} with w {}",
                     ctx.label(0), format_dims(ctx.dims(0)), format_dims(*y), format_dims(x),
                     format_dims(ctx.dims(1)));
  ctx.add_output(ctx.input(0).dtype, x);
  return Status();
}

// conv2d_backward_data_add: conv2d_backward_data's operands and an addend of dx's dims.
Status infer_conv2d_backward_data_add(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(infer_conv2d_backward_data(ctx));
  const Ints& x = ctx.attr_ints("input_shape");
  if (ctx.dims(2) != Dims(x.begin(), x.end()))
    return ctx.error("{} has dims {}, expected {} (attribute 'input_shape': the addend is "
                     "added to dx element by element)",
                     ctx.label(2), format_dims(ctx.dims(2)), format_dims(x));
  return Status();
}

// conv2d_backward: dy (N,OH,OW,Co), x (N,H,W,Ci), w (KH,KW,Ci/groups,Co) -> dx (x's dims),
// dw (w's dims).
Status infer_conv2d_backward(InferContext& ctx) {
  const char* doc = image_axes(ctx.attr_string("data_format")).dims_doc;
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(0, 4, doc));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(1, 4, doc));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(2, 4, "(KH,KW,Ci/groups,Co)"));
  Result<Dims> y = conv_output(ctx, ctx.dims(1), ctx.label(1), ctx.dims(2), ctx.label(2));
  if (!y.ok()) return y.status();
  if (*y != ctx.dims(0))
    return ctx.error("{} has dims {}, expected {}: conv2d of {} with {}", ctx.label(0),
                     format_dims(ctx.dims(0)), format_dims(*y), ctx.label(1), ctx.label(2));
  ctx.add_output(ctx.input(0).dtype, ctx.dims(1));
  ctx.add_output(ctx.input(0).dtype, ctx.dims(2));
  return Status();
}

// x: (N,H,W,Ci), dy: (N,OH,OW,Co) -> dw: filter_shape (KH,KW,Ci/groups,Co)
Status infer_conv2d_backward_filter(InferContext& ctx) {
  const char* doc = image_axes(ctx.attr_string("data_format")).dims_doc;
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(0, 4, doc));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(1, 4, doc));
  const Ints& w = ctx.attr_ints("filter_shape");
  const std::string w_what = fmt::format("attribute 'filter_shape' {}", format_dims(w));
  Result<Dims> y = conv_output(ctx, ctx.dims(0), ctx.label(0), w, w_what);
  if (!y.ok()) return y.status();
  if (*y != ctx.dims(1))
    return ctx.error("{} has dims {}, expected {}: conv2d of x {} with filter_shape {}",
                     ctx.label(1), format_dims(ctx.dims(1)), format_dims(*y),
                     format_dims(ctx.dims(0)), format_dims(w));
  ctx.add_output(ctx.input(0).dtype, w);
  return Status();
}

// Pool output dims of image x: (N,OH,OW,C).
Result<Dims> pool_output(InferContext& ctx, const Dims& x) {
  const ImageAxes ax = image_axes(ctx.attr_string("data_format"));
  const Ints& k = ctx.attr_ints("ksize");
  const Ints& s = ctx.attr_ints("strides");
  auto pads = window_pads(ctx, x[ax.h], x[ax.w], k[0], k[1], s, Ints{1, 1}, true);
  if (!pads.ok()) return pads.status();
  Result<int64_t> oh = spatial_out(ctx, "height", x[ax.h], k[0], s[0], 1, pads->first, true);
  if (!oh.ok()) return oh.status();
  Result<int64_t> ow = spatial_out(ctx, "width", x[ax.w], k[1], s[1], 1, pads->second, true);
  if (!ow.ok()) return ow.status();
  return make_image(ax, x[ax.n], *oh, *ow, x[ax.c]);
}

// x: (N,H,W,C) -> y: (N,OH,OW,C)
Status infer_pool2d(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(
      ctx.expect_rank(0, 4, image_axes(ctx.attr_string("data_format")).dims_doc));
  Result<Dims> y = pool_output(ctx, ctx.dims(0));
  if (!y.ok()) return y.status();
  ctx.add_output(ctx.input(0).dtype, std::move(*y));
  return Status();
}

// x: (N,H,W,C), dy: (N,OH,OW,C) -> dx: (N,H,W,C)
Status infer_max_pool2d_backward(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(infer_pool2d(ctx));  // the forward output, which dy must match
  const Dims expected = ctx.outputs()[0].dims;
  if (ctx.dims(1) != expected)
    return ctx.error("{} has dims {}, expected {} (max_pool2d of input 0 (x) {})", ctx.label(1),
                     format_dims(ctx.dims(1)), format_dims(expected), format_dims(ctx.dims(0)));
  ctx.outputs()[0].dims = ctx.dims(0);
  return Status();
}

// x: (N,H,W,C), dy: (N,OH,OW,C) -> dz: (N,H,W,C), db: (C) (C from data_format)
Status infer_max_pool2d_backward_relu_bias(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(infer_max_pool2d_backward(ctx));
  ctx.add_output(ctx.input(0).dtype, {ctx.dims(0)[image_axes(ctx.attr_string("data_format")).c]});
  return Status();
}

// dy: (N,OH,OW,C) -> dx: input_shape (N,H,W,C)
Status infer_avg_pool2d_backward(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(
      ctx.expect_rank(0, 4, image_axes(ctx.attr_string("data_format")).dims_doc));
  const Ints& x = ctx.attr_ints("input_shape");
  Result<Dims> y = pool_output(ctx, x);
  if (!y.ok()) return y.status();
  if (*y != ctx.dims(0))
    return ctx.error("{} has dims {}, expected {} (avg_pool2d of input_shape {})", ctx.label(0),
                     format_dims(ctx.dims(0)), format_dims(*y), format_dims(x));
  ctx.add_output(ctx.input(0).dtype, x);
  return Status();
}

std::vector<AttrSpec> conv_attrs() {
  return {optional_attr("strides", Ints{1, 1}).exactly(2).at_least(1),
          detail::padding_attr(),
          detail::pads_attr(),
          optional_attr("dilations", Ints{1, 1}).exactly(2).at_least(1),
          detail::data_format_attr(),
          optional_attr("groups", int64_t{1})
              .at_least(1)
              .describe("input and output channels split into this many groups; w is "
                        "(KH,KW,Ci/groups,Co)")};
}
std::vector<AttrSpec> pool_attrs() {
  return {optional_attr("ksize", Ints{2, 2}).exactly(2).at_least(1),
          optional_attr("strides", Ints{2, 2}).exactly(2).at_least(1), detail::padding_attr(),
          detail::pads_attr(), detail::data_format_attr()};
}
template <typename... More>
std::vector<AttrSpec> plus(std::vector<AttrSpec> base, More... more) {
  (base.push_back(std::move(more)), ...);
  return base;
}

}  // namespace

std::vector<OpDef> conv_pool_ops() {
  using samples::ConvPass;
  using samples::PoolPass;
  const DtypeSet& F = kFloatTypes;
  const char* backward = "it is a backward op, and dlrt differentiates to first order only";
  std::vector<OpDef> ops;
  ops.push_back(OpDef{"conv2d",
                      "conv_pool",
                      "2-D cross-correlation, as TF's conv2d",
                      {in("x", F, "(N,H,W,Ci)"), in("w", F, "(KH,KW,Ci/groups,Co)")},
                      {out("y", "(N,OH,OW,Co)")},
                      conv_attrs(),
                      infer_conv2d,
                      {}}
                    .sampled(samples::conv(ConvPass::kForward))
                    .tol(kGemmTol));
  ops.push_back(OpDef{
      "conv2d_bias_act",
      "conv_pool",
      "fused y = act(conv2d(x, w) + b)",
      {in("x", F, "(N,H,W,Ci)"), in("w", F, "(KH,KW,Ci/groups,Co)"), in("b", F, "(Co)")},
      {out("y", "(N,OH,OW,Co)")},
      plus(conv_attrs(), detail::activation_attr()),
      infer_conv2d_bias_act,
      {}}.sampled(samples::conv(ConvPass::kBiasAct))
                    .tol(kGemmTol));
  ops.push_back(OpDef{"max_pool2d",
                      "conv_pool",
                      "max over each window; padded cells are -inf",
                      {in("x", F, "(N,H,W,C)")},
                      {out("y", "(N,OH,OW,C)")},
                      pool_attrs(),
                      infer_pool2d,
                      {}}
                    .sampled(samples::pool(PoolPass::kMax))
                    .tol(kReductionTol));
  ops.push_back(OpDef{"avg_pool2d",
                      "conv_pool",
                      "mean over each window; padded cells not counted",
                      {in("x", F, "(N,H,W,C)")},
                      {out("y", "(N,OH,OW,C)")},
                      pool_attrs(),
                      infer_pool2d,
                      {}}
                    .sampled(samples::pool(PoolPass::kAvg))
                    .tol(kReductionTol));
  // Backward ops: autodiff emits them; they are not differentiated again (first order only).
  ops.push_back(OpDef{
      "conv2d_backward_data",
      "conv_pool",
      "gradient of conv2d with respect to x",
      {in_const("dy", F, "(N,OH,OW,Co)"), in_const("w", F, "(KH,KW,Ci/groups,Co)")},
      {out("dx", "(N,H,W,Ci)")},
      plus(conv_attrs(), required_attr("input_shape", DLRT_ATTR_INTS).exactly(4).at_least(1)),
      infer_conv2d_backward_data,
      {}}.sampled(samples::conv(ConvPass::kBackwardData))
                    .gradient_free(backward)
                    .tol(kGemmTol));
  // dx = addend + conv2d_backward_data(dy, w): autodiff's sum of a value's gradient
  // contributions when one of them is a conv's backward-data pass (the input of a residual
  // block, read by the block's first conv and by its shortcut), as cuDNN's beta = 1. The
  // backward pass starts dx from the addend instead of from zeros, so the sum costs no pass
  // of its own.
  ops.push_back(OpDef{
      "conv2d_backward_data_add",
      "conv_pool",
      "addend + conv2d_backward_data(dy, w)",
      {in_const("dy", F, "(N,OH,OW,Co)"), in_const("w", F, "(KH,KW,Ci/groups,Co)"),
       in_const("addend", F, "(N,H,W,Ci)")},
      {out("dx", "(N,H,W,Ci)")},
      plus(conv_attrs(), required_attr("input_shape", DLRT_ATTR_INTS).exactly(4).at_least(1)),
      infer_conv2d_backward_data_add,
      {}}.sampled(samples::conv(ConvPass::kBackwardDataAdd))
                    .gradient_free(backward)
                    .tol(kGemmTol));
  // Both gradients of conv2d in one op, what autodiff emits when both are wanted and x has no
  // other reader (docs/ops.md, "Both gradients in one pass"): a device may share the work the
  // two passes have in common (dlrt's Winograd kernel transforms dy once, and reads it once).
  ops.push_back(OpDef{
      "conv2d_backward",
      "conv_pool",
      "conv2d_backward_data and conv2d_backward_filter of one conv",
      {in_const("dy", F, "(N,OH,OW,Co)"), in_const("x", F, "(N,H,W,Ci)"),
       in_const("w", F, "(KH,KW,Ci/groups,Co)")},
      {out("dx", "(N,H,W,Ci)"), out("dw", "(KH,KW,Ci/groups,Co)")},
      conv_attrs(),
      infer_conv2d_backward,
      {}}.sampled(samples::conv(ConvPass::kBackwardBoth))
                    .gradient_free(backward)
                    .tol(kGemmTol));
  ops.push_back(OpDef{
      "conv2d_backward_filter",
      "conv_pool",
      "gradient of conv2d with respect to w",
      {in_const("x", F, "(N,H,W,Ci)"), in_const("dy", F, "(N,OH,OW,Co)")},
      {out("dw", "(KH,KW,Ci/groups,Co)")},
      plus(conv_attrs(), required_attr("filter_shape", DLRT_ATTR_INTS).exactly(4).at_least(1)),
      infer_conv2d_backward_filter,
      {}}.sampled(samples::conv(ConvPass::kBackwardFilter))
                    .gradient_free(backward)
                    .tol(kGemmTol));
  ops.push_back(OpDef{"max_pool2d_backward",
                      "conv_pool",
                      "routes dy to the first max of each window",
                      {in_const("x", F, "(N,H,W,C)"), in_const("dy", F, "(N,OH,OW,C)")},
                      {out("dx", "(N,H,W,C)")},
                      pool_attrs(),
                      infer_max_pool2d_backward,
                      {}}
                    .sampled(samples::pool(PoolPass::kMaxBackward))
                    .gradient_free(backward)
                    .tol(kReductionTol));
  // The backward pass of conv2d_bias_act(activation relu) -> max_pool2d in one op: autodiff
  // emits it (conv2d_bias_act's rule) when the conv's dy is max_pool2d_backward of its own
  // output, in place of max_pool2d_backward -> relu_grad -> bias_add_grad, three passes over
  // the conv's output-sized tensors in one.
  ops.push_back(OpDef{"max_pool2d_backward_relu_bias",
                      "conv_pool",
                      "max_pool2d_backward, then relu_grad by x and bias_add_grad",
                      {in_const("x", F, "(N,H,W,C)"), in_const("dy", F, "(N,OH,OW,C)")},
                      {out("dz", "(N,H,W,C)"), out("db", "(C)")},
                      pool_attrs(),
                      infer_max_pool2d_backward_relu_bias,
                      {}}
                    .sampled(samples::pool(PoolPass::kMaxBackward))
                    .gradient_free(backward)
                    .tol(kReductionTol));
  ops.push_back(OpDef{
      "avg_pool2d_backward",
      "conv_pool",
      "spreads dy evenly over each window",
      {in_const("dy", F, "(N,OH,OW,C)")},
      {out("dx", "(N,H,W,C)")},
      plus(pool_attrs(), required_attr("input_shape", DLRT_ATTR_INTS).exactly(4).at_least(1)),
      infer_avg_pool2d_backward,
      {}}.sampled(samples::pool(PoolPass::kAvgBackward))
                    .gradient_free(backward)
                    .tol(kReductionTol));
  return ops;
}

}  // namespace dlrt::ops
