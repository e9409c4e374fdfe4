// reduce.cu: reductions over a set of axes (reduce_sum, reduce_mean, reduce_max), the
// gradient of reduce_max, and bias_add_grad (a sum over every dim but the channel one). f32
// in and out, accumulated in double (as the reference does; the H200's f64 rate is ample for
// these memory-bound loops).
//
// Geometry: kernel_math.hpp's Reduction splits the input dims into kept dims (one output
// element per combination) and reduced dims (the group each output reduces). reduce_* and
// bias_add_grad are split reductions (kernel_math.hpp's SplitPlan, host-tested): with few
// outputs each group is cut into chunks, pass 1 gives every (output, chunk) a block of
// kThreads whose threads stride over the chunk and combine through shared memory into one
// double partial in the workspace, and pass 2 combines each output's partials in chunk order.
// With many outputs the plan has one chunk and pass 1 writes the outputs directly. The plan
// and both combination orders depend only on the shape: the same bits every run.
// reduce_max_grad keeps one block per output (a gradient of a max, off the hot path).
#include <math_constants.h>

#include <limits>
#include <string>

#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 256;

enum class Kind : int { kSum, kMean, kMax };

__device__ double combine(Kind k, double a, double b) {
  return k == Kind::kMax ? math::max_combine(a, b) : a + b;
}

// Block-wide combine of one value per thread; every thread gets the result.
__device__ double block_combine(Kind k, double v, double* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int step = blockDim.x / 2; step > 0; step /= 2) {
    if (threadIdx.x < step)
      shared[threadIdx.x] = combine(k, shared[threadIdx.x], shared[threadIdx.x + step]);
    __syncthreads();
  }
  double r = shared[0];
  __syncthreads();
  return r;
}

__device__ float finish(Kind k, double acc, int64_t group) {
  return float(k == Kind::kMean ? acc / double(group) : acc);
}

// Pass 1. x: input of r's dims -> partial: (r.outputs, p.splits) doubles, or, with one split,
// y: (r.outputs) directly. Block b reduces chunk b % splits of output b / splits.
__global__ void reduce_partial_kernel(const float* x, double* partial, float* y, math::Reduction r,
                                      math::SplitPlan p, Kind kind) {
  __shared__ double shared[kThreads];
  const double init = kind == Kind::kMax ? -CUDART_INF : 0.0;
  for (int64_t b = blockIdx.x; b < r.outputs * p.splits; b += gridDim.x) {
    const int64_t o = b / p.splits, s = b % p.splits;
    const int64_t base = math::reduction_base(r, o), end = math::split_end(p, s, r.group);
    double acc = init;
    for (int64_t g = math::split_begin(p, s) + threadIdx.x; g < end; g += blockDim.x)
      acc = combine(kind, acc, double(x[base + math::reduction_within(r, g)]));
    acc = block_combine(kind, acc, shared);
    if (threadIdx.x == 0) {
      if (p.splits == 1) y[o] = finish(kind, acc, r.group);
      else partial[b] = acc;
    }
  }
}

// Pass 2. partial: (outputs, splits) -> y: (outputs), one thread per output, chunks in order.
__global__ void reduce_finish_kernel(const double* partial, float* y, int64_t outputs,
                                     int64_t splits, int64_t group, Kind kind) {
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < outputs;
       o += int64_t(gridDim.x) * blockDim.x) {
    double acc = partial[o * splits];
    for (int64_t s = 1; s < splits; ++s) acc = combine(kind, acc, partial[o * splits + s]);
    y[o] = finish(kind, acc, group);
  }
}

// A prepared split reduction: its plan and the workspace its partials need.
struct SplitReduce {
  math::Reduction r;
  math::SplitPlan p;
  Kind kind;
  size_t workspace() const {
    return p.splits > 1 ? size_t(r.outputs * p.splits) * sizeof(double) : 0;
  }
  void launch(cudaStream_t s, const float* x, float* y, void* ws, const char* what) const {
    if (r.outputs == 0) return;
    const int64_t blocks = r.outputs * p.splits;
    reduce_partial_kernel<<<unsigned(blocks < 65536 ? blocks : 65536), kThreads, 0, s>>>(
        x, static_cast<double*>(ws), y, r, p, kind);
    check_launch(what);
    if (p.splits == 1) return;
    const int64_t fin = (r.outputs + kThreads - 1) / kThreads;
    reduce_finish_kernel<<<unsigned(fin < 65536 ? fin : 65536), kThreads, 0, s>>>(
        static_cast<const double*>(ws), y, r.outputs, p.splits, r.group, kind);
    check_launch(what);
  }
};

