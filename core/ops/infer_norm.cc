// core/ops/infer_norm.cc: batch normalization — the inference form batch_norm, the training
// form batch_norm_train (batch statistics, running statistics updated in place) and its
// backward op batch_norm_grad. Names and operands follow ONNX's BatchNormalization and
// PyTorch's native_batch_norm / native_batch_norm_backward; docs/ops.md has the arithmetic and
// the momentum convention.
//
// Both forward forms take activation "relu": y = max(0, normalised x), batch norm and the
// ReLU after it in one pass (oneDNN's fuse_norm_relu, cuDNN's BN_ACTIVATION; nn forms it for a
// BatchNormalization whose only reader is a ReLU). Its backward op is batch_norm_relu_grad,
// which also takes bias: it rebuilds the ReLU's mask from x and the saved statistics
// (scale*xhat + bias > 0) instead of reading y, one tensor fewer to read.
//
// batch_norm_add_relu_train is a residual block's tail as one op: y = max(0, batch_norm(x) +
// residual), the training form's statistics and running-statistic updates with the shortcut
// added before the ReLU (oneDNN's fuse_norm_add_relu, cuDNN's BN_ADD_ACTIVATION; nn forms it
// for a BatchNormalization read only by an Add whose only reader is a ReLU). Its backward op,
// batch_norm_add_relu_grad, takes the ReLU's mask from y (the residual changes where it cuts,
// so x alone cannot rebuild it) and also returns the residual's gradient, dy where y > 0.
//
// x is an image, NHWC (N,H,W,C) by default or NCHW (N,C,H,W), or rank 2 (N,C) (after a Dense
// layer; C is dim 1 whatever data_format says). Every per-channel operand is (C). Statistics
// are over every axis but C: N*H*W values per channel (N for rank 2).
#include <fmt/format.h>

#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in;
using detail::in_const;
using detail::out;

// x (rank 2 or 4) -> its channel count; the inputs [first, first + n) must be (C).
Result<int64_t> channels_of(InferContext& ctx, int first, int n) {
  const int r = ctx.rank(0);
  if (r != 2 && r != 4)
    return ctx.error("{} has rank {}, expected rank 4 {} or rank 2 (N,C)", ctx.label(0), r,
                     detail::image_axes(ctx.attr_string("data_format")).dims_doc);
  const int c_axis = r == 2 ? 1 : detail::image_axes(ctx.attr_string("data_format")).c;
  const int64_t c = ctx.dims(0)[c_axis];
  for (int i = first; i < first + n; ++i)
    if (ctx.dims(i) != Dims{c})
      return ctx.error("{} has dims {}, expected ({}): one value per channel of {} (dim {})",
                       ctx.label(i), format_dims(ctx.dims(i)), c, ctx.label(0), c_axis);
  return c;
}

Status check_epsilon(InferContext& ctx) {
  if (!(ctx.attr_float("epsilon") > 0))
    return ctx.error("attribute 'epsilon' is {}, expected > 0", ctx.attr_float("epsilon"));
  return Status();
}

// x, scale, bias, mean, var (C each) -> y (x's dims)
Status infer_batch_norm(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(check_epsilon(ctx));
  Result<int64_t> c = channels_of(ctx, 1, 4);
  if (!c.ok()) return c.status();
  ctx.add_output(ctx.input(0).dtype, ctx.dims(0));
  return Status();
}

// x, scale, bias, running_mean, running_var (C each)
//   -> y (x's dims), running_mean (C), running_var (C), saved_mean (C), saved_inv_std (C)
// The training forms' outputs, their four (C) operands from input `first_c` on.
Status training_outputs(InferContext& ctx, int first_c) {
  DLRT_OPS_RETURN_IF_ERROR(check_epsilon(ctx));
  const double m = ctx.attr_float("momentum");
  if (!(m >= 0 && m <= 1))
    return ctx.error("attribute 'momentum' is {}, expected a value in [0, 1]", m);
  Result<int64_t> c = channels_of(ctx, first_c, 4);
  if (!c.ok()) return c.status();
  ctx.add_output(ctx.input(0).dtype, ctx.dims(0));
  for (int k = 0; k < 4; ++k) ctx.add_output(ctx.input(0).dtype, {*c});
  return Status();
}
Status infer_batch_norm_train(InferContext& ctx) { return training_outputs(ctx, 1); }

