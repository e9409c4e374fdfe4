// loop_simd.hpp: how a loop kernel gets an AVX2 build of its inner loop and keeps a portable one
// (baseline x86-64, i.e. SSE2), chosen when the kernel is made.
//
// The plugin is compiled for baseline x86-64, so a plain loop vectorises 4 floats wide. A hot
// loop is written once as an always_inline body and instantiated twice, in a function with
// DLRT_TARGET_AVX2 (GCC/Clang compile that one function, and whatever is inlined into it, for
// AVX2) and in a plain one; the kernel calls the first only when `dlrt_plugin::avx2` is set
// (cpu.hpp: the CPU has AVX2 and oneDNN's effective ISA includes it, so ONEDNN_MAX_CPU_ISA=SSE41
// selects the portable path, which is how the tests run it). Nothing else is compiled for
// AVX2: shared inline functions (std::, loop_util.hpp) keep their baseline out-of-line copies,
// so the library still runs on any x86-64.
//
// Bodies are either plain scalar loops (the compiler vectorises them at the width of the
// function they are inlined into) or explicit vectors (GCC vector extensions: F4 for the
// portable path, F8 for AVX2; the mask/select helpers below), for loops the vectoriser leaves
// scalar (the max-pool windows' compare-and-select chains). FMA is deliberately not enabled:
// the two paths then give the same bits (every body is element-wise, or sums each output in the
// same order), so results do not depend on the machine.
#pragma once

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#define DLRT_HAVE_AVX2_PATH 1
#define DLRT_TARGET_AVX2 __attribute__((target("avx2")))
#define DLRT_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2")))
#include <immintrin.h>
#else
#define DLRT_HAVE_AVX2_PATH 0
#define DLRT_TARGET_AVX2
#endif
#define DLRT_SIMD_INLINE inline __attribute__((always_inline))

namespace dlrt::cpu::loops::simd {

// 4 and 8 floats, with their lane masks (-1 / 0 per lane, what a vector comparison gives).
typedef float F4 __attribute__((vector_size(16)));
typedef int32_t M4 __attribute__((vector_size(16)));
typedef float F8 __attribute__((vector_size(32)));
typedef int32_t M8 __attribute__((vector_size(32)));

template <typename V>
struct Traits;
template <>
struct Traits<F4> {
  using Mask = M4;
  static constexpr int kLanes = 4;
};
template <>
struct Traits<F8> {
  using Mask = M8;
  static constexpr int kLanes = 8;
};

// Unaligned loads and stores (memcpy of a vector compiles to one movups/vmovups).
template <typename V>
DLRT_SIMD_INLINE V load(const float* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof(V));
  return v;
}
template <typename V>
DLRT_SIMD_INLINE void store(float* p, V v) {
  __builtin_memcpy(p, &v, sizeof(V));
}

