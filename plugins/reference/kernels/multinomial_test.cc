// multinomial_test.cc: the reference multinomial (the oracle of every device): reproducible
// for equal (seed, rng_offset) and different otherwise, each draw the inverse softmax CDF of
// its Philox uniform, empirical frequencies that match softmax(logits) within a few standard
// errors (and provably miss a slightly different distribution, so the test has power),
// temperature by scaling the logits, -inf masking, and the -1 rows.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "philox.hpp"
#include "test_util.hpp"

namespace {

using dlrt::reference::testing::TestOp;
using Ids = std::vector<int64_t>;

// ids (B, S) of multinomial(logits (B, K)).
Ids sample(const std::vector<float>& logits, int64_t rows, int64_t samples, int64_t seed,
           uint64_t rng_offset = 0) {
  const int64_t k = static_cast<int64_t>(logits.size()) / rows;
  TestOp t("multinomial");
  t.in(DLRT_F32, {rows, k}).out(DLRT_I64, {rows, samples});
  t.i("num_samples", samples).i("seed", seed);
  Ids ids(static_cast<size_t>(rows * samples), -7);
  t.run_raw({logits.data()}, {ids.data()}, rng_offset);
  return ids;
}

std::vector<double> softmax(const std::vector<float>& x, double temperature = 1.0) {
  double m = -INFINITY, z = 0;
  for (float v : x) m = std::max(m, double(v) / temperature);
  std::vector<double> p;
  for (float v : x) p.push_back(std::exp(double(v) / temperature - m));
  for (double v : p) z += v;
  for (double& v : p) v /= z;
  return p;
}

// The largest |z| over classes of counts of `ids` (values in [0, K)) against p: z_k =
// (n_k - N p_k) / sqrt(N p_k (1 - p_k)), the binomial standard error of each count.
double max_z(const Ids& ids, const std::vector<double>& p) {
  std::vector<double> n(p.size(), 0.0);
  for (int64_t id : ids) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, static_cast<int64_t>(p.size()));
    if (id >= 0 && id < static_cast<int64_t>(p.size())) n[static_cast<size_t>(id)] += 1;
  }
  const double total = static_cast<double>(ids.size());
  double worst = 0;
  for (size_t k = 0; k < p.size(); ++k) {
    const double se = std::sqrt(total * p[k] * (1 - p[k]));
    worst = std::max(worst, se > 0 ? std::abs(n[k] - total * p[k]) / se
                                   : (n[k] == total * p[k] ? 0.0 : INFINITY));
  }
  return worst;
}

const std::vector<float> kRow = {1.0f, -0.5f, 2.0f, 0.0f, -3.0f, 0.7f, 1.9f};

TEST(Multinomial, ReproducibleForASeedAndOffsetDifferentOtherwise) {
  std::vector<float> logits;
  for (int r = 0; r < 4; ++r) logits.insert(logits.end(), kRow.begin(), kRow.end());
  const Ids a = sample(logits, 4, 64, 42, 3);
  EXPECT_EQ(a, sample(logits, 4, 64, 42, 3));
  const Ids other_seed = sample(logits, 4, 64, 43, 3);
  const Ids other_offset = sample(logits, 4, 64, 42, 4);
  int same_seed = 0, same_offset = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    same_seed += a[i] == other_seed[i];
    same_offset += a[i] == other_offset[i];
  }
  // Independent draws agree with probability sum p_k^2 ~ 0.27 here: ~70 of 256, not 256.
  EXPECT_LT(same_seed, 120);
  EXPECT_LT(same_offset, 120);
  // Rows draw independent counters: equal rows do not repeat each other's ids.
  EXPECT_NE(Ids(a.begin(), a.begin() + 64), Ids(a.begin() + 64, a.begin() + 128));
}

TEST(Multinomial, EachDrawIsTheInverseCdfOfItsPhiloxUniform) {
  const int64_t samples = 500;
  const Ids ids = sample(kRow, 1, samples, 9, 11);
  const std::vector<double> p = softmax(kRow);
  for (int64_t s = 0; s < samples; ++s) {
    const double u = double(dlrt::philox::uniform(9, 11, uint64_t(s)));
    const int64_t k = ids[size_t(s)];
    ASSERT_GE(k, 0);
    double below = 0;
    for (int64_t j = 0; j < k; ++j) below += p[size_t(j)];
    // u lies in [P(id < k), P(id <= k)), up to the rounding of two different sums.
    EXPECT_GE(u, below - 1e-12) << s;
    EXPECT_LT(u, below + p[size_t(k)] + 1e-12) << s;
  }
}

