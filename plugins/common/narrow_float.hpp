// narrow_float.hpp: f16 (IEEE binary16) and bf16 (bfloat16) to and from double and float,
// bit-exact, for every plugin that stores the 16-bit floats (the cpu plugin's cast and its
// converting kernels, the reference's widen-compute-round adapter, the conformance suite's
// host tensors). Narrowing rounds to nearest, ties to even, in one step from double
// (going through float first would round twice); overflow gives inf, NaN stays NaN (quiet,
// sign kept), values below the smallest normal become subnormals. Widening is exact.
//
// Both formats are "sign, E exponent bits, M mantissa bits" with bias 2^(E-1) - 1 and fit in
// 16 bits: f16 is E = 5, M = 10; bf16 is E = 8, M = 7.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <dlrt/types.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace dlrt::plugin {

template <int M>
struct NarrowFormat {
  static constexpr int kMant = M;
  static constexpr int kExpBits = 15 - M;
  static constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  static constexpr int kMinExp = 1 - kBias;  // of the smallest normal
  static constexpr uint16_t kExpAllOnes = static_cast<uint16_t>(((1 << kExpBits) - 1) << M);
};
using F16Format = NarrowFormat<10>;
using BF16Format = NarrowFormat<7>;

template <typename F>
uint16_t narrow_from_double(double x) {
  constexpr int M = F::kMant;
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return sign | F::kExpAllOnes | static_cast<uint16_t>(1u << (M - 1));
  const double a = std::fabs(x);
  // The largest finite value plus half its ulp rounds (tie to even: the max's mantissa is odd)
  // to inf.
  const double overflow = std::ldexp(2.0 - std::ldexp(1.0, -(M + 1)), F::kBias);
  if (a >= overflow) return sign | F::kExpAllOnes;
  if (a < std::ldexp(1.0, F::kMinExp)) {
    // Subnormal (or zero): a = m * 2^(kMinExp - M); scaling by a power of two is exact, and
    // nearbyint rounds ties to even. m = 2^M is the smallest normal's encoding, as wanted.
    const double m = std::nearbyint(std::ldexp(a, M - F::kMinExp));
    return sign | static_cast<uint16_t>(m);
  }
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
  int exp = e - 1;    // a = 1.m * 2^exp
  double m = std::nearbyint((std::ldexp(a, -exp) - 1.0) * std::ldexp(1.0, M));
  if (m == std::ldexp(1.0, M)) {  // rounded up to the next power of two
    m = 0;
    ++exp;
  }
  return sign | static_cast<uint16_t>((exp + F::kBias) << M) | static_cast<uint16_t>(m);
}

template <typename F>
double widen_to_double(uint16_t h) {
  constexpr int M = F::kMant;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  const int exp = (h >> M) & ((1 << F::kExpBits) - 1);
  const uint32_t m = h & ((1u << M) - 1);
  if (exp == (1 << F::kExpBits) - 1) return m != 0 ? std::copysign(NAN, sign) : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(static_cast<double>(m), F::kMinExp - M);
  return sign * std::ldexp(static_cast<double>((1u << M) | m), exp - F::kBias - M);
}

// ---- whole buffers, by dtype ------------------------------------------------------------

inline bool is_narrow_float(int32_t dtype) { return dtype == DLRT_F16 || dtype == DLRT_BF16; }

// One element of a DLRT_F16 / DLRT_BF16 buffer.
inline double narrow_to_double(int32_t dtype, uint16_t h) {
  return dtype == DLRT_F16 ? widen_to_double<F16Format>(h) : widen_to_double<BF16Format>(h);
}
inline uint16_t double_to_narrow(int32_t dtype, double v) {
  return dtype == DLRT_F16 ? narrow_from_double<F16Format>(v) : narrow_from_double<BF16Format>(v);
}

// bf16 is the top half of an f32, so both directions are bit operations: widening appends 16
// zero bits (exact); narrowing rounds the low half away to nearest, ties to even, and keeps a
// NaN a (quiet) NaN. The same results as narrow_from_double<BF16Format> of the float, since
// a float widens to double exactly and the rounding happens once either way.
inline float bf16_to_float(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// Written without a branch so that loops over buffers of it vectorise (mixed precision's
// per-step weight casts ran at one value a nanosecond as a branchy scalar loop).
inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (u >> 16) | 0x0040u;
  return static_cast<uint16_t>((u & 0x7FFFFFFFu) > 0x7F800000u ? quiet_nan : rounded);
}

// f16 buffers: portably through the exact double path, or 8 at a time with x86's F16C
// instructions where the CPU has them (the same results: F16C rounds to nearest even, keeps
// subnormals, and quiets NaNs; loop_kernels_test compares the two on every pattern).
inline void f16_to_float_portable(const uint16_t* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(widen_to_double<F16Format>(in[i]));
}
inline void float_to_f16_portable(const float* in, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = narrow_from_double<F16Format>(in[i]);
}
#if defined(__x86_64__) && defined(__GNUC__)
inline bool cpu_has_f16c() {
  static const bool has = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  return has;
}
__attribute__((target("avx,f16c"))) inline void f16_to_float_f16c(const uint16_t* in, float* out,
                                                                   size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  f16_to_float_portable(in + i, out + i, n - i);
}
__attribute__((target("avx,f16c"))) inline void float_to_f16_f16c(const float* in, uint16_t* out,
                                                                   size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  float_to_f16_portable(in + i, out + i, n - i);
}
#else
inline bool cpu_has_f16c() { return false; }
inline void f16_to_float_f16c(const uint16_t* in, float* out, size_t n) {
  f16_to_float_portable(in, out, n);
}
inline void float_to_f16_f16c(const float* in, uint16_t* out, size_t n) {
  float_to_f16_portable(in, out, n);
}
#endif

// n elements of a DLRT_F16/DLRT_BF16 buffer to float and back (rounding once, as above):
// plain loops the compiler vectorises for bf16, F16C (or the portable path) for f16.
inline void narrow_to_float(int32_t dtype, const uint16_t* in, float* out, size_t n) {
  if (dtype == DLRT_BF16) {
    for (size_t i = 0; i < n; ++i) out[i] = bf16_to_float(in[i]);
  } else if (cpu_has_f16c()) {
    f16_to_float_f16c(in, out, n);
  } else {
    f16_to_float_portable(in, out, n);
  }
}
inline void float_to_narrow(int32_t dtype, const float* in, uint16_t* out, size_t n) {
  if (dtype == DLRT_BF16) {
    for (size_t i = 0; i < n; ++i) out[i] = float_to_bf16(in[i]);
  } else if (cpu_has_f16c()) {
    float_to_f16_f16c(in, out, n);
  } else {
    float_to_f16_portable(in, out, n);
  }
}

}  // namespace dlrt::plugin
