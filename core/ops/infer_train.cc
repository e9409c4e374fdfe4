// core/ops/infer_train.cc: the optimizer updates, sgd_update and adam_update (Keras'
// formulas, docs/ops.md). Each output may alias the input it updates: the executor hands
// the same buffer for both, so a step updates weights and slots in place.
//
// Version 2 of both: the learning rate is an input (an f32 scalar, read on the device at
// run time), no longer an attribute, so a schedule changes it between steps without a new
// compile (nn's "optimizer/learning_rate" variable). A plugin that only knows version 1
// declines them (docs/ops.md, "Decisions").
#include <fmt/format.h>

#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in_const;
using detail::out;

// Inputs [0, n_same) all have param's dims; the outputs are the inputs listed in `outs`.
Status infer_update(InferContext& ctx, int n_same, std::initializer_list<int> outs) {
  for (int i = 1; i < n_same; ++i) DLRT_OPS_RETURN_IF_ERROR(ctx.expect_same_dims(0, i));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(ctx.num_inputs() - 1, 0, "()"));  // learning_rate
  for (int i : outs) ctx.add_output(ctx.input(i).dtype, ctx.dims(i));
  return Status();
}

// param, grad, velocity (one shape), learning_rate () -> param, velocity
Status infer_sgd(InferContext& ctx) {
  if (!(ctx.attr_float("momentum") >= 0))
    return ctx.error("attribute 'momentum' is {}, expected >= 0", ctx.attr_float("momentum"));
  return infer_update(ctx, 3, {0, 2});
}

// param, grad, m, v (one shape), step (), learning_rate () -> param, m, v
Status infer_adam(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(4, 0, "()"));
  for (const char* beta : {"beta1", "beta2"}) {
    const double b = ctx.attr_float(beta);
    if (!(b >= 0 && b < 1))
      return ctx.error("attribute '{}' is {}, expected a value in [0, 1)", beta, b);
  }
  if (!(ctx.attr_float("epsilon") > 0))
    return ctx.error("attribute 'epsilon' is {}, expected > 0", ctx.attr_float("epsilon"));
  return infer_update(ctx, 4, {0, 2, 3});
}

}  // namespace

std::vector<OpDef> train_ops() {
  const DtypeSet& F = kFloatTypes;
  std::vector<OpDef> ops;
  const char* why = "optimizer updates are not differentiable";
  ops.push_back(OpDef{"sgd_update",
                      "train",
                      "SGD with (Nesterov) momentum, Keras' formula",
                      {in_const("param", F), in_const("grad", F), in_const("velocity", F),
                       in_const("learning_rate", {DLRT_F32}, "()", 0)},
                      {out("param"), out("velocity")},
                      {optional_attr("momentum", 0.0), optional_attr("nesterov", false)},
                      infer_sgd,
                      {{0, 0}, {1, 2}}}
                    .sampled(samples::sgd_update)
                    .at_version(2)
                    .with_state()
                    .gradient_free(why));
  // step and learning_rate are always f32 (step: the 1-based step number, already advanced),
  // whatever param's dtype.
  ops.push_back(OpDef{
      "adam_update",
      "train",
      "Adam, Keras' formula with bias-corrected lr_t",
      {in_const("param", F), in_const("grad", F), in_const("m", F), in_const("v", F),
       in_const("step", {DLRT_F32}, "()", 0), in_const("learning_rate", {DLRT_F32}, "()", 0)},
      {out("param"), out("m"), out("v")},
      {optional_attr("beta1", 0.9), optional_attr("beta2", 0.999), optional_attr("epsilon", 1e-7)},
      infer_adam,
      {{0, 0}, {1, 2}, {2, 3}}}
                    .sampled(samples::adam_update)
                    .at_version(2)
                    .with_state()
                    .gradient_free(why));
  return ops;
}

}  // namespace dlrt::ops
