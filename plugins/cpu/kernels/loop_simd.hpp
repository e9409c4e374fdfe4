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
