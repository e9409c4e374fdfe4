// loop_random.cc: the cpu plugin's random ops, random_uniform, random_normal and dropout, on the
// shared Philox stream of plugins/common/philox.hpp (docs/ops.md): element i draws word i%4 of
// block i/4 of philox4x32_10((i/4, rng_offset), seed), so these kernels equal the reference
// bit for bit. Each Philox block is computed once and gives four elements; threads split the
// blocks. Values are formed in double and rounded once to the output dtype, as the reference
// does. The offset is read when the kernel executes (plugin_support.hpp): through the host's
// device pointer when it gives one (ABI 1.1), else args.rng_offset.
#include <cmath>

#include "loop_util.hpp"
#include "philox.hpp"

namespace dlrt::cpu::loops {
namespace {

uint64_t seed_of(const OpView& op) { return static_cast<uint64_t>(op.get_int("seed")); }

// Calls fn(i, block) for every block index covering elements [0, n): block i holds elements
// 4i .. 4i+3 (the last block may be partial).
template <typename Fn>
void for_each_block(int64_t n, int threads, uint64_t seed, uint64_t rng_offset, Fn&& fn) {
  const int64_t blocks = (n + 3) / 4;
  parallel_for(blocks, kGrainHeavy / 4, threads, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      philox::Block ctr;
      ctr.w[0] = static_cast<uint32_t>(static_cast<uint64_t>(i));
      ctr.w[1] = static_cast<uint32_t>(static_cast<uint64_t>(i) >> 32);
      ctr.w[2] = static_cast<uint32_t>(rng_offset);
      ctr.w[3] = static_cast<uint32_t>(rng_offset >> 32);
      fn(i, philox::philox4x32_10(ctr, static_cast<uint32_t>(seed),
                                  static_cast<uint32_t>(seed >> 32)));
    }
  });
}

void check_random(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.output(0));
  fill_cost(op, op.name() == "random_uniform" ? 10 : 40, cost);
}

// -> y: shape
//   uniform: y[i] = minval + (maxval - minval) * u(i)
//   normal:  y[i] = mean + stddev * z(i), z by Box-Muller over the pair (2p, 2p+1) of a block
class RandomKernel : public LoopKernel {
 public:
  RandomKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        dtype_(op.output(0).dtype),
        n_(op.output(0).numel),
        seed_(seed_of(op)),
        uniform_(op.name() == "random_uniform") {
    if (uniform_) a_ = op.get_float("minval"), b_ = op.get_float("maxval");
    else a_ = op.get_float("mean"), b_ = op.get_float("stddev");
  }

  void execute(const dlrt_kernel_args& args) override {
    const uint64_t offset = plugin::rng_offset_at_execution(args);
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      T* y = static_cast<T*>(args.outputs[0]);
      const int64_t n = n_;
      const double a = a_, b = b_;
      if (uniform_) {
        for_each_block(n, threads_, seed_, offset, [&](int64_t blk, const philox::Block& w) {
          const int64_t base = blk * 4, m = std::min<int64_t>(4, n - base);
          for (int64_t k = 0; k < m; ++k)
            y[base + k] =
                static_cast<T>(a + (b - a) * static_cast<double>(philox::to_uniform(w.w[k])));
        });
      } else {
        for_each_block(n, threads_, seed_, offset, [&](int64_t blk, const philox::Block& w) {
          const int64_t base = blk * 4, m = std::min<int64_t>(4, n - base);
          for (int64_t k = 0; k < m; k += 2) {
            // The same expressions as philox::normal, so the bits agree.
            const double u1 = 1.0 - static_cast<double>(philox::to_uniform(w.w[k]));
            const double u2 = static_cast<double>(philox::to_uniform(w.w[k + 1]));
            const double r = sqrt(-2.0 * log(u1));
            const double theta = 6.283185307179586476925286766559 * u2;
            y[base + k] = static_cast<T>(a + b * (r * cos(theta)));
            if (k + 1 < m) y[base + k + 1] = static_cast<T>(a + b * (r * sin(theta)));
          }
        });
      }
    });
  }

 private:
  int32_t dtype_;
  int64_t n_;
  uint64_t seed_;
  bool uniform_;
  double a_ = 0, b_ = 0;  // (minval, maxval) or (mean, stddev)
};

void check_dropout(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.input(0));
  fill_cost(op, 12, cost);
}

// x: any -> y, mask: shape of x; mask[i] = u(i) >= rate ? 1/(1-rate) : 0; y[i] = x[i] * mask[i]
// (x*mask in T is the double product rounded once: a product of two floats is exact in double).
// y or mask may alias x: x[i] is read first.
class DropoutKernel : public LoopKernel {
 public:
  DropoutKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        dtype_(op.input(0).dtype),
        n_(op.input(0).numel),
        seed_(seed_of(op)),
        rate_(op.get_float("rate")) {}

  void execute(const dlrt_kernel_args& args) override {
    const uint64_t offset = plugin::rng_offset_at_execution(args);
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      const T* x = static_cast<const T*>(args.inputs[0]);
      T* y = static_cast<T*>(args.outputs[0]);
      T* mask = static_cast<T*>(args.outputs[1]);
      const T keep = static_cast<T>(1.0 / (1.0 - rate_));
      const double rate = rate_;
      const int64_t n = n_;
      for_each_block(n, threads_, seed_, offset, [&](int64_t blk, const philox::Block& w) {
        const int64_t base = blk * 4, m = std::min<int64_t>(4, n - base);
        for (int64_t k = 0; k < m; ++k) {
          const T mk = static_cast<double>(philox::to_uniform(w.w[k])) >= rate ? keep : T(0);
          const T xk = x[base + k];
          mask[base + k] = mk;
          y[base + k] = static_cast<T>(static_cast<double>(xk) * static_cast<double>(mk));
        }
      });
    });
  }

 private:
  int32_t dtype_;
  int64_t n_;
  uint64_t seed_;
  double rate_;
};

}  // namespace

DLRT_CPU_KERNELS(t) {
  t.push_back({"random_uniform", check_random, make<RandomKernel>});
  t.push_back({"random_normal", check_random, make<RandomKernel>});
  t.push_back({"dropout", check_dropout, make<DropoutKernel>});
}

}  // namespace dlrt::cpu::loops