TEST(Multinomial, FrequenciesMatchSoftmaxWithinStandardErrors) {
  // 3 rows x 40000 draws. Under a correct sampler each z is ~N(0,1): |z| < 4.5 for all 21
  // classes fails by chance with probability ~1e-4 (the seed is fixed, so the run is
  // deterministic; a wrong CDF, a missing max subtraction or an off-by-one fails it).
  const std::vector<float> row2 = {-4.0f, 3.0f, 0.5f, 0.5f, -1.0f, 2.5f, 0.0f};
  const std::vector<float> row3 = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  std::vector<float> logits = kRow;
  logits.insert(logits.end(), row2.begin(), row2.end());
  logits.insert(logits.end(), row3.begin(), row3.end());
  const int64_t samples = 40000;
  const Ids ids = sample(logits, 3, samples, 2026, 5);
  const std::vector<float>* rows[] = {&kRow, &row2, &row3};
  for (int r = 0; r < 3; ++r) {
    const Ids got(ids.begin() + r * samples, ids.begin() + (r + 1) * samples);
    EXPECT_LT(max_z(got, softmax(*rows[r])), 4.5) << "row " << r;
    // Power: the same counts against a slightly sharper softmax (temperature 0.8; |z| ~18
    // and ~25 expected) are far out.
    if (r < 2) EXPECT_GT(max_z(got, softmax(*rows[r], 0.8)), 8.0) << "row " << r;
  }
}

TEST(Multinomial, TemperatureScalesTheLogitsBefore) {
  const int64_t samples = 40000;
  for (double t : {0.5, 2.0}) {
    std::vector<float> scaled;
    for (float v : kRow) scaled.push_back(static_cast<float>(v / t));
    const Ids ids = sample(scaled, 1, samples, 77, 0);
    EXPECT_LT(max_z(ids, softmax(kRow, t)), 4.5) << "temperature " << t;
    EXPECT_GT(max_z(ids, softmax(kRow, 1.0)), 8.0) << "temperature " << t;
  }
}

TEST(Multinomial, MaskedIdsAreNeverDrawn) {
  // All but one id -inf: always that one, for every seed and offset.
  std::vector<float> one(256, -INFINITY);
  one[137] = -3.0f;
  for (int64_t seed : {0, 1, -1})
    for (uint64_t offset : {0u, 1u, 99u})
      for (int64_t id : sample(one, 1, 200, seed, offset)) ASSERT_EQ(id, 137);
  // Top-k style masking: only the unmasked ids, in their renormalised proportions.
  std::vector<float> masked = kRow;
  masked[1] = masked[4] = masked[6] = -INFINITY;
  const Ids ids = sample(masked, 1, 20000, 5, 0);
  for (int64_t id : ids) ASSERT_TRUE(id == 0 || id == 2 || id == 3 || id == 5) << id;
  EXPECT_LT(max_z(ids, softmax(masked)), 4.5);
}

TEST(Multinomial, HugeLogitsAndASingleClass) {
  // Max subtraction: 1e30 logits do not overflow; the two maxima split the draws.
  const Ids big = sample({1e30f, -1e30f, 1e30f}, 1, 4000, 3, 0);
  EXPECT_LT(max_z(big, {0.5, 0.0, 0.5}), 4.5);
  for (int64_t id : sample({5.0f, -2.0f}, 2, 10, 1, 0)) EXPECT_EQ(id, 0);  // K = 1
}

TEST(Multinomial, RowsWithoutADistributionGiveMinusOne) {
  const float inf = INFINITY, nan = NAN;
  // rows: valid | all -inf | NaN | +inf | valid
  const std::vector<float> logits = {0.f, 1.f,  2.f,  -inf, -inf, -inf, 0.f, nan,
                                     1.f, 0.f,  inf,  1.f,  2.f,  1.f,  0.f};
  const Ids ids = sample(logits, 5, 3, 8, 2);
  for (int r = 1; r <= 3; ++r)
    for (int s = 0; s < 3; ++s) EXPECT_EQ(ids[size_t(r * 3 + s)], -1) << "row " << r;
  for (int r : {0, 4})
    for (int s = 0; s < 3; ++s) {
      EXPECT_GE(ids[size_t(r * 3 + s)], 0);
      EXPECT_LT(ids[size_t(r * 3 + s)], 3);
    }
}

}  // namespace
