// batch_norm.cc: batch_norm, batch_norm_train, batch_norm_grad and batch_norm_relu_grad on
// cuDNN's batch normalization (legacy API, CUDNN_BATCHNORM_SPATIAL: per channel over N, H and W), f32.
//
//   batch_norm        cudnnBatchNormalizationForwardInference (mean, var as given)
//   batch_norm_train  cudnnBatchNormalizationForwardTraining: y, saved_mean and
//                     saved_inv_std (cuDNN's "resultSaveInvVariance" is 1/sqrt(var + eps),
//                     which is exactly saved_inv_std), and the running statistics moved in
//                     place in the output buffers (copied from the inputs first unless the
//                     executor aliased them) with exponentialAverageFactor = 1 - momentum
//                     (kernel_math.hpp: bn_average_factor).
//   batch_norm_grad   cudnnBatchNormalizationBackward with the saved statistics.
//   activation relu   (batch_norm, batch_norm_train) y = max(y, 0) in place after cuDNN's pass
//                     (activation.cu's launch_relu_in_place; cuDNN's fused BN_ACTIVATION form
//                     needs NHWC half tensors and a reserve space the op does not carry).
//   batch_norm_relu_grad  dy masked where the ReLU cut (scale*xhat + bias <= 0,
//                     math::bn_relu_dy, launch_bn_relu_dy) into the workspace, then
//                     cudnnBatchNormalizationBackward on it, as batch_norm_grad.
//   batch_norm_add_relu_train  batch_norm_train's pass (its operands one input further on),
//                     then y = max(0, y + residual) in place (launch_add_relu_in_place;
//                     cuDNN's BN_ADD_ACTIVATION form has the same NHWC-half restriction).
//   batch_norm_add_relu_grad  dresidual = dy where y > 0 (launch_relu_mask_by_y, straight
//                     into output 3), then cudnnBatchNormalizationBackward on dresidual.
//
// One value per channel (count = N*H*W = 1): cuDNN would unbias the running variance by
// count/(count-1) = 1/0, and 0 * NaN is NaN whatever the factor. That case gives cuDNN no
// running statistics (NULL: it then updates none) and moves them itself with cudnnAddTensor /
// cudnnScaleTensor: running_mean = momentum*running_mean + (1-momentum)*saved_mean,
// running_var = momentum*running_var (the batch variance is 0), docs/ops.md's rule;
// kernel_math_test.cc checks both paths' arithmetic.
//
// Layouts: x as (outer, C, inner) (norm_layout.hpp) is described as the NCHW tensor
// (outer, C, 1, inner): an NHWC image is (N*H*W, C, 1, 1), (N,C) is (N, C, 1, 1), an NCHW image
// (N, C, 1, H*W). Per channel the same values are reduced, and with H = W = 1 the NHWC bytes
// are NCHW's, so no NHWC support of the legacy API is relied on. The per-channel operands are
// described by cudnnDeriveBNTensorDescriptor. cuDNN's epsilon must be >= CUDNN_BN_MIN_EPSILON.
#include <string>

#include "cudnn_util.hpp"
#include "kernel_math.hpp"
#include "norm_layout.hpp"

namespace dlrt::cuda {
namespace {

bool is_grad(const std::string& op) {
  return op == "batch_norm_grad" || op == "batch_norm_relu_grad" ||
         op == "batch_norm_add_relu_grad";
}

// x's input index: dy comes first in the backward ops, and y too in batch_norm_add_relu_grad.
int x_index(const std::string& op) {
  return op == "batch_norm_add_relu_grad" ? 2 : is_grad(op) ? 1 : 0;
}

plugin::NormLayout layout_of(const OpView& op) {
  return plugin::norm_layout(op.input(x_index(op.name())).dims, op.get_string("data_format"),
                             op.name());
}

void check_batch_norm(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  require_f32(op);
  const plugin::NormLayout l = layout_of(op);
  for (int64_t v : {l.outer, l.c, l.inner}) to_int(v, op.name());
  if (op.get_float("epsilon") < CUDNN_BN_MIN_EPSILON)
    plugin::fail(DLRT_UNIMPLEMENTED,
                 "cuda: " + op.name() + ": epsilon " + std::to_string(op.get_float("epsilon")) +
                     " is below cuDNN's minimum " + std::to_string(CUDNN_BN_MIN_EPSILON));
  const double per = is_grad(op.name()) ? 12.0 : op.name() == "batch_norm" ? 4.0 : 8.0;
  fill_cost(cost, dev, per * double(op.input(0).numel), operand_bytes(op));
}

class BatchNormKernel final : public Kernel {
 public:
  explicit BatchNormKernel(const OpView& op)
      : name_(op.name()), l_(layout_of(op)), eps_(op.get_float("epsilon")) {
    add_ = name_ == "batch_norm_add_relu_train";
    if (name_ == "batch_norm_train" || add_) momentum_ = op.get_float("momentum");
    relu_ = !is_grad(name_) && !add_ && op.get_string("activation") == "relu";
    // x: (outer, C, 1, inner) NCHW (see the top of this file)
    set_image_desc(x_, true, l_.outer, l_.c, 1, l_.inner, name_);
    CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(c_, x_, CUDNN_BATCHNORM_SPATIAL));
    plugin::log(DLRT_LOG_INFO, "cuda: " + name_ + " " + plugin::dims_string(op.input(0).dims) +
                                   ": cuDNN batch normalization");
  }

