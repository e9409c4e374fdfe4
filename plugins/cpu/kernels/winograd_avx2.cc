// winograd_avx2.cc: the Winograd kernel (winograd_kernel.inc) on AVX2 + FMA, 8 lanes.
//
// Registers: 16 ymm. The micro-kernel holds kMaxRows x 2 accumulators, 2 vectors of B and one
// broadcast of A: 6 rows use 15 of them (the classic 6x16 AVX2 SGEMM kernel).
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "winograd_conv.hpp"

namespace dlrt::cpu::wino::avx2 {

#define WINO_TARGET __attribute__((target("avx2,fma")))
#define WINO_INLINE inline __attribute__((always_inline, target("avx2,fma")))

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
