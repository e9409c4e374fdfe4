// random.cc: the random ops (random_uniform, random_normal, dropout) on the shared Philox
// stream of plugins/common/philox.hpp: element i of a tensor draws from
// (seed, rng_offset, i), so every backend produces the same bits. Values are formed in
// double and rounded once to the output dtype.
#include "kernel_util.hpp"
#include "philox.hpp"

namespace dlrt::reference::detail {
namespace {

uint64_t seed_of(const OpView& op) { return static_cast<uint64_t>(op.get_int("seed")); }

// -> y: shape; uniform: minval + (maxval - minval) * u(i); normal: mean + stddev * z(i)
void run_random(const OpView& op, const void* const*, void* const* out, uint64_t rng_offset) {
  const uint64_t seed = seed_of(op);
  const TensorView& y = op.output(0);
  if (op.name() == "random_uniform") {
    const double lo = op.get_float("minval"), hi = op.get_float("maxval");
    for (int64_t i = 0; i < y.numel; ++i)
      store_double(out[0], y.dtype, i,
                   lo + (hi - lo) * double(philox::uniform(seed, rng_offset, uint64_t(i))));
  } else {
    const double mean = op.get_float("mean"), stddev = op.get_float("stddev");
    for (int64_t i = 0; i < y.numel; ++i)
      store_double(out[0], y.dtype, i,
                   mean + stddev * philox::normal(seed, rng_offset, uint64_t(i)));
  }
}

// x: any -> y, mask: shape of x; mask[i] = u(i) >= rate ? 1/(1-rate) : 0; y[i] = x[i] * mask[i]
void run_dropout(const OpView& op, const void* const* in, void* const* out, uint64_t rng_offset) {
  const uint64_t seed = seed_of(op);
  const double rate = op.get_float("rate");
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(in[0]);
    T* y = static_cast<T*>(out[0]);
    T* mask = static_cast<T*>(out[1]);
    const T keep = static_cast<T>(1.0 / (1.0 - rate));
    for (int64_t i = 0; i < op.input(0).numel; ++i) {
      const T m = double(philox::uniform(seed, rng_offset, uint64_t(i))) >= rate ? keep : T(0);
      const T xi = x[i];  // read before writing: y may alias x
      mask[i] = m;
      y[i] = static_cast<T>(double(xi) * double(m));
    }
  });
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"random_uniform", run_random, check_float_output});
  t.push_back({"random_normal", run_random, check_float_output});
  t.push_back({"dropout", run_dropout, check_float});
}

}  // namespace dlrt::reference::detail
