// norm_test.cc: the batch normalization kernels on numbers worked out by hand (mean, biased
// variance for y, unbiased for the running variance, momentum on the old value, the count-1
// case), and batch_norm_grad against central finite differences of batch_norm_train's y.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "test_util.hpp"

namespace {

using dlrt::reference::testing::TestOp;
using D = std::vector<double>;

constexpr double kEps = 1e-5;

// x (2,2) = [[1,2],[3,6]]: mean (2,4), biased var (1,4), unbiased (2,8).
TEST(BatchNorm, TrainOnHandNumbers) {
  TestOp t("batch_norm_train");
  t.in(DLRT_F64, {2, 2});
  for (int i = 0; i < 4; ++i) t.in(DLRT_F64, {2});
  t.out(DLRT_F64, {2, 2});
  for (int i = 0; i < 4; ++i) t.out(DLRT_F64, {2});
  t.f("epsilon", kEps).f("momentum", 0.9).str("data_format", "NHWC");
  const auto out = t.run_f64({{1, 2, 3, 6}, {2, 0.5}, {1, -1}, {0, 10}, {1, 3}});
  const double s0 = 1 / std::sqrt(1 + kEps), s1 = 1 / std::sqrt(4 + kEps);
  const D y = {2 * -1 * s0 + 1, 0.5 * -2 * s1 - 1, 2 * 1 * s0 + 1, 0.5 * 2 * s1 - 1};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(out[0][i], y[i], 1e-12) << i;
  EXPECT_NEAR(out[1][0], 0.9 * 0 + 0.1 * 2, 1e-12);  // running_mean
  EXPECT_NEAR(out[1][1], 0.9 * 10 + 0.1 * 4, 1e-12);
  EXPECT_NEAR(out[2][0], 0.9 * 1 + 0.1 * 2, 1e-12);  // running_var: unbiased batch var
  EXPECT_NEAR(out[2][1], 0.9 * 3 + 0.1 * 8, 1e-12);
  EXPECT_NEAR(out[3][0], 2, 1e-12);  // saved_mean
  EXPECT_NEAR(out[3][1], 4, 1e-12);
  EXPECT_NEAR(out[4][0], s0, 1e-12);  // saved_inv_std
  EXPECT_NEAR(out[4][1], s1, 1e-12);
}

// NCHW (1,2,1,2): channel 0 is {1,3}, channel 1 is {2,6}; the inference form with given stats.
TEST(BatchNorm, InferenceNchwUsesTheGivenStatistics) {
  TestOp t("batch_norm");
  t.in(DLRT_F64, {1, 2, 1, 2});
  for (int i = 0; i < 4; ++i) t.in(DLRT_F64, {2});
  t.out(DLRT_F64, {1, 2, 1, 2});
  t.f("epsilon", 1e-3).str("data_format", "NCHW");
  const auto out = t.run_f64({{1, 3, 2, 6}, {1, 2}, {0, 1}, {1, 2}, {4, 0.25}});
  const double r0 = 1 / std::sqrt(4 + 1e-3), r1 = 1 / std::sqrt(0.25 + 1e-3);
  const D y = {0, 2 * r0, 2 * 0 * r1 + 1, 2 * 4 * r1 + 1};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(out[0][i], y[i], 1e-12) << i;
}

// One value per channel: variance 0, y = bias, finite inverse deviation, running_var scaled.
TEST(BatchNorm, OneValuePerChannelStaysFinite) {
  TestOp t("batch_norm_train");
  t.in(DLRT_F64, {1, 1, 1, 2});
  for (int i = 0; i < 4; ++i) t.in(DLRT_F64, {2});
  t.out(DLRT_F64, {1, 1, 1, 2});
  for (int i = 0; i < 4; ++i) t.out(DLRT_F64, {2});
  t.f("epsilon", kEps).f("momentum", 0.9).str("data_format", "NHWC");
  const auto out = t.run_f64({{5, -7}, {3, 4}, {0.5, -0.5}, {1, 2}, {2, 4}});
  EXPECT_EQ(out[0], (D{0.5, -0.5}));
  EXPECT_NEAR(out[1][0], 0.9 * 1 + 0.1 * 5, 1e-12);
  EXPECT_NEAR(out[1][1], 0.9 * 2 + 0.1 * -7, 1e-12);
  EXPECT_NEAR(out[2][0], 0.9 * 2, 1e-12);
  EXPECT_NEAR(out[2][1], 0.9 * 4, 1e-12);
  EXPECT_NEAR(out[4][0], 1 / std::sqrt(kEps), 1e-9);
}

// L = <batch_norm_train(x, scale, bias).y, r>: batch_norm_grad(r, x, scale, saved stats) must
// be dL/dx, dL/dscale, dL/dbias (central differences, f64).
TEST(BatchNorm, GradMatchesFiniteDifferencesOfTheTrainingForm) {
  struct Case {
    std::vector<int64_t> x;
    const char* format;
    int64_t c;
  };
  for (const Case& k :
       {Case{{2, 3, 2, 3}, "NHWC", 3}, Case{{2, 3, 2, 2}, "NCHW", 3}, Case{{5, 4}, "NHWC", 4}}) {
    SCOPED_TRACE(k.format);
    size_t n = 1;
    for (int64_t d : k.x) n *= size_t(d);
    const size_t c = size_t(k.c);
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-1, 1);
    auto random = [&](size_t m) {
      D v(m);
      for (double& e : v) e = u(rng);
      return v;
    };
    std::vector<D> in = {random(n), random(c), random(c), random(c), random(c)};
    for (double& s : in[1]) s += 2;  // scale away from 0
    const D r = random(n);
    auto forward = [&](const std::vector<D>& v) {
      TestOp t("batch_norm_train");
      t.in(DLRT_F64, k.x);
      for (int i = 0; i < 4; ++i) t.in(DLRT_F64, {k.c});
      t.out(DLRT_F64, k.x);
      for (int i = 0; i < 4; ++i) t.out(DLRT_F64, {k.c});
      t.f("epsilon", 1e-3).f("momentum", 0.9).str("data_format", k.format);
      return t.run_f64(v);
    };
    const auto fwd = forward(in);
    TestOp g("batch_norm_grad");
    g.in(DLRT_F64, k.x).in(DLRT_F64, k.x);
    for (int i = 0; i < 3; ++i) g.in(DLRT_F64, {k.c});
    g.out(DLRT_F64, k.x).out(DLRT_F64, {k.c}).out(DLRT_F64, {k.c});
    g.f("epsilon", 1e-3).str("data_format", k.format);
    const auto grads = g.run_f64({r, in[0], in[1], fwd[3], fwd[4]});
    for (size_t which = 0; which < 3; ++which) {
      for (size_t i = 0; i < in[which].size(); ++i) {
        const double h = 1e-6, x0 = in[which][i];
        auto loss = [&] {
          const D y = forward(in)[0];
          double s = 0;
          for (size_t e = 0; e < n; ++e) s += y[e] * r[e];
          return s;
        };
        in[which][i] = x0 + h;
        const double up = loss();
        in[which][i] = x0 - h;
        const double down = loss();
        in[which][i] = x0;
        EXPECT_NEAR(grads[which][i], (up - down) / (2 * h), 1e-6) << which << "[" << i << "]";
      }
    }
  }
}

}  // namespace
