// elementwise.cu: the element-wise ops that are plain CUDA kernels: add/sub/mul/div/maximum/
// minimum/pow with NumPy broadcasting, leaky_relu, relu_grad/leaky_relu_grad/sigmoid_grad/tanh_grad,
// bias_add, and the
// bias+activation epilogue the conv and matmul kernels append. f32 only. The per-element
// arithmetic is kernel_math.hpp's (tested on the host); this file only launches it.
//
// Every kernel reads element i's inputs before writing element i of the output, with one
// thread per element, so an output may alias an input of its shape (docs/ops.md "in place").
// (relu/sigmoid/tanh forward run through cuDNN: cudnn_act.cc; the ops y = f(x) with their
// _grad ops, neg ... sign and the activations: activation.cu.)
#include <string>

#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 256;

#define GRID_STRIDE(i, n)                                                   \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += int64_t(gridDim.x) * blockDim.x)

// a, b, c: n elements (no broadcasting)
__global__ void binary_same_kernel(const float* a, const float* b, float* c, int64_t n,
                                   math::Binary op) {
  GRID_STRIDE(i, n) { c[i] = math::binary(op, a[i], b[i]); }
}

// c: view.dims; a and b read at the view's broadcast strides
__global__ void binary_bcast_kernel(const float* a, const float* b, float* c, int64_t n,
                                    math::Strided view, math::Binary op) {
  GRID_STRIDE(i, n) {
    int64_t oa, ob;
    math::source_offsets(view, i, &oa, &ob);
    c[i] = math::binary(op, a[oa], b[ob]);
  }
}

// dy, xy (x for relu, y for sigmoid/tanh), dx: n elements
__global__ void act_grad_kernel(const float* dy, const float* xy, float* dx, int64_t n,
                                math::ActGrad op) {
  GRID_STRIDE(i, n) { dx[i] = math::act_grad(op, dy[i], xy[i]); }
}

// x, y (leaky_relu) or dy, x, dx (leaky_relu_grad): n elements; alpha: the slope below 0
__global__ void leaky_relu_kernel(const float* x, float* y, int64_t n, float alpha) {
  GRID_STRIDE(i, n) { y[i] = math::leaky_relu(x[i], alpha); }
}
__global__ void leaky_relu_grad_kernel(const float* dy, const float* x, float* dx, int64_t n,
                                       float alpha) {
  GRID_STRIDE(i, n) { dx[i] = math::leaky_relu_grad(dy[i], x[i], alpha); }
}

// x, y: n elements with `channels` channels `inner` elements apart; b: (channels)
__global__ void bias_act_kernel(const float* x, const float* b, float* y, int64_t n,
                                int64_t channels, int64_t inner, math::Act act) {
  GRID_STRIDE(i, n) { y[i] = math::activate(act, x[i] + b[math::channel_of(i, channels, inner)]); }
}

__global__ void act_kernel(float* y, int64_t n, math::Act act) {
  GRID_STRIDE(i, n) { y[i] = math::activate(act, y[i]); }
}

// The check of the streaming ops of this file: f32, one flop per element.
void check_unary(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  check_f32_streaming(OpView(&d), dev, cost, 1.0);
}

// add/sub/mul/div/maximum/minimum (and pow): f32 operands only (the schema admits integers).
void check_binary(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  require_float_input(OpView(&d), 0);
  check_unary(d, dev, cost);
}

// ---- binary: add sub mul div maximum minimum pow --------------------------------------------------------------

math::Binary binary_of(const std::string& op) {
  if (op == "add") return math::Binary::kAdd;
  if (op == "sub") return math::Binary::kSub;
  if (op == "mul") return math::Binary::kMul;
  if (op == "maximum") return math::Binary::kMax;
  if (op == "minimum") return math::Binary::kMin;
  if (op == "pow") return math::Binary::kPow;
  return math::Binary::kDiv;
}

