// multinomial.cc: multinomial (core/ops/infer_sampling.cc) as plain loops, the oracle the cpu
// and cuda kernels must equal bit for bit. Draw (b, s) of logits (B, K) takes the Philox
// uniform u of element b*S + s (philox.hpp: the same stream as random_uniform), then walks the
// row's unnormalised softmax CDF in double: the first id k with u*Z < w_0 + ... + w_k, where
// w_j = exp(x_j - max) and Z = the sum of all w_j in id order. A row with a NaN, a +inf or
// no finite logit gives -1 for every draw.
#include <cmath>

#include "kernel_util.hpp"
#include "philox.hpp"

namespace dlrt::reference::detail {
namespace {

// The draws of one row into ids[0..S).
void sample_row(const float* x, int64_t k, int64_t samples, uint64_t seed, uint64_t rng_offset,
                int64_t row, int64_t* ids) {
  float m = -INFINITY;
  bool valid = true;
  for (int64_t j = 0; j < k; ++j) {
    if (std::isnan(x[j]) || x[j] == INFINITY) valid = false;
    if (x[j] > m) m = x[j];
  }
  if (!valid || m == -INFINITY) {  // no distribution: NaN, +inf, or every logit -inf
    for (int64_t s = 0; s < samples; ++s) ids[s] = -1;
    return;
  }
  double z = 0;
  for (int64_t j = 0; j < k; ++j) z += std::exp(double(x[j]) - double(m));
  for (int64_t s = 0; s < samples; ++s) {
    const double u = double(philox::uniform(seed, rng_offset, uint64_t(row * samples + s)));
    const double target = u * z;  // < z: u <= 1 - 2^-24 and z >= 1 (the max's weight)
    double c = 0;
    int64_t pick = -1;
    for (int64_t j = 0; j < k && pick < 0; ++j) {
      c += std::exp(double(x[j]) - double(m));
      if (target < c) pick = j;  // c grew at j: w_j > 0, so a weight-0 id is never picked
    }
    ids[s] = pick;  // never -1 here: the last c is z (the same sum), and target < z
  }
}

// logits (B, K) f32 -> ids (B, S) i64
void run_multinomial(const OpView& op, const void* const* in, void* const* out,
                     uint64_t rng_offset) {
  const TensorView& x = op.input(0);
  const int64_t rows = x.dims[0], k = x.dims[1], samples = op.get_int("num_samples");
  const auto seed = static_cast<uint64_t>(op.get_int("seed"));
  const float* logits = static_cast<const float*>(in[0]);
  int64_t* ids = static_cast<int64_t*>(out[0]);
  for (int64_t b = 0; b < rows; ++b)
    sample_row(logits + b * k, k, samples, seed, rng_offset, b, ids + b * samples);
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  // No check: the schema admits f32 logits and i64 ids only.
  t.push_back({"multinomial", run_multinomial, nullptr});
}

}  // namespace dlrt::reference::detail
