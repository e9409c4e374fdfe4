// portable_math_test.cc: portable_math.hpp against the C library (accuracy) and against bit
// patterns recorded on Linux, which the Windows build must reproduce under Wine (the point of
// the functions: the same bits on every platform; mingw's own expf/log/pow differ from glibc's).
#include "portable_math.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace {

namespace pm = dlrt::plugin::portable;

// Distance in units in the last place between two finite doubles of the same sign.
int64_t ulps(double a, double b) {
  int64_t x, y;
  std::memcpy(&x, &a, 8);
  std::memcpy(&y, &b, 8);
  return x > y ? x - y : y - x;
}

// FNV-1a over the bit patterns of f(x) for x on a grid: one number per function and range.
template <typename F>
uint64_t sweep_hash(double lo, double hi, double step, F f) {
  uint64_t h = 1469598103934665603ull;
  for (double x = lo; x <= hi; x += step) {
    const double y = f(x);
    uint64_t bits;
    std::memcpy(&bits, &y, 8);
    h = (h ^ bits) * 1099511628211ull;
  }
  return h;
}

TEST(PortableMath, ExpIsWithinOneUlpOfTheCLibrary) {
  int64_t worst = 0;
  for (double x = -745.0; x <= 709.7; x += 0.0123457)
    worst = std::max(worst, ulps(pm::exp_f64(x), std::exp(x)));
  EXPECT_LE(worst, 1);
  EXPECT_EQ(pm::exp_f64(0.0), 1.0);
  EXPECT_LE(ulps(pm::exp_f64(1.0), 2.718281828459045), 1);
}

TEST(PortableMath, LogAndLog1pAreWithinTwoUlpOfTheCLibrary) {
  int64_t worst_log = 0, worst_log1p = 0;
  for (double x = 1e-300; x < 1e300; x *= 1.0123457)
    worst_log = std::max(worst_log, ulps(pm::log_f64(x), std::log(x)));
  for (double x = 0.5; x < 2.0; x += 1.234e-5)
    worst_log = std::max(worst_log, ulps(pm::log_f64(x), std::log(x)));
  for (double x = -0.99; x < 10.0; x += 1.234e-4)
    worst_log1p = std::max(worst_log1p, ulps(pm::log1p_f64(x), std::log1p(x)));
  for (double x = 1e-20; x < 1e-3; x *= 1.01)
    worst_log1p = std::max(worst_log1p, ulps(pm::log1p_f64(x), std::log1p(x)));
  EXPECT_LE(worst_log, 1);
  EXPECT_LE(worst_log1p, 2);
  EXPECT_EQ(pm::log_f64(1.0), 0.0);
  EXPECT_EQ(pm::log_f64(4.9406564584124654e-324), std::log(4.9406564584124654e-324));  // subnormal
}

TEST(PortableMath, FloatFormsRoundTheDoubleResultOnce) {
  for (float x = -103.0f; x < 88.0f; x += 0.01f) {
    const float got = pm::exp_f32(x), want = std::exp(x);
    EXPECT_LE(std::fabs(got - want), std::fabs(want) * 1.2e-7f) << x;
  }
  EXPECT_EQ(pm::exp_f32(89.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(pm::exp_f32(-104.0f), 0.0f);
  EXPECT_GT(pm::exp_f32(-100.0f), 0.0f);  // a float subnormal, not flushed
}

TEST(PortableMath, SpecialValuesFollowC) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(pm::exp_f64(-inf), 0.0);
  EXPECT_EQ(pm::exp_f64(inf), inf);
  EXPECT_EQ(pm::exp_f64(710.0), inf);
  EXPECT_GT(pm::exp_f64(709.78), 1e308);
  EXPECT_EQ(pm::exp_f64(-740.0), std::exp(-740.0));  // subnormal result
  EXPECT_TRUE(std::isnan(pm::exp_f64(std::nan(""))));
  EXPECT_EQ(pm::log_f64(0.0), -inf);
  EXPECT_EQ(pm::log_f64(inf), inf);
  EXPECT_TRUE(std::isnan(pm::log_f64(-1.0)));
  EXPECT_TRUE(std::isnan(pm::log_f64(std::nan(""))));
  EXPECT_EQ(pm::log1p_f64(-1.0), -inf);
  EXPECT_EQ(pm::log1p_f64(1e-300), 1e-300);
}

TEST(PortableMath, PowIntIsExactForSmallPowersAndCloseForLargeOnes) {
  EXPECT_EQ(pm::pow_int(0.9, 0), 1.0);
  EXPECT_EQ(pm::pow_int(0.9, 1), 0.9);
  EXPECT_EQ(pm::pow_int(0.5, 3), 0.125);
  EXPECT_EQ(pm::pow_int(2.0, 40), 1099511627776.0);
  // Squaring doubles a relative error, so base^n is within ~n ulp (relative n * 2^-53).
  for (uint64_t n : {2u, 3u, 10u, 1000u, 100000u})
    EXPECT_NEAR(pm::pow_int(0.999, n) / std::pow(0.999, double(n)), 1.0, 2.3e-16 * double(n)) << n;
}

// The bits themselves, recorded from the Linux build (glibc, GCC 12, x86-64) on 2026-12-07. The
// Windows build runs this test under Wine (windows.dlrt_portable_math_test); a platform whose
// build of these functions differs fails here, before any training drifts.
TEST(PortableMath, BitsAreTheSameOnEveryPlatform) {
  EXPECT_EQ(sweep_hash(-745.0, 709.7, 0.0123457, pm::exp_f64), 0x0ad81e19324be5e8ull);
  EXPECT_EQ(sweep_hash(1e-3, 1e3, 0.0123457, pm::log_f64), 0x8d8d822dd3113ae2ull);
  EXPECT_EQ(sweep_hash(-0.99, 10.0, 1.234e-4, pm::log1p_f64), 0x0c47c8aeb4231d9bull);
  EXPECT_EQ(
      sweep_hash(-104.0, 89.0, 0.00731, [](double x) { return double(pm::exp_f32(float(x))); }),
      0x9776753d94a66f01ull);
  EXPECT_EQ(sweep_hash(1.0, 5000.0, 1.0, [](double n) { return pm::pow_int(0.999, uint64_t(n)); }),
            0x2ea16cce47e18687ull);
}

}  // namespace
