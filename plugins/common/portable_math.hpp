// portable_math.hpp: exp, log, log1p and integer powers that give the same bits on every
// platform the plugins are built for, for the loop kernels whose results feed training.
//
// Why: the C library's exp, log and pow are not the same functions everywhere. glibc's and
// mingw-w64's differ in the last place for many arguments (measured: expf over a sweep of
// [-30, 0], log over [1, 10], and pow(0.9, 4) = 0x3fe4fec56d5cfaad on glibc, ...aae on mingw).
// One such ulp in Adam's bias correction or a softmax is enough: training is chaotic, and the
// same Fashion-MNIST epoch on the Linux and the Windows build of one source ended 2e-3 apart in
// loss although every other kernel matched bit for bit (docs/windows.md). These functions use
// only IEEE-754 operations that are exactly rounded by definition (+, -, *, /, conversions) on
// double, so two builds of them by the same compiler and flags agree wherever they run. The price:
// measured on a Zen 3 (g++ 12 -O3, one call after another), exp_f32 took ~2x and exp_f64 ~4x
// glibc's expf (16-19 ns against 5-9); the loops that call them (softmax cross-entropy, the
// elementwise exp/log/softplus ops, attention's f64 path, multinomial) are not bound by them in
// the models trained here, and attention's f32 path keeps its own SIMD exp.
//
// Accuracy (portable_math_test.cc checks it against glibc's, itself within 1 ulp): exp_f64 and
// log_f64 within 1 ulp of glibc's, log1p_f64 within 2; the float forms compute in double and
// round once, within 1 ulp of float. Special values follow C: exp(-inf) = 0, exp(inf) = inf, log(0)
// = -inf, log(x < 0) = NaN, NaN in gives NaN out; overflow gives inf, underflow 0 or subnormals.
//
// Not here: sin, cos, tan, erf, the inverse and hyperbolic functions and general pow still come
// from the C library (loop_elementwise.cc), as they do in the reference plugin.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