  void run(cudaStream_t stream, const dlrt_kernel_args& a) override {
    const float one = 1.0f, zero = 0.0f;
    if (name_ == "batch_norm") {
      check_args(a, 5, 1, 0, name_);
      auto held = handle_.use(stream);
      CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
          handle_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x_, in(a, 0), x_, out(a, 0), c_, in(a, 1),
          in(a, 2), in(a, 3), in(a, 4), eps_));
    } else if (name_ == "batch_norm_train") {
      check_args(a, 5, 5, 0, name_);
      run_train(stream, a, 0);
    } else if (add_) {
      // x, residual, scale, bias, running_mean, running_var: batch_norm_train's operands from
      // input 2 on, then the residual tail in place on y.
      check_args(a, 6, 5, 0, name_);
      run_train(stream, a, 1);
      launch_add_relu_in_place(out<float>(a, 0), in<float>(a, 1), numel(), stream);
    } else if (name_ == "batch_norm_add_relu_grad") {
      // dy, y, x, scale, saved_mean, saved_inv_std -> dx, dscale, dbias, dresidual
      check_args(a, 6, 4, 0, name_);
      float* dres = out<float>(a, 3);
      launch_relu_mask_by_y(in<float>(a, 0), in<float>(a, 1), dres, numel(), stream);
      auto held = handle_.use(stream);
      CUDNN_CHECK(cudnnBatchNormalizationBackward(
          handle_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, x_, in(a, 2), x_, dres, x_,
          out(a, 0), c_, in(a, 3), out(a, 1), out(a, 2), eps_, in(a, 4), in(a, 5)));
    } else if (name_ == "batch_norm_relu_grad") {
      // dy, x, scale, bias, saved_mean, saved_inv_std; the masked dy in the workspace
      check_args(a, 6, 3, workspace_bytes(), name_);
      float* masked = static_cast<float*>(a.workspace);
      launch_bn_relu_dy(in<float>(a, 0), in<float>(a, 1), in<float>(a, 2), in<float>(a, 3),
                        in<float>(a, 4), in<float>(a, 5), masked, numel(), l_.c, l_.inner, stream);
      auto held = handle_.use(stream);
      CUDNN_CHECK(cudnnBatchNormalizationBackward(
          handle_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, x_, in(a, 1), x_, masked,
          x_, out(a, 0), c_, in(a, 2), out(a, 1), out(a, 2), eps_, in(a, 4), in(a, 5)));
    } else {
      check_args(a, 5, 3, 0, name_);  // dy, x, scale, saved_mean, saved_inv_std
      auto held = handle_.use(stream);
      CUDNN_CHECK(cudnnBatchNormalizationBackward(
          handle_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, x_, in(a, 1), x_, in(a, 0),
          x_, out(a, 0), c_, in(a, 2), out(a, 1), out(a, 2), eps_, in(a, 3), in(a, 4)));
    }
    if (relu_) launch_relu_in_place(out<float>(a, 0), numel(), stream);
  }

  int64_t numel() const { return l_.outer * l_.c * l_.inner; }
  // batch_norm_relu_grad's masked dy (x's size); nothing for the others.
  size_t workspace_bytes() const {
    return name_ == "batch_norm_relu_grad" ? size_t(numel()) * sizeof(float) : 0;
  }

 private:
  // batch_norm_train's pass; `shift` = 1 when a residual sits at input 1 (scale, bias and
  // the running statistics one input further on).
  void run_train(cudaStream_t stream, const dlrt_kernel_args& a, int shift) {
    const float one = 1.0f, zero = 0.0f;
    const size_t bytes = size_t(l_.c) * sizeof(float);
    // The running statistics are updated in the output buffers; start them from the inputs.
    for (int k = 1; k <= 2; ++k)
      if (a.outputs[k] != a.inputs[k + 2 + shift])
        CUDA_CHECK_MSG(cudaMemcpyAsync(a.outputs[k], a.inputs[k + 2 + shift], bytes,
                                       cudaMemcpyDeviceToDevice, stream),
                       name_ + ": running statistics");
    const bool one_value = l_.count() == 1;
    auto held = handle_.use(stream);
    CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
        handle_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x_, in(a, 0), x_, out(a, 0), c_,
        in(a, 1 + shift), in(a, 2 + shift), math::bn_average_factor(momentum_),
        one_value ? nullptr : out(a, 1),
        one_value ? nullptr : out(a, 2), eps_, out(a, 3), out(a, 4)));
    if (one_value) {
      // running_mean = (1-momentum)*saved_mean + momentum*running_mean; running_var *= momentum
      const float keep = static_cast<float>(momentum_), take = static_cast<float>(1 - momentum_);
      CUDNN_CHECK(cudnnAddTensor(handle_, &take, c_, out(a, 3), &keep, c_, out(a, 1)));
      CUDNN_CHECK(cudnnScaleTensor(handle_, c_, out(a, 2), &keep));
    }
  }

  std::string name_;
  plugin::NormLayout l_;
  double eps_, momentum_ = 0.9;
  bool relu_ = false;  // a forward form with activation relu
  bool add_ = false;   // batch_norm_add_relu_train
  SharedCudnnHandle handle_;
  TensorDesc x_, c_;  // x (and y, dy, dx); the (C) operands
};

std::unique_ptr<Kernel> create_batch_norm(const dlrt_op_desc& d, const dlrt_device_desc&,
                                          size_t* workspace) {
  auto k = std::make_unique<BatchNormKernel>(OpView(&d));
  *workspace = k->workspace_bytes();
  return k;
}

}  // namespace

DLRT_CUDA_OPS(t) {
  for (const char* op : {"batch_norm", "batch_norm_train", "batch_norm_grad", "batch_norm_relu_grad",
                         "batch_norm_add_relu_train", "batch_norm_add_relu_grad"})
    t.push_back({op, &check_batch_norm, &create_batch_norm});
}

}  // namespace dlrt::cuda