// dy (x's dims), x, scale, saved_mean, saved_inv_std (C each) -> dx, dscale (C), dbias (C);
// batch_norm_relu_grad has bias between scale and saved_mean (four (C) operands).
Status infer_batch_norm_grad(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(check_epsilon(ctx));
  if (ctx.dims(1) != ctx.dims(0))
    return ctx.error("{} has dims {}, expected {} (the dims of input 0 (dy))", ctx.label(1),
                     format_dims(ctx.dims(1)), format_dims(ctx.dims(0)));
  Result<int64_t> c = channels_of(ctx, 2, ctx.num_inputs() - 2);
  if (!c.ok()) return c.status();
  ctx.add_output(ctx.input(0).dtype, ctx.dims(0));
  ctx.add_output(ctx.input(0).dtype, {*c});
  ctx.add_output(ctx.input(0).dtype, {*c});
  return Status();
}

// x, residual (x's dims), scale, bias, running_mean, running_var (C each) -> as
// batch_norm_train's outputs.
Status infer_batch_norm_add_relu_train(InferContext& ctx) {
  if (ctx.dims(1) != ctx.dims(0))
    return ctx.error("{} has dims {}, expected {} (the dims of input 0 (x)): the residual is "
                     "added to the normalised x element by element",
                     ctx.label(1), format_dims(ctx.dims(1)), format_dims(ctx.dims(0)));
  return training_outputs(ctx, 2);
}

// dy, y, x (x's dims each), scale, saved_mean, saved_inv_std (C each)
//   -> dx, dscale (C), dbias (C), dresidual (x's dims)
Status infer_batch_norm_add_relu_grad(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(check_epsilon(ctx));
  for (int i : {1, 2})
    if (ctx.dims(i) != ctx.dims(0))
      return ctx.error("{} has dims {}, expected {} (the dims of input 0 (dy))", ctx.label(i),
                       format_dims(ctx.dims(i)), format_dims(ctx.dims(0)));
  Result<int64_t> c = channels_of(ctx, 3, 3);
  if (!c.ok()) return c.status();
  ctx.add_output(ctx.input(0).dtype, ctx.dims(0));
  ctx.add_output(ctx.input(0).dtype, {*c});
  ctx.add_output(ctx.input(0).dtype, {*c});
  ctx.add_output(ctx.input(0).dtype, ctx.dims(0));
  return Status();
}

// epsilon defaults to ONNX's and PyTorch's 1e-5 (Keras' BatchNormalization layer passes its
// own 1e-3); data_format as the other image ops.
AttrSpec epsilon_attr() {
  return optional_attr("epsilon", 1e-5).try_values({1e-3}).describe("added to the variance");
}

// The training forms' momentum: the weight of the old running value (docs/ops.md).
AttrSpec momentum_attr() {
  return optional_attr("momentum", 0.9)
      .try_values({0.0, 0.99})
      .describe("weight of the old running value");
}

// The activation applied to the normalised value: none, or relu (fused; see the top).
AttrSpec norm_activation_attr() {
  return optional_attr("activation", "none")
      .one_of({"none", "relu"})
      .describe("applied after the affine map: none or relu");
}

}  // namespace

