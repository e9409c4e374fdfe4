// core/ops/samples_sampling.cc: samples of multinomial (infer_sampling.cc). Compared exactly:
// every device draws the same Philox uniforms and walks the same double CDF.
//
// Rows of a few classes and of a byte vocabulary (K = 256) and beyond, one and several draws
// per row, a wide logit range (most mass on a few ids, many weights underflowing), K = 1, the
// seed's 64 bits, and rows without a distribution (all -inf, NaN: every id -1).
#include <cmath>

#include "samples.hpp"

namespace dlrt::ops::samples {

std::vector<Sample> multinomial(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      {{f32_in("logits", {4, 10}, u)}, {}},
      {{f32_in("logits", {3, 256}, u)}, {{"num_samples", 5}, {"seed", 42}}, true,
       "byte vocabulary, 5 draws a row"},
      {{f32_in("logits", {7, 33}, uniform(-60, 60))}, {{"num_samples", 3}, {"seed", 7}}, true,
       "wide range: a few ids hold the mass, exp underflows to 0"},
      {{f32_in("logits", {2, 5000}, u)}, {{"num_samples", 4}, {"seed", -1}}, true,
       "a long row, all 64 seed bits set"},
      {{f32_in("logits", {5, 1}, u)}, {{"num_samples", 2}}, true, "K = 1: always id 0"},
      {{f32_in("logits", {3, 8}, constant(-INFINITY))}, {{"num_samples", 2}}, true,
       "all -inf rows: ids -1"},
      {{f32_in("logits", {2, 6}, constant(NAN))}, {}, true, "NaN rows: ids -1"},
  };
}

}  // namespace dlrt::ops::samples
