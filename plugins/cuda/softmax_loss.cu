// softmax_loss.cu: sparse_softmax_cross_entropy, fused: one block per row of the logits
// computes the max, the sum of exponentials, the loss and the whole backprop row (softmax -
// onehot) in one pass over memory (three reads of the row, which stays in L1/L2 for the
// class counts this runtime meets). Arithmetic in double, per kernel_math.hpp's xent_*.
// (softmax and log_softmax run through cuDNN: cudnn_act.cc.)
//
// logits: (N,K) f32, labels: (N) i32|i64 -> loss: (N) f32, backprop: (N,K) f32.
// A label outside [0,K) makes its loss and its backprop row NaN.
#include <math_constants.h>

#include <string>

#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 256;

__device__ double block_reduce(double v, double* shared, bool is_max) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int step = blockDim.x / 2; step > 0; step /= 2) {
    if (threadIdx.x < step) {
      const double a = shared[threadIdx.x], b = shared[threadIdx.x + step];
      shared[threadIdx.x] = is_max ? math::max_combine(a, b) : a + b;
    }
    __syncthreads();
  }
  const double r = shared[0];
  __syncthreads();
  return r;
}

template <typename Label>
__global__ void sparse_xent_kernel(const float* logits, const Label* labels, float* loss,
                                   float* backprop, int64_t n, int64_t k) {
  __shared__ double shared[kThreads];
  for (int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    const float* x = logits + row * k;
    float* bp = backprop + row * k;
    const int64_t label = static_cast<int64_t>(labels[row]);
    const bool valid = math::label_valid(label, k);
    double mx = -CUDART_INF;
    for (int64_t j = threadIdx.x; j < k; j += blockDim.x) mx = math::max_combine(mx, double(x[j]));
    mx = block_reduce(mx, shared, true);
    double sum = 0.0;
    for (int64_t j = threadIdx.x; j < k; j += blockDim.x) sum += exp(double(x[j]) - mx);
    sum = block_reduce(sum, shared, false);
    for (int64_t j = threadIdx.x; j < k; j += blockDim.x)
      bp[j] = valid ? float(math::xent_backprop(double(x[j]), mx, sum, j == label)) : CUDART_NAN_F;
    if (threadIdx.x == 0)
      loss[row] = valid ? float(math::xent_loss(mx, sum, double(x[label]))) : CUDART_NAN_F;
  }
}

void check_sparse_xent(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  require_f32(op);
  fill_cost(cost, dev, 4.0 * double(op.input(0).numel), operand_bytes(op));
}

std::unique_ptr<Kernel> create_sparse_xent(const dlrt_op_desc& d, const dlrt_device_desc&,
                                           size_t*) {
  OpView op(&d);
  const int64_t n = op.input(0).dims[0], k = op.input(0).dims[1];
  const bool i64 = op.input(1).dtype == DLRT_I64;
  const unsigned grid = static_cast<unsigned>(n < 65536 ? n : 65536);
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 2, 2, 0, "sparse_softmax_cross_entropy");
    if (i64)
      sparse_xent_kernel<<<grid, kThreads, 0, s>>>(in<float>(a, 0), in<int64_t>(a, 1),
                                                   out<float>(a, 0), out<float>(a, 1), n, k);
    else
      sparse_xent_kernel<<<grid, kThreads, 0, s>>>(in<float>(a, 0), in<int32_t>(a, 1),
                                                   out<float>(a, 0), out<float>(a, 1), n, k);
    check_launch("sparse_softmax_cross_entropy kernel");
  });
}

}  // namespace

DLRT_CUDA_OPS(t) {
  t.push_back({"sparse_softmax_cross_entropy", &check_sparse_xent, &create_sparse_xent});
}

}  // namespace dlrt::cuda
