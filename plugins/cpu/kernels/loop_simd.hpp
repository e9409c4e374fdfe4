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

}  // namespace dlrt::cpu::loops::simd
