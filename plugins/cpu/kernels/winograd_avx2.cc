// winograd_avx2.cc: the Winograd kernel (winograd_kernel.inc) on AVX2 + FMA, 8 lanes.
//
// Registers: 16 ymm. The micro-kernel holds kMaxRows x 2 accumulators, 2 vectors of B and one
// broadcast of A: 6 rows use 15 of them (the classic 6x16 AVX2 SGEMM kernel).
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>

#include "winograd_conv.hpp"

namespace dlrt::cpu::wino::avx2 {

// F16C (every AVX2 CPU has it; storage_supported checks) for f16 storage's conversions.
#define WINO_TARGET __attribute__((target("avx2,fma,f16c")))
#define WINO_INLINE inline __attribute__((always_inline, target("avx2,fma,f16c")))

using V = __m256;
constexpr int kLanes = 8;
constexpr int kMaxRows = 6;

WINO_INLINE V set1(float v) { return _mm256_set1_ps(v); }
WINO_INLINE V load(const float* p) { return _mm256_loadu_ps(p); }
WINO_INLINE void store(float* p, V v) { _mm256_storeu_ps(p, v); }
WINO_INLINE V zero() { return _mm256_setzero_ps(); }
WINO_INLINE V add(V a, V b) { return _mm256_add_ps(a, b); }
WINO_INLINE V sub(V a, V b) { return _mm256_sub_ps(a, b); }
WINO_INLINE V mul(V a, V b) { return _mm256_mul_ps(a, b); }
WINO_INLINE V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }    // a b + c
WINO_INLINE V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }  // c - a b
WINO_INLINE V vmax(V a, V b) { return _mm256_max_ps(a, b); }
WINO_INLINE V broadcast(const float* p) { return _mm256_broadcast_ss(p); }
// bf16 storage (mixed precision): 8 bf16 widened to f32 (exact), and 8 f32 narrowed to bf16
// to nearest, ties to even, a NaN kept a quiet NaN (plugin::float_to_bf16's bits). packus
// packs within each 128-bit half; the permute brings the two halves' four values together.
WINO_INLINE V load(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
WINO_INLINE void store(uint16_t* p, V v) {
  const __m256i u = _mm256_castps_si256(v), high = _mm256_srli_epi32(u, 16);
  const __m256i odd = _mm256_and_si256(high, _mm256_set1_epi32(1));
  __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff))), 16);
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  r = _mm256_blendv_epi8(r, _mm256_or_si256(high, _mm256_set1_epi32(0x40)), nan);
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
}
// f16 storage: 8 halves widened (exact) and rounded to nearest even by F16C (subnormals kept,
// NaN made quiet: plugin::float_to_narrow's f16 bits).
WINO_INLINE V load(const F16Bits* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
WINO_INLINE void store(F16Bits* p, V v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
// kLanes floats `stride` apart from p.
WINO_INLINE V gather_stride(const float* p, int64_t stride) {
  const __m256i lanes = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                           _mm256_set1_epi32(static_cast<int>(stride)));
  return _mm256_i32gather_ps(p, lanes, 4);
}

#include "winograd_kernel.inc"

#undef WINO_TARGET
#undef WINO_INLINE

}  // namespace dlrt::cpu::wino::avx2