std::unique_ptr<Kernel> create_binary(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const math::Binary b = binary_of(op.name());
  const int64_t n = op.output(0).numel;
  const bool same = op.input(0).dims == op.output(0).dims && op.input(1).dims == op.output(0).dims;
  const math::Strided view =
      broadcast_view(op.input(0).dims, op.input(1).dims, op.output(0).dims, op.name());
  const std::string name = op.name();
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 2, 1, 0, name);
    if (same)
      binary_same_kernel<<<grid_for(n), kThreads, 0, s>>>(in<float>(a, 0), in<float>(a, 1),
                                                          out<float>(a, 0), n, b);
    else
      binary_bcast_kernel<<<grid_for(n), kThreads, 0, s>>>(in<float>(a, 0), in<float>(a, 1),
                                                           out<float>(a, 0), n, view, b);
    check_launch("binary kernel");
  });
}

// ---- activation gradients -----------------------------------------------------------------

std::unique_ptr<Kernel> create_act_grad(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const math::ActGrad g = op.name() == "relu_grad"      ? math::ActGrad::kRelu
                          : op.name() == "sigmoid_grad" ? math::ActGrad::kSigmoid
                                                        : math::ActGrad::kTanh;
  const int64_t n = op.output(0).numel;
  const std::string name = op.name();
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 2, 1, 0, name);
    act_grad_kernel<<<grid_for(n), kThreads, 0, s>>>(in<float>(a, 0), in<float>(a, 1),
                                                     out<float>(a, 0), n, g);
    check_launch("activation gradient kernel");
  });
}

// ---- leaky_relu and its gradient (attribute alpha) ----------------------------------------

std::unique_ptr<Kernel> create_leaky_relu(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const float alpha = static_cast<float>(op.get_float("alpha"));
  const bool grad = op.name() == "leaky_relu_grad";
  const int64_t n = op.output(0).numel;
  const std::string name = op.name();
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, grad ? 2 : 1, 1, 0, name);
    if (grad)
      leaky_relu_grad_kernel<<<grid_for(n), kThreads, 0, s>>>(in<float>(a, 0), in<float>(a, 1),
                                                              out<float>(a, 0), n, alpha);
    else
      leaky_relu_kernel<<<grid_for(n), kThreads, 0, s>>>(in<float>(a, 0), out<float>(a, 0), n,
                                                         alpha);
    check_launch("leaky_relu kernel");
  });
}

// ---- bias_add -----------------------------------------------------------------------------

std::unique_ptr<Kernel> create_bias_add(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const TensorView& x = op.input(0);
  const int cdim = bias_channel_dim(op, x.rank());
  int64_t inner = 1;
  for (int k = cdim + 1; k < x.rank(); ++k) inner *= x.dims[k];
  const int64_t channels = x.dims[cdim], n = x.numel;
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 2, 1, 0, "bias_add");
    bias_act_kernel<<<grid_for(n), kThreads, 0, s>>>(
        in<float>(a, 0), in<float>(a, 1), out<float>(a, 0), n, channels, inner, math::Act::kNone);
    check_launch("bias_add kernel");
  });
}

}  // namespace

void launch_bias_act(cudaStream_t stream, float* y, const float* b, int64_t n, int64_t channels,
                     int64_t inner, math::Act act) {
  bias_act_kernel<<<grid_for(n), kThreads, 0, stream>>>(y, b, y, n, channels, inner, act);
  check_launch("bias/activation epilogue kernel");
}

void launch_act(cudaStream_t stream, float* y, int64_t n, math::Act act) {
  act_kernel<<<grid_for(n), kThreads, 0, stream>>>(y, n, act);
  check_launch("activation epilogue kernel");
}

DLRT_CUDA_OPS(t) {
  for (const char* op : {"add", "sub", "mul", "div", "maximum", "minimum", "pow"})
    t.push_back({op, &check_binary, &create_binary});
  for (const char* op : {"relu_grad", "sigmoid_grad", "tanh_grad"})
    t.push_back({op, &check_unary, &create_act_grad});
  for (const char* op : {"leaky_relu", "leaky_relu_grad"})
    t.push_back({op, &check_unary, &create_leaky_relu});
  t.push_back({"bias_add", &check_unary, &create_bias_add});
}

}  // namespace dlrt::cuda
