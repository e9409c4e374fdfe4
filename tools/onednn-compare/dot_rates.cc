// dot_rates.cc: one core's rate of AVX512-BF16's vdpbf16ps (32 bf16 products summed pairwise
// into 16 f32 lanes: 64 flops an instruction) against AVX-512's vfmadd231ps (16 FMAs: 32
// flops), each on 12 independent accumulators (more than latency x pipes), in GFLOP/s. What
// bounds any bf16 convolution on the machine: where vdpbf16ps issues once every two cycles
// and the FMA twice a cycle, bf16 products give half of f32's flops, and only the
// memory-bound passes can gain from 16-bit data (docs/benchmarks.md, "oneDNN 3.13 (PyPI)
// against Debian's 2.6.3").
// Exits 2 on a CPU without AVX512-BF16.
#include <immintrin.h>

#include <chrono>
#include <cstdio>

namespace {

constexpr int kChains = 12;
constexpr long kIterations = 20000000;
volatile float g_sink = 0;

__attribute__((target("avx512f,avx512bf16"))) double bf16_dot_gflops() {
  __m512 acc[kChains];
  for (__m512& a : acc) a = _mm512_setzero_ps();
  const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), y = (__m512bh)_mm512_set1_epi16(0x3c00);
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < kIterations; ++i)
    for (__m512& a : acc) a = _mm512_dpbf16_ps(a, x, y);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (__m512& a : acc) g_sink = g_sink + _mm512_reduce_add_ps(a);
  return 64.0 * kChains * kIterations / s * 1e-9;
}

__attribute__((target("avx512f,fma"))) double f32_fma_gflops() {
  __m512 acc[kChains];
  for (__m512& a : acc) a = _mm512_set1_ps(1.0f);
  const __m512 b = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-6f);
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < kIterations; ++i)
    for (__m512& a : acc) a = _mm512_fmadd_ps(a, b, c);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (__m512& a : acc) g_sink = g_sink + _mm512_reduce_add_ps(a);
  return 32.0 * kChains * kIterations / s * 1e-9;
}

}  // namespace

int main() {
  if (!__builtin_cpu_supports("avx512bf16")) {
    std::printf("no AVX512-BF16 on this CPU\n");
    return 2;
  }
  for (int r = 0; r < 3; ++r)
    std::printf("one core: vdpbf16ps %.1f GFLOP/s, vfmadd231ps %.1f GFLOP/s\n", bf16_dot_gflops(),
                f32_fma_gflops());
  return 0;
}
