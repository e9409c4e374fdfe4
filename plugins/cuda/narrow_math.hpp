// narrow_math.hpp: f16 and bf16 to and from f32 as bit arithmetic, written once as
// `__host__ __device__` functions: narrow.cu's conversion kernels call them on the GPU, and
// kernel_math_test.cc checks them on the host against plugins/common/narrow_float.hpp (every
// 16-bit pattern widened; edge and random floats narrowed), so the rounding a GPU does is
// tested on machines without one.
//
// Narrowing rounds once, to nearest with ties to even; overflow gives infinity; a NaN stays a
// (quiet) NaN with its sign; f16 values below its smallest normal become subnormals. Widening
// is exact. Integer arithmetic only: no intrinsic whose rounding mode is implicit.
#pragma once

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define DLRT_NARROW_HD __host__ __device__ inline
#else
#define DLRT_NARROW_HD inline
#endif

namespace dlrt::cuda::math {

DLRT_NARROW_HD uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
DLRT_NARROW_HD float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// bf16 is the top half of an f32.
DLRT_NARROW_HD float bf16_to_float(uint16_t h) {
  return bits_float(static_cast<uint32_t>(h) << 16);
}
DLRT_NARROW_HD uint16_t float_to_bf16(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // NaN
  u += 0x7FFFu + ((u >> 16) & 1u);  // round the low half away: to nearest, ties to even
  return static_cast<uint16_t>(u >> 16);
}

// f16: sign, 5 exponent bits (bias 15), 10 mantissa bits; subnormals are m * 2^-24.
DLRT_NARROW_HD float f16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0x1Fu) return bits_float(sign | 0x7F800000u | (m << 13));  // inf, NaN
  if (e == 0) {
    const float v = static_cast<float>(m) * 5.9604644775390625e-8f;  // m * 2^-24, exact
    return sign ? -v : v;
  }
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));  // exponent - 15 + 127
}
DLRT_NARROW_HD uint16_t float_to_f16(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return sign | 0x7E00u;  // NaN
  // 65520 = 65504 (the largest f16) + half its unit: a tie that rounds to even, i.e. up.
  if (a >= 0x477FF000u) return sign | 0x7C00u;
  if (a < 0x38800000u) {               // below 2^-14: a subnormal (or zero) in units of 2^-24
    if (a < 0x33000000u) return sign;  // below 2^-25: rounds to zero (2^-25 itself ties to 0)
    const uint32_t e = a >> 23, mant = (a & 0x7FFFFFu) | 0x800000u;  // a = mant * 2^(e-150)
    const uint32_t shift = 126u - e;                                 // 14..24
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) ++q;  // may reach 0x400: the smallest normal
    return sign | static_cast<uint16_t>(q);
  }
  uint32_t h = (((a >> 23) - 112u) << 10) | ((a & 0x7FFFFFu) >> 13);
  const uint32_t rem = a & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry moves into the exponent
  return sign | static_cast<uint16_t>(h);
}

// The dlrt_dtype codes of the two formats (types.h).
enum : int32_t { kF16 = 2, kBF16 = 3 };

DLRT_NARROW_HD float narrow_to_float(int32_t dtype, uint16_t h) {
  return dtype == kBF16 ? bf16_to_float(h) : f16_to_float(h);
}
DLRT_NARROW_HD uint16_t float_to_narrow(int32_t dtype, float f) {
  return dtype == kBF16 ? float_to_bf16(f) : float_to_f16(f);
}

}  // namespace dlrt::cuda::math
