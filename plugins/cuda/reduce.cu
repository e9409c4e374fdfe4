// reduce.cu: reductions over a set of axes (reduce_sum, reduce_mean, reduce_max), the
// gradient of reduce_max, and bias_add_grad (a sum over every dim but the channel one). f32
// in and out, accumulated in double (as the reference does; the H200's f64 rate is ample for
// these memory-bound loops).
//
// Geometry: kernel_math.hpp's Reduction splits the input dims into kept dims (one output
// element per combination) and reduced dims (the group each output reduces). One block of
// kThreads per output element (grid-stride over outputs): the threads stride over the group
// and combine through shared memory. Deterministic: the same order every run.
#include <math_constants.h>

#include <limits>
#include <string>

#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 256;

enum class Kind : int { kSum, kMean, kMax };

__device__ double combine(Kind k, double a, double b) { return k == Kind::kMax ? math::max_combine(a, b) : a + b; }

// Block-wide combine of one value per thread; every thread gets the result.
__device__ double block_combine(Kind k, double v, double* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int step = blockDim.x / 2; step > 0; step /= 2) {
    if (threadIdx.x < step) shared[threadIdx.x] = combine(k, shared[threadIdx.x], shared[threadIdx.x + step]);
    __syncthreads();
  }
  double r = shared[0];
  __syncthreads();
  return r;
}

// x: input of r's dims -> y: (r.outputs)
__global__ void reduce_kernel(const float* x, float* y, math::Reduction r, Kind kind) {
  __shared__ double shared[kThreads];
  const double init = kind == Kind::kMax ? -CUDART_INF : 0.0;
  for (int64_t o = blockIdx.x; o < r.outputs; o += gridDim.x) {
    const int64_t base = math::reduction_base(r, o);
    double acc = init;
    for (int64_t g = threadIdx.x; g < r.group; g += blockDim.x)
      acc = combine(kind, acc, double(x[base + math::reduction_within(r, g)]));
    acc = block_combine(kind, acc, shared);
    if (threadIdx.x == 0) y[o] = float(kind == Kind::kMean ? acc / double(r.group) : acc);
  }
}

// x: input, y: (r.outputs) = reduce_max(x), dy: (r.outputs) -> dx: input's dims;
// dx = dy / (number of maxima) at every maximum, 0 elsewhere. dx may alias x: each element is
// read (both passes) and written by the same thread, the write in the second pass.
__global__ void reduce_max_grad_kernel(const float* x, const float* y, const float* dy, float* dx, math::Reduction r) {
  __shared__ double shared[kThreads];
  for (int64_t o = blockIdx.x; o < r.outputs; o += gridDim.x) {
    const int64_t base = math::reduction_base(r, o);
    const float m = y[o];
    double ties = 0;
    for (int64_t g = threadIdx.x; g < r.group; g += blockDim.x)
      ties += x[base + math::reduction_within(r, g)] == m ? 1.0 : 0.0;
    ties = block_combine(Kind::kSum, ties, shared);
    const float share = float(double(dy[o]) / ties);
    for (int64_t g = threadIdx.x; g < r.group; g += blockDim.x) {
      const int64_t i = base + math::reduction_within(r, g);
      dx[i] = x[i] == m ? share : 0.0f;
    }
  }
}

void check_reduce(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  check_f32_streaming(op, dev, cost, 0.0);
  if (cost != nullptr) fill_cost(cost, dev, double(op.input(0).numel), operand_bytes(op));
}

unsigned grid_outputs(int64_t outputs) {
  return static_cast<unsigned>(outputs < 65536 ? outputs : 65536);
}

std::unique_ptr<Kernel> create_reduce(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const math::Reduction r = reduction(op.input(0).dims, reduced_axes(op, op.input(0).dims));
  const Kind kind = op.name() == "reduce_sum" ? Kind::kSum : op.name() == "reduce_mean" ? Kind::kMean : Kind::kMax;
  const std::string name = op.name();
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, 0, name);
    reduce_kernel<<<grid_outputs(r.outputs), kThreads, 0, s>>>(in<float>(a, 0), out<float>(a, 0), r, kind);
    check_launch("reduce kernel");
  });
}

std::unique_ptr<Kernel> create_reduce_max_grad(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const math::Reduction r = reduction(op.input(0).dims, reduced_axes(op, op.input(0).dims));
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 3, 1, 0, "reduce_max_grad");
    reduce_max_grad_kernel<<<grid_outputs(r.outputs), kThreads, 0, s>>>(in<float>(a, 0), in<float>(a, 1),
                                                                       in<float>(a, 2), out<float>(a, 0), r);
    check_launch("reduce_max_grad kernel");
  });
}

std::unique_ptr<Kernel> create_bias_add_grad(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const auto& dims = op.input(0).dims;
  std::vector<bool> reduced(dims.size(), true);
  reduced[bias_channel_dim(op, static_cast<int>(dims.size()))] = false;
  const math::Reduction r = reduction(dims, reduced);
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, 0, "bias_add_grad");
    reduce_kernel<<<grid_outputs(r.outputs), kThreads, 0, s>>>(in<float>(a, 0), out<float>(a, 0), r, Kind::kSum);
    check_launch("bias_add_grad kernel");
  });
}

}  // namespace

void add_reduce_ops(std::vector<OpEntry>& t) {
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max"}) t.push_back({op, &check_reduce, &create_reduce});
  t.push_back({"reduce_max_grad", &check_reduce, &create_reduce_max_grad});
  t.push_back({"bias_add_grad", &check_reduce, &create_bias_add_grad});
}

}  // namespace dlrt::cuda
