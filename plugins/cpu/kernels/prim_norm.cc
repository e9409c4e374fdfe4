// prim_norm.cc: batch normalization on oneDNN's batch_normalization primitives.
//
//   batch_norm        x, scale, bias, mean, var  -> y        forward_inference, use_global_stats
//   batch_norm_train  x, scale, bias, rm, rv     -> y, rm', rv', saved_mean, saved_inv_std
//                                                           forward_training, then a loop
// (batch_norm_grad and batch_norm_relu_grad, the backward ops, are loop_batch_norm.cc's.)
// All with use_scale | use_shift; activation relu adds fuse_norm_relu (the training pass then
// writes oneDNN's ReLU mask into an owned workspace that nothing reads: the backward op,
// batch_norm_relu_grad, rebuilds the mask from x in loop_batch_norm.cc). x stays in its own
// layout: NHWC and (N,C) are oneDNN's nhwc (rank 2 as (N,C,1,1); NHWC folds N*H*W into W),
// NCHW its nchw (H*W folded into W); the per-channel operands are plain (C) vectors
// (norm_layout.hpp has the folding).
//
// oneDNN's training pass writes the batch mean (straight into saved_mean) and the biased
// batch variance (into an owned buffer); it has no running statistics, so a loop after it
// moves them (docs/ops.md: running = momentum*running + (1-momentum)*batch, the variance
// unbiased by count/(count-1)) and turns the variance into saved_inv_std.
#include "prim_norm.hpp"

#include <algorithm>
#include <cmath>

#include "norm_layout.hpp"
#include "prim_common.hpp"

namespace dlrt::cpu::prim {
namespace {

using dnnl::normalization_flags;
using dnnl::prop_kind;

plugin::NormLayout layout_of(const OpView& op) {
  const bool grad = op.name() == "batch_norm_grad";
  return plugin::norm_layout(op.input(grad ? 1 : 0).dims, op.get_string("data_format"), op.name());
}

memory::desc channel_md(int64_t c) { return memory::desc({c}, memory::data_type::f32, Tag::a); }

const normalization_flags kScaleShift =
    normalization_flags::use_scale | normalization_flags::use_shift;

// kScaleShift, with the ReLU fused when the op's activation is relu.
normalization_flags forward_flags(const OpView& op) {
  return op.get_string("activation") == "relu" ? kScaleShift | normalization_flags::fuse_norm_relu
                                               : kScaleShift;
}

// y = scale*(x - mean)/sqrt(var + epsilon) + bias with the given statistics.
class BatchNormInference : public PrimKernel {
 public:
  BatchNormInference(const dlrt_plugin& p, const OpView& op) : PrimKernel(p, op) {
    const plugin::NormLayout l = layout_of(op);
    const memory::desc x = image_md(l.image()), c = channel_md(l.c);
    dnnl::batch_normalization_forward::primitive_desc pd(
        dnnl::batch_normalization_forward::desc(
            prop_kind::forward_inference, x, static_cast<float>(op.get_float("epsilon")),
            forward_flags(op) | normalization_flags::use_global_stats),
        user_scratchpad(), engine_);
    add_step(dnnl::batch_normalization_forward(pd),
             {{DNNL_ARG_SRC, input(0, x)},
              {DNNL_ARG_SCALE, input(1, c)},
              {DNNL_ARG_SHIFT, input(2, c)},
              {DNNL_ARG_MEAN, input(3, c)},
              {DNNL_ARG_VARIANCE, input(4, c)},
              {DNNL_ARG_DST, output(0, x)}},
             pd.scratchpad_desc());
  }
};

// Batch statistics; the running ones moved by the loop in run().
class BatchNormTrain : public PrimKernel {
 public:
  BatchNormTrain(const dlrt_plugin& p, const OpView& op)
      : PrimKernel(p, op),
        l_(layout_of(op)),
        eps_(op.get_float("epsilon")),
        momentum_(op.get_float("momentum")) {
    const memory::desc x = image_md(l_.image()), c = channel_md(l_.c);
    var_ = owned(c);
    dnnl::batch_normalization_forward::primitive_desc pd(
        dnnl::batch_normalization_forward::desc(prop_kind::forward_training, x,
                                                static_cast<float>(eps_), forward_flags(op)),
        user_scratchpad(), engine_);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, input(0, x)},
                                            {DNNL_ARG_SCALE, input(1, c)},
                                            {DNNL_ARG_SHIFT, input(2, c)},
                                            {DNNL_ARG_DST, output(0, x)},
                                            {DNNL_ARG_MEAN, output(3, c)},
                                            {DNNL_ARG_VARIANCE, var_}};
    if (pd.workspace_desc().get_size() > 0) args[DNNL_ARG_WORKSPACE] = owned(pd.workspace_desc());
    add_step(dnnl::batch_normalization_forward(pd), std::move(args), pd.scratchpad_desc());
  }

  void run(dnnl::stream& stream, const dlrt_kernel_args& args) override {
    PrimKernel::run(stream, args);
    stream.wait();
    // rm/rv may alias rm_out/rv_out (in place): each channel reads both before writing.
    const float* rm = static_cast<const float*>(args.inputs[3]);
    const float* rv = static_cast<const float*>(args.inputs[4]);
    const float* mean = static_cast<const float*>(args.outputs[3]);
    const float* var = static_cast<const float*>(var_.get_data_handle());
    float *rm_out = static_cast<float*>(args.outputs[1]),
          *rv_out = static_cast<float*>(args.outputs[2]);
    float* inv_std = static_cast<float*>(args.outputs[4]);
    const double n = double(l_.count()), unbias = n > 1 ? n / (n - 1) : 1.0;
    for (int64_t c = 0; c < l_.c; ++c) {
      const double old_mean = rm[c], old_var = rv[c];
      rm_out[c] = static_cast<float>(momentum_ * old_mean + (1 - momentum_) * double(mean[c]));
      rv_out[c] =
          static_cast<float>(momentum_ * old_var + (1 - momentum_) * double(var[c]) * unbias);
      inv_std[c] = static_cast<float>(1.0 / std::sqrt(double(var[c]) + eps_));
    }
  }

 private:
  plugin::NormLayout l_;
  double eps_, momentum_;
  memory var_;  // (C) the biased batch variance oneDNN writes
};

}  // namespace

void batch_norm_check(const OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost) {
  const std::string& n = op.name();
  require_f32(op);
  fill_cost(op, p, (n == "batch_norm_train" ? 8.0 : 4.0) * static_cast<double>(op.input(0).numel),
            cost);
}

std::unique_ptr<Kernel> batch_norm_create(const dlrt_plugin& p, const OpView& op) {
  const std::string& n = op.name();
  if (n == "batch_norm_train") return make_kernel<BatchNormTrain>(p, op);
  return make_kernel<BatchNormInference>(p, op);
}

}  // namespace dlrt::cpu::prim
