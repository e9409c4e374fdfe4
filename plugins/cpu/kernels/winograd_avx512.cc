// winograd_avx512.cc: the Winograd kernel (winograd_kernel.inc) on AVX-512 (F, and VL/DQ/BW
// as every AVX-512 CPU oneDNN calls avx512_core has), 16 lanes.
//
// Registers: 32 zmm. The micro-kernel holds kMaxRows x 2 accumulators, 2 vectors of B and one
// broadcast of A (GCC folds it into the FMA as an embedded {1to16} broadcast): 12 rows use 27
// of them, so each row of A read feeds 2 FMAs and each vector of B read 12 rows' worth.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>

#include "winograd_conv.hpp"

namespace dlrt::cpu::wino::avx512 {

#define WINO_TARGET __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")))
#define WINO_INLINE \
  inline __attribute__((always_inline, target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")))

using V = __m512;
constexpr int kLanes = 16;
constexpr int kMaxRows = 12;

WINO_INLINE V set1(float v) { return _mm512_set1_ps(v); }
WINO_INLINE V load(const float* p) { return _mm512_loadu_ps(p); }
WINO_INLINE void store(float* p, V v) { _mm512_storeu_ps(p, v); }
WINO_INLINE V zero() { return _mm512_setzero_ps(); }
WINO_INLINE V add(V a, V b) { return _mm512_add_ps(a, b); }
WINO_INLINE V sub(V a, V b) { return _mm512_sub_ps(a, b); }
WINO_INLINE V mul(V a, V b) { return _mm512_mul_ps(a, b); }
WINO_INLINE V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }    // a b + c
WINO_INLINE V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }  // c - a b
WINO_INLINE V vmax(V a, V b) { return _mm512_max_ps(a, b); }
WINO_INLINE V broadcast(const float* p) { return _mm512_set1_ps(*p); }
// bf16 storage (mixed precision): 16 bf16 widened to f32 (exact: the bits become the top
// half), and 16 f32 narrowed to bf16 to nearest, ties to even, a NaN kept a quiet NaN: the
// bits plugin::float_to_bf16 gives, so this kernel on bf16 operands equals its f32 build
// between conversions.
WINO_INLINE V load(const uint16_t* p) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
WINO_INLINE void store(uint16_t* p, V v) {
  const __m512i u = _mm512_castps_si512(v), high = _mm512_srli_epi32(u, 16);
  const __m512i odd = _mm512_and_si512(high, _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff))), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(high, _mm512_set1_epi32(0x40)));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(r));
}
// f16 storage: 16 halves widened (exact) and rounded to nearest even by the hardware's
// conversions (subnormals kept, NaN made quiet: plugin::float_to_narrow's f16 bits).
WINO_INLINE V load(const F16Bits* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
WINO_INLINE void store(F16Bits* p, V v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
// kLanes floats `stride` apart from p.
WINO_INLINE V gather_stride(const float* p, int64_t stride) {
  const __m512i lanes =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(static_cast<int>(stride)));
  return _mm512_i32gather_ps(lanes, p, 4);
}

#include "winograd_kernel.inc"

#undef WINO_TARGET
#undef WINO_INLINE

}  // namespace dlrt::cpu::wino::avx512
