// core/ops/infer_conv_transpose.cc: conv2d_transpose, TensorFlow's tf.nn.conv2d_transpose /
// Keras' Conv2DTranspose / ONNX's ConvTranspose (group 1), in the "conv_pool" family of
// docs/ops.md.
//
//   x (N,H,W,Ci) [NCHW: (N,Ci,H,W)], w (KH,KW,Co,Ci) -> y (N,OH,OW,Co) [NCHW: (N,Co,OH,OW)]
//
// The filter is TF's and Keras' transpose-filter layout: output channels in dim 2, input
// channels in dim 3. It is exactly conv2d's HWIO filter of the convolution that maps y's
// space back to x's (Ci' = Co, Co' = Ci), and conv2d_transpose(x, w) is
// conv2d_backward_data(dy = x, w) with input_shape = y's dims: every backend runs it through
// its backward-data path.
//
// Output length on one axis, with k = (KH-1)*dilation + 1 (the dilated window) and s the
// stride, as Keras' conv_utils.deconv_output_length:
//   output_padding none (the default, ()):  VALID: (H-1)*s + max(k, s)    SAME: H*s
//   output_padding op (0 <= op < s):        VALID: (H-1)*s + k + op       SAME: (H-1)*s + k%2 + op
//   EXPLICIT, pads (before, after):         (H-1)*s + k + op - before - after   (ONNX ConvTranspose)
// and the pads spelled out in "pads" are those of that forward convolution of y, so that
// conv2d(y; pads) has x's length: VALID and SAME use total = max((H-1)*s + k - OH, 0),
// before = total/2, after = total - before (VALID's total is always 0; SAME's are TF's SAME
// pads of OH, and also where TF would refuse the shape, e.g. an even kernel with
// output_padding 0, they are the cropping Keras' JAX backend applies). With these pads
// floor((OH + before + after - k) / s) + 1 = H on every axis, which is what lets a plugin run
// the op as a backward-data convolution without deriving anything.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::image_axes;
using detail::ImageAxes;
using detail::in;
using detail::make_image;
using detail::out;

// One spatial axis: the output length and the forward convolution's pads.
struct TransposeAxis {
  int64_t out = 0;
  PadPair pads;
};

// in: x's length, k: taps, op: output padding (-1: none, Keras' None), given: the "pads"
// attribute's pair for this axis (used with EXPLICIT).
TransposeAxis transpose_axis(Padding padding, int64_t in, int64_t k, int64_t stride,
                             int64_t dilation, int64_t op, PadPair given) {
  const int64_t span = (k - 1) * dilation + 1;
  const int64_t base = (in - 1) * stride;
  TransposeAxis a;
  switch (padding) {
    case Padding::kValid:
      a.out = op < 0 ? base + std::max(span, stride) : base + span + op;
      break;
    case Padding::kSame:
      a.out = op < 0 ? in * stride : base + span % 2 + op;
      break;
    case Padding::kExplicit:
      a.out = base + span + std::max<int64_t>(op, 0) - given.before - given.after;
      a.pads = given;
      return a;
  }
  const int64_t total = std::max<int64_t>(base + span - a.out, 0);
  a.pads = {total / 2, total - total / 2};
  return a;
}

// x: image (N,H,W,Ci), w: (KH,KW,Co,Ci) -> y: image (N,OH,OW,Co); sets "pads".
Status infer_conv2d_transpose(InferContext& ctx) {
  const ImageAxes ax = image_axes(ctx.attr_string("data_format"));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(0, 4, ax.dims_doc));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(1, 4, "(KH,KW,Co,Ci)"));
  const Dims& x = ctx.dims(0);
  const Dims& w = ctx.dims(1);
  if (w[3] != x[ax.c])
    return ctx.error("{} has {} channels in dim 3 (Ci), expected {} to match {} dim {}",
                     ctx.label(1), w[3], x[ax.c], ctx.label(0), ax.c);
  const Ints& strides = ctx.attr_ints("strides");
  const Ints& dilations = ctx.attr_ints("dilations");
  const Ints& output_padding = ctx.attr_ints("output_padding");
  if (!output_padding.empty() && output_padding.size() != 2)
    return ctx.error(
        "attribute 'output_padding' is {}: expected () (none) or 2 ints (h, w), got {} ints",
        format_dims(output_padding), output_padding.size());
  for (size_t i = 0; i < output_padding.size(); ++i)
    if (output_padding[i] >= strides[i])
      return ctx.error(
          "attribute 'output_padding' is {}: its {} value {} must be smaller than the stride "
          "{} (Keras' rule)",
          format_dims(output_padding), i == 0 ? "height" : "width", output_padding[i], strides[i]);

  const std::string& padding_name = ctx.attr_string("padding");
  const Padding padding = *parse_padding(padding_name);
  const Ints& given = ctx.attr_ints("pads");
  const char* names[2] = {"height", "width"};
  const int64_t lengths[2] = {x[ax.h], x[ax.w]};
  TransposeAxis axes[2];
  for (int i = 0; i < 2; ++i) {
    const int64_t op = output_padding.empty() ? -1 : output_padding[i];
    axes[i] = transpose_axis(padding, lengths[i], w[i], strides[i], dilations[i], op,
                             {given[i], given[i + 2]});
    if (axes[i].out < 1)
      return ctx.error(
          "{} output {} would be {} (input {}, kernel {}, dilation {}, stride {}, "
          "output_padding {}{})",
          padding_name, names[i], axes[i].out, lengths[i], w[i], dilations[i], strides[i],
          output_padding.empty() ? "none" : std::to_string(output_padding[i]),
          padding == Padding::kExplicit ? fmt::format(", pads ({},{})", given[i], given[i + 2])
                                        : "");
  }
  const Ints pads{axes[0].pads.before, axes[1].pads.before, axes[0].pads.after, axes[1].pads.after};
  // As conv2d: with VALID or SAME, "pads" may only repeat what the rule gives (a gradient rule
  // or a second instantiation hands the normalised attributes back); others need EXPLICIT.
  if (padding != Padding::kExplicit && given != Ints{0, 0, 0, 0} && given != pads)
    return ctx.error(
        "attribute 'pads' is {}, but padding \"{}\" gives {}; other pads need "
        "padding \"EXPLICIT\"",
        format_dims(given), padding_name, format_dims(pads));
  ctx.normalize("pads", pads);
  ctx.add_output(ctx.input(0).dtype, make_image(ax, x[ax.n], axes[0].out, axes[1].out, w[2]));
  return Status();
}

std::vector<AttrSpec> conv_transpose_attrs() {
  return {optional_attr("strides", Ints{1, 1}).exactly(2).at_least(1),
          detail::padding_attr(),
          detail::pads_attr(),
          optional_attr("dilations", Ints{1, 1}).exactly(2).at_least(1),
          detail::data_format_attr(),
          optional_attr("output_padding", Ints{})
              .at_least(0)
              .describe("() is Keras' None; else (h, w), each smaller than its stride")};
}

}  // namespace

std::vector<OpDef> conv_transpose_ops() {
  const DtypeSet& F = kFloatTypes;
  return {OpDef{"conv2d_transpose",
                "conv_pool",
                "transposed conv2d (TF conv2d_transpose, Keras Conv2DTranspose): "
                "conv2d_backward_data of x",
                {in("x", F, "(N,H,W,Ci)"), in("w", F, "(KH,KW,Co,Ci)")},
                {out("y", "(N,OH,OW,Co)")},
                conv_transpose_attrs(),
                infer_conv2d_transpose,
                {}}
              .sampled(samples::conv_transpose)
              .tol(kGemmTol)};
}

}  // namespace dlrt::ops