// bf16 operands of the same loops (mixed precision's memory-bound passes): each lane widened
// to f32 on load (exact: the bf16 bits become the top half of the float) and narrowed on store
// by dropping the low half, which is exact for values that came from bf16 — the kernels that
// use these only select and copy (max pooling, relu_grad), they never compute new values.
typedef uint16_t U4 __attribute__((vector_size(8)));
typedef uint16_t U8 __attribute__((vector_size(16)));
template <typename V>
struct Bf16Lanes;
template <>
struct Bf16Lanes<F4> {
  using Bits = U4;
};
template <>
struct Bf16Lanes<F8> {
  using Bits = U8;
};
template <typename V>
DLRT_SIMD_INLINE V load(const uint16_t* p) {
  using M = typename Traits<V>::Mask;
  typename Bf16Lanes<V>::Bits b;
  __builtin_memcpy(&b, p, sizeof(b));
  return reinterpret_cast<V>(__builtin_convertvector(b, M) << 16);
}
template <typename V>
DLRT_SIMD_INLINE void store(uint16_t* p, V v) {
  using M = typename Traits<V>::Mask;
  using Bits = typename Bf16Lanes<V>::Bits;
  typedef uint32_t UM __attribute__((vector_size(sizeof(M))));
  const Bits b = __builtin_convertvector(reinterpret_cast<UM>(v) >> 16, Bits);
  __builtin_memcpy(p, &b, sizeof(b));
}
// The scalar forms, for loop tails.
DLRT_SIMD_INLINE float widen1(float v) { return v; }
DLRT_SIMD_INLINE float widen1(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
DLRT_SIMD_INLINE void put1(float* p, float v) { *p = v; }
DLRT_SIMD_INLINE void put1(uint16_t* p, float v) {
  uint32_t u;
  __builtin_memcpy(&u, &v, 4);
  *p = static_cast<uint16_t>(u >> 16);
}

// m ? a : b per lane (m from a comparison: all ones or all zeros).
template <typename V, typename M = typename Traits<V>::Mask>
DLRT_SIMD_INLINE V select(M m, V a, V b) {
  return reinterpret_cast<V>((reinterpret_cast<M>(a) & m) | (reinterpret_cast<M>(b) & ~m));
}
// m ? a : +0.0 per lane.
template <typename V, typename M = typename Traits<V>::Mask>
DLRT_SIMD_INLINE V keep(M m, V a) {
  return reinterpret_cast<V>(reinterpret_cast<M>(a) & m);
}
// m ? +0.0 : a per lane.
template <typename V, typename M = typename Traits<V>::Mask>
DLRT_SIMD_INLINE V drop(M m, V a) {
  return reinterpret_cast<V>(reinterpret_cast<M>(a) & ~m);
}

// ---- AVX-512 -------------------------------------------------------------------------------
//
// An AVX-512 build of a body written for F4/F8 (the pools' 2x2 passes): GCC lowers 64-byte
// generic vectors whose comparisons give lane masks to scalar code, so Z16 wraps __m512 with
// its comparisons giving AVX-512's k-registers (K16) and the same operations as the generic
// vectors, each an intrinsic. Only DLRT_TARGET_AVX512 functions may use it; the kernels call
// those only where the plugin's ISA is AVX-512 (dlrt_plugin::onednn_avx512), so
// ONEDNN_MAX_CPU_ISA=AVX2 selects the F8 build.
#if DLRT_HAVE_AVX2_PATH
#define DLRT_SIMD_INLINE_AVX512 DLRT_SIMD_INLINE DLRT_TARGET_AVX512

struct K16 {
  __mmask16 m;
};
struct Z16 {
  __m512 v;
};
template <>
struct Traits<Z16> {
  using Mask = K16;
  static constexpr int kLanes = 16;
};

DLRT_SIMD_INLINE_AVX512 K16 operator|(K16 a, K16 b) { return {static_cast<__mmask16>(a.m | b.m)}; }
DLRT_SIMD_INLINE_AVX512 K16 operator&(K16 a, K16 b) { return {static_cast<__mmask16>(a.m & b.m)}; }
// Ordered comparisons are false where either lane is NaN, as the generic vectors' are; != is
// true there (so v != v marks NaNs).
DLRT_SIMD_INLINE_AVX512 K16 operator>(Z16 a, Z16 b) {
  return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_GT_OQ)};
}
DLRT_SIMD_INLINE_AVX512 K16 operator==(Z16 a, Z16 b) {
  return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_EQ_OQ)};
}
DLRT_SIMD_INLINE_AVX512 K16 operator!=(Z16 a, Z16 b) {
  return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_NEQ_UQ)};
}
DLRT_SIMD_INLINE_AVX512 Z16& operator+=(Z16& a, Z16 b) {
  a.v = _mm512_add_ps(a.v, b.v);
  return a;
}

template <>
DLRT_SIMD_INLINE_AVX512 Z16 load<Z16>(const float* p) {
  return {_mm512_loadu_ps(p)};
}
DLRT_SIMD_INLINE_AVX512 void store(float* p, Z16 v) { _mm512_storeu_ps(p, v.v); }
// bf16: widened on load, narrowed by dropping the low half on store, as load/store above.
template <>
DLRT_SIMD_INLINE_AVX512 Z16 load<Z16>(const uint16_t* p) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return {_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))};
}
DLRT_SIMD_INLINE_AVX512 void store(uint16_t* p, Z16 v) {
  const __m512i top = _mm512_srli_epi32(_mm512_castps_si512(v.v), 16);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(top));
}
DLRT_SIMD_INLINE_AVX512 Z16 select(K16 m, Z16 a, Z16 b) {
  return {_mm512_mask_mov_ps(b.v, m.m, a.v)};
}
DLRT_SIMD_INLINE_AVX512 Z16 keep(K16 m, Z16 a) { return {_mm512_maskz_mov_ps(m.m, a.v)}; }
DLRT_SIMD_INLINE_AVX512 Z16 drop(K16 m, Z16 a) {
  return {_mm512_maskz_mov_ps(static_cast<__mmask16>(~m.m), a.v)};
}
#endif

}  // namespace dlrt::cpu::loops::simd
