// cudnn_act.cc: relu, sigmoid, tanh (cudnnActivationForward) and softmax, log_softmax
// (cudnnSoftmaxForward, CUDNN_SOFTMAX_ACCURATE / CUDNN_SOFTMAX_LOG: max-subtracted, as
// docs/ops.md says), f32.
//
// Activations see the tensor as (1,1,1,n). Softmax along any axis sees x as (outer, K, inner,
// 1) NCHW and uses CUDNN_SOFTMAX_MODE_CHANNEL, which normalises over C for every (n, h, w):
// the default axis -1 is (rows, K, 1, 1). The gradients relu_grad/sigmoid_grad/tanh_grad are
// CUDA kernels (elementwise.cu): cudnnActivationBackward wants both x and y, and each of our
// grad ops carries only one of them.
#include <string>

#include "cudnn_util.hpp"

namespace dlrt::cuda {
namespace {

void check_act(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  check_f32_streaming(op, dev, cost, op.name() == "relu" ? 1.0 : 8.0);
  to_int(op.input(0).numel, op.name());
}

class ActKernel final : public Kernel {
 public:
  explicit ActKernel(const OpView& op) : name_(op.name()) {
    const cudnnActivationMode_t mode = name_ == "relu"      ? CUDNN_ACTIVATION_RELU
                                       : name_ == "sigmoid" ? CUDNN_ACTIVATION_SIGMOID
                                                            : CUDNN_ACTIVATION_TANH;
    CUDNN_CHECK(cudnnSetActivationDescriptor(act_, mode, CUDNN_PROPAGATE_NAN, 0.0));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 1,
                                           to_int(op.input(0).numel, name_)));
  }
  void run(cudaStream_t stream, const dlrt_kernel_args& a) override {
    check_args(a, 1, 1, 0, name_);
    const float one = 1.0f, zero = 0.0f;
    auto held = handle_.use(stream);
    CUDNN_CHECK(
        cudnnActivationForward(handle_, act_, &one, desc_, in(a, 0), &zero, desc_, out(a, 0)));
  }

 private:
  std::string name_;
  SharedCudnnHandle handle_;
  ActDesc act_;
  TensorDesc desc_;
};

void check_softmax(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  check_f32_streaming(op, dev, cost, 5.0);
  const auto& x = op.input(0);
  const int axis = plugin::normalize_axis(op.get_int("axis"), x.rank(), op.name());
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= x.dims[i];
  for (int i = axis + 1; i < x.rank(); ++i) inner *= x.dims[i];
  to_int(outer, op.name()), to_int(x.dims[axis], op.name()), to_int(inner, op.name());
}

class SoftmaxKernel final : public Kernel {
 public:
  explicit SoftmaxKernel(const OpView& op) : name_(op.name()) {
    const auto& x = op.input(0);
    const int axis = plugin::normalize_axis(op.get_int("axis"), x.rank(), op.name());
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= x.dims[i];
    for (int i = axis + 1; i < x.rank(); ++i) inner *= x.dims[i];
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                           to_int(outer, name_), to_int(x.dims[axis], name_),
                                           to_int(inner, name_), 1));
    algo_ = name_ == "log_softmax" ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
  }
  void run(cudaStream_t stream, const dlrt_kernel_args& a) override {
    check_args(a, 1, 1, 0, name_);
    const float one = 1.0f, zero = 0.0f;
    auto held = handle_.use(stream);
    CUDNN_CHECK(cudnnSoftmaxForward(handle_, algo_, CUDNN_SOFTMAX_MODE_CHANNEL, &one, desc_,
                                    in(a, 0), &zero, desc_, out(a, 0)));
  }

 private:
  std::string name_;
  SharedCudnnHandle handle_;
  TensorDesc desc_;
  cudnnSoftmaxAlgorithm_t algo_ = CUDNN_SOFTMAX_ACCURATE;
};

std::unique_ptr<Kernel> create_act(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  return std::make_unique<ActKernel>(OpView(&d));
}
std::unique_ptr<Kernel> create_softmax(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  return std::make_unique<SoftmaxKernel>(OpView(&d));
}

}  // namespace

DLRT_CUDA_OPS(t) {
  for (const char* op : {"relu", "sigmoid", "tanh"}) t.push_back({op, &check_act, &create_act});
  for (const char* op : {"softmax", "log_softmax"})
    t.push_back({op, &check_softmax, &create_softmax});
}

}  // namespace dlrt::cuda