// x: input, y: (r.outputs) = reduce_max(x), dy: (r.outputs) -> dx: input's dims;
// dx = dy / (number of maxima) at every maximum, 0 elsewhere. dx may alias x: each element is
// read (both passes) and written by the same thread, the write in the second pass.
__global__ void reduce_max_grad_kernel(const float* x, const float* y, const float* dy, float* dx,
                                       math::Reduction r) {
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

std::unique_ptr<Kernel> create_reduce(const dlrt_op_desc& d, const dlrt_device_desc&,
                                      size_t* workspace) {
  OpView op(&d);
  const math::Reduction r = reduction(op.input(0).dims, reduced_axes(op, op.input(0).dims));
  const Kind kind = op.name() == "reduce_sum"    ? Kind::kSum
                    : op.name() == "reduce_mean" ? Kind::kMean
                                                 : Kind::kMax;
  const SplitReduce plan{r, math::split_plan(r.outputs, r.group), kind};
  const size_t ws = plan.workspace();
  *workspace = ws;
  const std::string name = op.name();
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, ws, name);
    plan.launch(s, in<float>(a, 0), out<float>(a, 0), a.workspace, "reduce kernel");
  });
}

std::unique_ptr<Kernel> create_reduce_max_grad(const dlrt_op_desc& d, const dlrt_device_desc&,
                                               size_t*) {
  OpView op(&d);
  const math::Reduction r = reduction(op.input(0).dims, reduced_axes(op, op.input(0).dims));
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 3, 1, 0, "reduce_max_grad");
    reduce_max_grad_kernel<<<grid_outputs(r.outputs), kThreads, 0, s>>>(
        in<float>(a, 0), in<float>(a, 1), in<float>(a, 2), out<float>(a, 0), r);
    check_launch("reduce_max_grad kernel");
  });
}

std::unique_ptr<Kernel> create_bias_add_grad(const dlrt_op_desc& d, const dlrt_device_desc&,
                                             size_t* workspace) {
  OpView op(&d);
  const auto& dims = op.input(0).dims;
  std::vector<bool> reduced(dims.size(), true);
  reduced[bias_channel_dim(op, static_cast<int>(dims.size()))] = false;
  const math::Reduction r = reduction(dims, reduced);
  // C outputs, each summing N*H*W elements: split, or C blocks would leave most SMs idle.
  const SplitReduce plan{r, math::split_plan(r.outputs, r.group), Kind::kSum};
  const size_t ws = plan.workspace();
  *workspace = ws;
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, ws, "bias_add_grad");
    plan.launch(s, in<float>(a, 0), out<float>(a, 0), a.workspace, "bias_add_grad kernel");
  });
}

}  // namespace

ChannelSum make_channel_sum(const std::vector<int64_t>& dims, int channel_dim, size_t* workspace) {
  std::vector<bool> reduced(dims.size(), true);
  reduced[size_t(channel_dim)] = false;
  const math::Reduction r = reduction(dims, reduced);
  const SplitReduce plan{r, math::split_plan(r.outputs, r.group), Kind::kSum};
  *workspace = plan.workspace();
  return [plan](cudaStream_t s, const float* in, float* out, void* ws) {
    plan.launch(s, in, out, ws, "channel sum kernel");
  };
}

DLRT_CUDA_OPS(t) {
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max"})
    t.push_back({op, &check_reduce, &create_reduce});
  t.push_back({"reduce_max_grad", &check_reduce, &create_reduce_max_grad});
  t.push_back({"bias_add_grad", &check_reduce, &create_bias_add_grad});
}

}  // namespace dlrt::cuda
