// prim_norm.cc: batch_norm, the inference form of batch normalization, on oneDNN's
// batch_normalization primitive:
//
//   batch_norm   x, scale, bias, mean, var -> y     forward_inference, use_global_stats
//
// with use_scale | use_shift; activation relu adds fuse_norm_relu. x stays in its own layout:
// NHWC and (N,C) are oneDNN's nhwc (rank 2 as (N,C,1,1); NHWC folds N*H*W into W), NCHW its
// nchw (H*W folded into W); the per-channel operands are plain (C) vectors (norm_layout.hpp
// has the folding). The training forms (batch_norm_train, batch_norm_add_relu_train) are
// loop_batch_norm_train.cc's: oneDNN 2.6 has no fused residual add, and its training pass was
// slower than that loop at ResNet-20's sizes; the backward ops are loop_batch_norm.cc's.

#include <algorithm>
#include <cmath>

#include "norm_layout.hpp"
#include "prim_common.hpp"

namespace dlrt::cpu::prim {
namespace {

using dnnl::normalization_flags;
using dnnl::prop_kind;

plugin::NormLayout layout_of(const OpView& op) {
  return plugin::norm_layout(op.input(0).dims, op.get_string("data_format"), op.name());
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

}  // namespace

void batch_norm_check(const OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost) {
  require_f32(op);
  fill_cost(op, p, 4.0 * static_cast<double>(op.input(0).numel), cost);
}

std::unique_ptr<Kernel> batch_norm_create(const dlrt_plugin& p, const OpView& op) {
  return make_kernel<BatchNormInference>(p, op);
}

DLRT_CPU_KERNELS(t) { t.push_back({"batch_norm", batch_norm_check, batch_norm_create}); }

}  // namespace dlrt::cpu::prim
