// loop_multinomial.cc: the cpu plugin's multinomial (core/ops/infer_sampling.cc), parallel over
// rows. Each row's max and normaliser Z = sum_j exp(x_j - max) are computed once, in double
// and in id order, then every draw s walks the running sum to the first id past u*Z, u the
// Philox uniform of element b*S + s: the reference's expressions (plugins/reference/kernels/
// multinomial.cc), so the ids are the same bits for any thread count. A row with a NaN, a
// +inf or no finite logit gives -1 for each draw. The offset is read at execution.
#include <cmath>

#include "loop_util.hpp"
#include "philox.hpp"
#include "portable_math.hpp"

namespace dlrt::cpu::loops {
namespace {

// exp, log: the same bits on every platform (portable_math.hpp).
namespace portable = plugin::portable;

void check_multinomial(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  // f32 logits, i64 ids: the only types the schema admits. ~2 exp per logit per draw.
  fill_cost(op, 40.0 * static_cast<double>(op.get_int("num_samples")), cost);
}

// logits (B, K) f32 -> ids (B, S) i64
class MultinomialKernel : public LoopKernel {
 public:
  MultinomialKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        rows_(op.input(0).dims[0]),
        k_(op.input(0).dims[1]),
        samples_(op.get_int("num_samples")),
        seed_(static_cast<uint64_t>(op.get_int("seed"))) {}

  void execute(const dlrt_kernel_args& args) override {
    const uint64_t offset = plugin::rng_offset_at_execution(args);
    const float* logits = static_cast<const float*>(args.inputs[0]);
    int64_t* ids = static_cast<int64_t*>(args.outputs[0]);
    const int64_t k = k_, samples = samples_;
    const uint64_t seed = seed_;
    const int64_t grain = std::max<int64_t>(1, kGrainHeavy / (k * (samples + 1)));
    parallel_for(rows_, grain, threads_, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const float* x = logits + r * k;
        int64_t* out = ids + r * samples;
        float m = -INFINITY;
        bool valid = true;
        for (int64_t j = 0; j < k; ++j) {
          if (std::isnan(x[j]) || x[j] == INFINITY) valid = false;
          if (x[j] > m) m = x[j];
        }
        if (!valid || m == -INFINITY) {
          for (int64_t s = 0; s < samples; ++s) out[s] = -1;
          continue;
        }
        double z = 0;
        for (int64_t j = 0; j < k; ++j) z += portable::exp(double(x[j]) - double(m));
        for (int64_t s = 0; s < samples; ++s) {
          const double u = double(philox::uniform(seed, offset, uint64_t(r * samples + s)));
          const double target = u * z;
          double c = 0;
          int64_t pick = -1;
          for (int64_t j = 0; j < k && pick < 0; ++j) {
            c += portable::exp(double(x[j]) - double(m));
            if (target < c) pick = j;
          }
          out[s] = pick;
        }
      }
    });
  }

 private:
  int64_t rows_, k_, samples_;
  uint64_t seed_;
};

}  // namespace

DLRT_CPU_KERNELS(t) { t.push_back({"multinomial", check_multinomial, make<MultinomialKernel>}); }

}  // namespace dlrt::cpu::loops