namespace dlrt::plugin::portable {

namespace detail {

// 2^k as a double, for k in [-1022, 1023] (a normal number: exact).
inline double pow2(int k) {
  const uint64_t bits = static_cast<uint64_t>(k + 1023) << 52;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// ln 2 split so that k * kLn2Hi is exact for |k| < 2^11 (kLn2Hi has 32 significant bits):
// fdlibm's constants.
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kLog2e = 1.44269504088896338700e+00;

// Round half away from zero to an integer-valued double, without the rounding mode (|x| < 2^52).
inline double round_int(double x) {
  return x >= 0 ? static_cast<double>(static_cast<int64_t>(x + 0.5))
                : -static_cast<double>(static_cast<int64_t>(-x + 0.5));
}

}  // namespace detail

// e^x in double.
inline double exp_f64(double x) {
  if (x != x) return x;  // NaN
  if (x > 709.782712893384) return std::numeric_limits<double>::infinity();
  if (x < -745.1332191019412) return 0.0;  // below half the least subnormal
  // x = k ln2 + r, |r| <= ln2 / 2 (plus rounding): e^x = 2^k e^r.
  const double k = detail::round_int(x * detail::kLog2e);
  const double r = (x - k * detail::kLn2Hi) - k * detail::kLn2Lo;
  // e^r by its Taylor series to r^13 (the next term, r^14/14! < 4e-18 for |r| <= 0.347, is
  // below half an ulp of 1), in Horner form with the coefficients 1/n! as constants (products
  // only: a division per term made the chain ~10x slower than the C library's exp).
  constexpr double kInvFactorial[] = {1.6059043836821613e-10, 2.08767569878681e-09, 2.505210838544172e-08, 2.755731922398589e-07, 2.7557319223985893e-06, 2.48015873015873e-05, 0.0001984126984126984, 0.001388888888888889, 0.008333333333333333, 0.041666666666666664, 0.16666666666666666, 0.5};  // 1/13! .. 1/2!
  double p = kInvFactorial[0];
  for (int i = 1; i < 12; ++i) p = p * r + kInvFactorial[i];
  p = (p * r + 1.0) * r + 1.0;
  // Scale by 2^k in two exact steps when 2^k alone is not a normal double (k = 1024 just below
  // the overflow bound, k < -1022 for subnormal results, rounded once by the last product).
  const int ki = static_cast<int>(k);
  if (ki > 1023) return p * detail::pow2(ki - 1) * 2.0;
  if (ki < -1022) return p * detail::pow2(ki + 1000) * detail::pow2(-1000);
  return p * detail::pow2(ki);
}

// ln x in double.
inline double log_f64(double x) {
  if (x != x) return x;
  if (x < 0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return -std::numeric_limits<double>::infinity();
  if (x == std::numeric_limits<double>::infinity()) return x;
  int e = 0;
  if (x < std::numeric_limits<double>::min()) {  // subnormal: scale into the normal range
    x *= 18014398509481984.0;                    // 2^54
    e = -54;
  }
  // x = 2^e m, m in [sqrt(1/2), sqrt(2)): ln x = e ln2 + ln m.
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  e += static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  bits = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52);  // m in [1, 2)
  double m;
  std::memcpy(&m, &bits, sizeof m);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    e += 1;
  }
  // ln m = 2 atanh(s), s = (m - 1) / (m + 1) = f / (2 + f), |s| <= 0.1716:
  //   2 atanh(s) = 2s + s R,  R = 2z/3 + 2z^2/5 + ... + 2z^12/25,  z = s^2
  // (the next term is below 1e-18 relative), and 2s = f - s f, so ln m = f - s (f - R): f, the
  // leading term, is exact (m - 1, Sterbenz), and only the small correction is rounded.
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  double r = 2.0 / 25;
  for (int n = 11; n >= 1; --n) r = 2.0 / (2 * n + 1) + z * r;
  r *= z;
  const double ln_m = f - s * (f - r);
  const double de = static_cast<double>(e);
  return de * detail::kLn2Hi + (de * detail::kLn2Lo + ln_m);
}

// ln(1 + y) in double, accurate for small y too: with u = 1 + y rounded, ln u * y / (u - 1)
// corrects the rounding of u (Goldberg, "What every computer scientist should know about
// floating-point arithmetic", theorem 4).
inline double log1p_f64(double y) {
  const double u = 1.0 + y;
  if (u == 1.0) return y;
  if (u == std::numeric_limits<double>::infinity() || y != y) return log_f64(u);
  return log_f64(u) * (y / (u - 1.0));
}

// e^x for a float, in double, rounded once: the reduction of exp_f64 but the series only to
// r^7 (its remainder, r^8/8! < 6e-9 relative, is a tenth of a float ulp), half exp_f64's chain
// of products for the loops' float exp.
inline float exp_f32(float xf) {
  const double x = xf;
  if (x != x) return xf;
  if (x > 88.8) return std::numeric_limits<float>::infinity();
  if (x < -104.0) return 0.0f;
  const double k = detail::round_int(x * detail::kLog2e);
  const double r = (x - k * detail::kLn2Hi) - k * detail::kLn2Lo;
  constexpr double kInvFactorial[] = {0.0001984126984126984, 0.001388888888888889, 0.008333333333333333, 0.041666666666666664, 0.16666666666666666, 0.5};  // 1/7! .. 1/2!
  double p = kInvFactorial[0];
  for (int i = 1; i < 6; ++i) p = p * r + kInvFactorial[i];
  p = (p * r + 1.0) * r + 1.0;
  return static_cast<float>(p * detail::pow2(static_cast<int>(k)));  // |k| <= 151: normal 2^k
}

// The other float forms: computed in double, rounded once.
inline float log_f32(float x) { return static_cast<float>(log_f64(x)); }
inline float log1p_f32(float x) { return static_cast<float>(log1p_f64(x)); }

// Overloads for the loops' templates over float and double.
inline float exp(float x) { return exp_f32(x); }
inline double exp(double x) { return exp_f64(x); }
inline float log(float x) { return log_f32(x); }
inline double log(double x) { return log_f64(x); }
inline float log1p(float x) { return log1p_f32(x); }
inline double log1p(double x) { return log1p_f64(x); }

// base^n for a whole n >= 0, by squaring: only products, so the same bits everywhere. Squaring
// doubles a relative error, so the result is within ~n ulp (relative n * 2^-53: 1e-10 at
// n = 10^6), far below what Adam's bias corrections 1 - beta^t, its use, pass on to f32.
inline double pow_int(double base, uint64_t n) {
  double result = 1.0;
  while (n != 0) {
    if (n & 1) result *= base;
    base *= base;
    n >>= 1;
  }
  return result;
}

}  // namespace dlrt::plugin::portable