std::vector<OpDef> norm_ops() {
  const DtypeSet& F = kFloatTypes;
  std::vector<OpDef> ops;
  // Frozen statistics: mean and var get no gradient (fine-tuning keeps them; Keras' moving
  // statistics are non-trainable).
  ops.push_back(OpDef{"batch_norm",
                      "norm",
                      "y = scale * (x - mean) / sqrt(var + epsilon) + bias, per channel",
                      {in("x", F, "(N,H,W,C) or (N,C)"), in("scale", F, "(C)"),
                       in("bias", F, "(C)"), in_const("mean", F, "(C)"), in_const("var", F, "(C)")},
                      {out("y", "(N,H,W,C) or (N,C)")},
                      {epsilon_attr(), detail::data_format_attr(), norm_activation_attr()},
                      infer_batch_norm,
                      {}}
                    .sampled(samples::batch_norm(samples::NormPass::kInference))
                    .tol(kReductionTol));
  // The running statistics are inputs 3 and 4 and outputs 1 and 2, written in place when the
  // executor assigns them back to their variables (as the optimizer updates are).
  ops.push_back(
      OpDef{"batch_norm_train",
            "norm",
            "batch statistics normalise x; running stats move by momentum",
            {in("x", F, "(N,H,W,C) or (N,C)"), in("scale", F, "(C)"), in("bias", F, "(C)"),
             in_const("running_mean", F, "(C)"), in_const("running_var", F, "(C)")},
            {out("y", "(N,H,W,C) or (N,C)"), out("running_mean", "(C)"), out("running_var", "(C)"),
             out("saved_mean", "(C)"), out("saved_inv_std", "(C)")},
            {epsilon_attr(), momentum_attr(), detail::data_format_attr(), norm_activation_attr()},
            infer_batch_norm_train,
            {{1, 3}, {2, 4}}}
          .sampled(samples::batch_norm(samples::NormPass::kTraining))
          .with_state()
          .tol(kReductionTol));
  ops.push_back(
      OpDef{"batch_norm_grad",
            "norm",
            "dx, dscale, dbias of batch_norm_train's y",
            {in_const("dy", F, "(N,H,W,C) or (N,C)"), in_const("x", F, "(N,H,W,C) or (N,C)"),
             in_const("scale", F, "(C)"), in_const("saved_mean", F, "(C)"),
             in_const("saved_inv_std", F, "(C)")},
            {out("dx", "(N,H,W,C) or (N,C)"), out("dscale", "(C)"), out("dbias", "(C)")},
            {epsilon_attr(), detail::data_format_attr()},
            infer_batch_norm_grad,
            {}}
          .sampled(samples::batch_norm(samples::NormPass::kBackward))
          .gradient_free("it is a backward op, and dlrt differentiates to first order only")
          .tol(kReductionTol));
  // batch_norm_train with activation relu: dy passes where scale*xhat + bias > 0 (the ReLU's
  // mask, rebuilt from x), then batch_norm_grad's arithmetic.
  ops.push_back(
      OpDef{"batch_norm_relu_grad",
            "norm",
            "dx, dscale, dbias of batch_norm_train's y with activation relu",
            {in_const("dy", F, "(N,H,W,C) or (N,C)"), in_const("x", F, "(N,H,W,C) or (N,C)"),
             in_const("scale", F, "(C)"), in_const("bias", F, "(C)"),
             in_const("saved_mean", F, "(C)"), in_const("saved_inv_std", F, "(C)")},
            {out("dx", "(N,H,W,C) or (N,C)"), out("dscale", "(C)"), out("dbias", "(C)")},
            {epsilon_attr(), detail::data_format_attr()},
            infer_batch_norm_grad,
            {}}
          .sampled(samples::batch_norm(samples::NormPass::kReluBackward))
          .gradient_free("it is a backward op, and dlrt differentiates to first order only")
          .tol(kReductionTol));
  // A residual block's tail (see the top): the running statistics are inputs 4 and 5 and
  // outputs 1 and 2, in place as batch_norm_train's.
  ops.push_back(
      OpDef{"batch_norm_add_relu_train",
            "norm",
            "y = max(0, batch_norm_train's y + residual); running stats as batch_norm_train",
            {in("x", F, "(N,H,W,C) or (N,C)"), in("residual", F, "x's dims"), in("scale", F, "(C)"),
             in("bias", F, "(C)"), in_const("running_mean", F, "(C)"),
             in_const("running_var", F, "(C)")},
            {out("y", "(N,H,W,C) or (N,C)"), out("running_mean", "(C)"), out("running_var", "(C)"),
             out("saved_mean", "(C)"), out("saved_inv_std", "(C)")},
            {epsilon_attr(), momentum_attr(), detail::data_format_attr()},
            infer_batch_norm_add_relu_train,
            {{1, 4}, {2, 5}}}
          .sampled(samples::batch_norm(samples::NormPass::kAddReluTraining))
          .with_state()
          .tol(kReductionTol));
  // dy passes where y > 0 (the ReLU's mask, read from y): that is dresidual, and
  // batch_norm_grad's arithmetic on it gives dx, dscale and dbias.
  ops.push_back(
      OpDef{"batch_norm_add_relu_grad",
            "norm",
            "dx, dscale, dbias, dresidual of batch_norm_add_relu_train's y",
            {in_const("dy", F, "(N,H,W,C) or (N,C)"), in_const("y", F, "dy's dims"),
             in_const("x", F, "dy's dims"), in_const("scale", F, "(C)"),
             in_const("saved_mean", F, "(C)"), in_const("saved_inv_std", F, "(C)")},
            {out("dx", "(N,H,W,C) or (N,C)"), out("dscale", "(C)"), out("dbias", "(C)"),
             out("dresidual", "dy's dims")},
            {epsilon_attr(), detail::data_format_attr()},
            infer_batch_norm_add_relu_grad,
            {}}
          .sampled(samples::batch_norm(samples::NormPass::kAddReluBackward))
          .gradient_free("it is a backward op, and dlrt differentiates to first order only")
          .tol(kReductionTol));
  return ops;
}

}  // namespace dlrt::ops
