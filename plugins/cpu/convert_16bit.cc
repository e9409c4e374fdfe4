// convert_16bit.cc: see convert_16bit.hpp.
#include "convert_16bit.hpp"

#include <immintrin.h>

#include "narrow_float.hpp"

namespace dlrt::cpu {

namespace {

#define CONVERT_AVX2 __attribute__((target("avx2")))
#define CONVERT_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2")))
#define CONVERT_AVX512_BF16 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2")))

// Plain loops: float_to_bf16 has no branch, so they vectorise at the width of their build.
inline __attribute__((always_inline)) void narrow_loop(const float* in, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = plugin::float_to_bf16(in[i]);
}
inline __attribute__((always_inline)) void widen_loop(const uint16_t* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = plugin::bf16_to_float(in[i]);
}
void narrow_base(const float* in, uint16_t* out, size_t n) { narrow_loop(in, out, n); }
void widen_base(const uint16_t* in, float* out, size_t n) { widen_loop(in, out, n); }
CONVERT_AVX2 void narrow_avx2(const float* in, uint16_t* out, size_t n) { narrow_loop(in, out, n); }
CONVERT_AVX2 void widen_avx2(const uint16_t* in, float* out, size_t n) { widen_loop(in, out, n); }

// 16 floats' bits -> 16 bf16: float_to_bf16 on each lane.
CONVERT_AVX512 inline __m256i round_to_bf16(__m512i u) {
  const __m512i kept_bit = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), kept_bit);
  r = _mm512_srli_epi32(r, 16);
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF)),
                                                _mm512_set1_epi32(0x7F800000));
  r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x0040));
  return _mm512_cvtepi32_epi16(r);
}

CONVERT_AVX512 void narrow_avx512(const float* in, uint16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        round_to_bf16(_mm512_loadu_si512(in + i)));
  if (i < n) {  // the last 1-15 through masked loads and stores
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm256_mask_storeu_epi16(out + i, m, round_to_bf16(_mm512_maskz_loadu_epi32(m, in + i)));
  }
}

CONVERT_AVX512 void widen_avx512(const uint16_t* in, float* out, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    _mm512_storeu_si512(out + i, _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  widen_loop(in + i, out + i, n - i);
}

// vcvtne2ps2bf16 rounds as float_to_bf16 does (nearest even; a NaN keeps its top bits and
// becomes quiet) except that it reads subnormal inputs as zero: 32 values at a time when none
// is subnormal (fpclass bit 0x20), else the integer rounding.
CONVERT_AVX512_BF16 void narrow_avx512_bf16(const float* in, uint16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 lo = _mm512_loadu_ps(in + i), hi = _mm512_loadu_ps(in + i + 16);
    const __mmask16 sub_lo = _mm512_fpclass_ps_mask(lo, 0x20);
    const __mmask16 sub_hi = _mm512_fpclass_ps_mask(hi, 0x20);
    if (__builtin_expect((sub_lo | sub_hi) == 0, 1)) {
      _mm512_storeu_si512(out + i, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo)));
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                          round_to_bf16(_mm512_castps_si512(lo)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i + 16),
                          round_to_bf16(_mm512_castps_si512(hi)));
    }
  }
  narrow_avx512(in + i, out + i, n - i);
}

}  // namespace

ConvertIsa convert_isa(const dlrt_plugin& p) {
  if (p.onednn_bf16) return ConvertIsa::kAvx512Bf16;
  if (p.onednn_avx512) return ConvertIsa::kAvx512;
  if (p.avx2) return ConvertIsa::kAvx2;
  return ConvertIsa::kBase;
}

void widen_16bit(ConvertIsa isa, int32_t dtype, const uint16_t* in, float* out, size_t n) {
  if (dtype != DLRT_BF16) return plugin::narrow_to_float(dtype, in, out, n);
  switch (isa) {
    case ConvertIsa::kAvx512Bf16:
    case ConvertIsa::kAvx512:
      return widen_avx512(in, out, n);
    case ConvertIsa::kAvx2:
      return widen_avx2(in, out, n);
    case ConvertIsa::kBase:
      return widen_base(in, out, n);
  }
}

void narrow_16bit(ConvertIsa isa, int32_t dtype, const float* in, uint16_t* out, size_t n) {
  if (dtype != DLRT_BF16) return plugin::float_to_narrow(dtype, in, out, n);
  switch (isa) {
    case ConvertIsa::kAvx512Bf16:
      return narrow_avx512_bf16(in, out, n);
    case ConvertIsa::kAvx512:
      return narrow_avx512(in, out, n);
    case ConvertIsa::kAvx2:
      return narrow_avx2(in, out, n);
    case ConvertIsa::kBase:
      return narrow_base(in, out, n);
  }
}

}  // namespace dlrt::cpu
