// multinomial.cu: multinomial (core/ops/infer_sampling.cc) on the shared Philox stream, one
// thread per draw (b, s) running math::multinomial_draw (kernel_math.hpp, host-tested against
// the reference in kernel_math_test.cc): the row's max and normaliser summed sequentially in
// double, then the inverse CDF of the draw's uniform, so the ids equal every other device's.
// Each thread repeats its row's O(K) passes (K = 256 bytes of a char model: cheap); a
// block-wide reduction would be faster for long rows but would sum in another order.
// The offset: *rng_offset_device when the host gives it (read at execution, so a captured
// graph draws new ids on every replay), else args.rng_offset (random.cu explains).
#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 128;

#define GRID_STRIDE(i, n)                                                   \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += int64_t(gridDim.x) * blockDim.x)

// logits (rows, k) f32 -> ids (rows, samples) i64
__global__ void multinomial_kernel(const float* logits, int64_t* ids, int64_t rows, int64_t k,
                                   int64_t samples, uint64_t seed, const uint64_t* offset_ptr,
                                   uint64_t offset_value) {
  const uint64_t offset = offset_ptr != nullptr ? *offset_ptr : offset_value;
  GRID_STRIDE(i, rows * samples) {
    ids[i] = math::multinomial_draw(logits, k, samples, seed, offset, i / samples, i % samples);
  }
}

void check_multinomial(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  require_f32(op);
  // Every draw reads its row twice and calls exp twice per logit.
  fill_cost(cost, dev,
            4.0 * static_cast<double>(op.input(0).numel) *
                static_cast<double>(op.get_int("num_samples")),
            operand_bytes(op));
}

std::unique_ptr<Kernel> create_multinomial(const dlrt_op_desc& d, const dlrt_device_desc&,
                                           size_t*) {
  OpView op(&d);
  const int64_t rows = op.input(0).dims[0], k = op.input(0).dims[1];
  const int64_t samples = op.get_int("num_samples");
  const auto seed = static_cast<uint64_t>(op.get_int("seed"));
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, 0, "multinomial");
    multinomial_kernel<<<grid_for(rows * samples, kThreads), kThreads, 0, s>>>(
        in<float>(a, 0), out<int64_t>(a, 0), rows, k, samples, seed,
        plugin::rng_offset_device(a), a.rng_offset);
    check_launch("multinomial kernel");
  });
}

}  // namespace

DLRT_CUDA_OPS(t) { t.push_back({"multinomial", &check_multinomial, &create_multinomial}); }

}  // namespace dlrt::cuda
