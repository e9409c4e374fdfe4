// random.cc: the random ops (random_uniform, random_normal, dropout) on the shared Philox
// stream of plugins/common/philox.hpp: element i of a tensor draws from
// (seed, rng_offset, i), so every backend produces the same bits. Values are formed in
// double and rounded once to the output dtype.
#include "kernel_util.hpp"
#include "philox.hpp"

namespace dlrt::reference::detail {
namespace {

uint64_t seed_of(const OpView& op) { return static_cast<uint64_t>(op.get_int("seed")); }

void check_random(const OpView& op) {
  expect_arity(op, 0, 1);
  const TensorView& y = op.output(0);
  if (op.get_dtype("dtype") != y.dtype)
    op.invalid(std::string("dtype attribute is ") + plugin::dtype_name(op.get_dtype("dtype")) +
               ", y is " + plugin::dtype_name(y.dtype));
  expect_float(op, y, "y");
  expect_dims(op, y, op.get_ints("shape"), "y (shape)");
  seed_of(op);
  if (op.name() == "random_uniform") {
    if (!(op.get_float("minval") <= op.get_float("maxval")))
      op.invalid("minval is greater than maxval");
  } else if (!(op.get_float("stddev") >= 0.0)) {
    op.invalid("stddev is negative");
  }
}

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

void check_dropout(const OpView& op) {
  expect_arity(op, 1, 2);
  const TensorView &x = op.input(0), &y = op.output(0), &mask = op.output(1);
  expect_float(op, x, "x");
  expect_same_dtype(op, x, "x", y, "y");
  expect_same_dtype(op, x, "x", mask, "mask");
  expect_dims(op, y, x.dims, "y");
  expect_dims(op, mask, x.dims, "mask");
  const double rate = op.get_float("rate");
  if (!(rate >= 0.0 && rate < 1.0))
    op.invalid("rate " + std::to_string(rate) + " is outside [0, 1)");
  seed_of(op);
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

void add_random_kernels(KernelTable& t) {
  t.push_back({"random_uniform", run_random, check_random});
  t.push_back({"random_normal", run_random, check_random});
  t.push_back({"dropout", run_dropout, check_dropout});
}

}  // namespace dlrt::reference::detail
