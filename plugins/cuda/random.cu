// random.cu: random_uniform, random_normal and dropout on the shared Philox stream
// (plugins/common/philox.hpp): element i draws from (seed, rng_offset, i), so this plugin
// produces bit for bit the numbers of every other backend. Values are formed in double and
// rounded once to f32 (kernel_math.hpp's uniform_value / normal_value / dropout_mask).
// The offset: a kernel parameter is frozen into a captured CUDA Graph, so a host of ABI >= 1.1
// passes `rng_offset_device`, device memory it rewrites before every run and replay, and the
// kernels read *that* when they execute (every thread reads the same 8 bytes; they stay in
// cache). Without it (eager runs, variable init, a 1.0 host) they use args.rng_offset, passed
// by value.
#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 256;

#define GRID_STRIDE(i, n)                                                   \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += int64_t(gridDim.x) * blockDim.x)

// The offset of this execution: *offset_ptr when the host gave device memory, else `offset`.
__device__ __forceinline__ uint64_t offset_of(const uint64_t* offset_ptr, uint64_t offset) {
  return offset_ptr != nullptr ? *offset_ptr : offset;
}

// y: (n) f32
__global__ void uniform_kernel(float* y, int64_t n, uint64_t seed, const uint64_t* offset_ptr,
                               uint64_t offset_value, double lo, double hi) {
  const uint64_t offset = offset_of(offset_ptr, offset_value);
  GRID_STRIDE(i, n) { y[i] = math::uniform_value(seed, offset, uint64_t(i), lo, hi); }
}
__global__ void normal_kernel(float* y, int64_t n, uint64_t seed, const uint64_t* offset_ptr,
                              uint64_t offset_value, double mean, double stddev) {
  const uint64_t offset = offset_of(offset_ptr, offset_value);
  GRID_STRIDE(i, n) { y[i] = math::normal_value(seed, offset, uint64_t(i), mean, stddev); }
}
// x -> y, mask: same shape; y may alias x
__global__ void dropout_kernel(const float* x, float* y, float* mask, int64_t n, uint64_t seed,
                               const uint64_t* offset_ptr, uint64_t offset_value, double rate,
                               float keep) {
  const uint64_t offset = offset_of(offset_ptr, offset_value);
  GRID_STRIDE(i, n) {
    const float m = math::dropout_mask(seed, offset, uint64_t(i), rate, keep);
    const float xi = x[i];
    mask[i] = m;
    y[i] = float(double(xi) * double(m));
  }
}

void check_random(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  check_f32_streaming(OpView(&d), dev, cost, 40.0);
}

std::unique_ptr<Kernel> create_random(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const int64_t n = op.output(0).numel;
  const uint64_t seed = static_cast<uint64_t>(op.get_int("seed"));
  if (op.name() == "random_uniform") {
    const double lo = op.get_float("minval"), hi = op.get_float("maxval");
    return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
      check_args(a, 0, 1, 0, "random_uniform");
      uniform_kernel<<<grid_for(n), kThreads, 0, s>>>(
          out<float>(a, 0), n, seed, plugin::rng_offset_device(a), a.rng_offset, lo, hi);
      check_launch("random_uniform kernel");
    });
  }
  const double mean = op.get_float("mean"), stddev = op.get_float("stddev");
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 0, 1, 0, "random_normal");
    normal_kernel<<<grid_for(n), kThreads, 0, s>>>(
        out<float>(a, 0), n, seed, plugin::rng_offset_device(a), a.rng_offset, mean, stddev);
    check_launch("random_normal kernel");
  });
}

std::unique_ptr<Kernel> create_dropout(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const int64_t n = op.input(0).numel;
  const uint64_t seed = static_cast<uint64_t>(op.get_int("seed"));
  const double rate = op.get_float("rate");
  const float keep = static_cast<float>(1.0 / (1.0 - rate));
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 2, 0, "dropout");
    dropout_kernel<<<grid_for(n), kThreads, 0, s>>>(
        in<float>(a, 0), out<float>(a, 0), out<float>(a, 1), n, seed, plugin::rng_offset_device(a),
        a.rng_offset, rate, keep);
    check_launch("dropout kernel");
  });
}

}  // namespace

DLRT_CUDA_OPS(t) {
  t.push_back({"random_uniform", &check_random, &create_random});
  t.push_back({"random_normal", &check_random, &create_random});
  t.push_back({"dropout", &check_random, &create_dropout});
}

}  // namespace dlrt::cuda
