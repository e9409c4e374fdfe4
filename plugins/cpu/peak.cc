// peak.cc: see peak.hpp.
//
// Each thread runs kChains independent FMA chains (acc = acc * b + c) over its vector
// registers: 12 chains cover the 4-cycle FMA latency on two FMA pipes with room to spare, so
// the loop is bound by FMA throughput alone. The accumulators are summed and returned so the
// compiler cannot drop the work. b and c keep the values finite and normal (no slow denormals).
#include "peak.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <vector>

namespace dlrt::cpu {
namespace {

constexpr int kChains = 12;
volatile float g_sink = 0;  // where the sums go, so the chains are not optimised away
// One run: 50,000 x 12 chains x 16 lanes x 2 = 19 MFLOP (avx512), ~0.1 ms on a 3.5 GHz core
// with two 512-bit FMA pipes; kRuns of them per thread, ~3 ms in all.
constexpr long kIterations = 50000;
constexpr int kRuns = 24;

#if defined(__x86_64__)
__attribute__((target("avx512f"))) float chains_avx512(long iterations) {
  __m512 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm512_set1_ps(1.0f + 0.001f * static_cast<float>(k));
  const __m512 b = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-6f);
  for (long i = 0; i < iterations; ++i)
    for (int k = 0; k < kChains; ++k) acc[k] = _mm512_fmadd_ps(acc[k], b, c);
  __m512 sum = acc[0];
  for (int k = 1; k < kChains; ++k) sum = _mm512_add_ps(sum, acc[k]);
  return _mm512_reduce_add_ps(sum);
}

__attribute__((target("avx2,fma"))) float chains_avx2(long iterations) {
  __m256 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm256_set1_ps(1.0f + 0.001f * static_cast<float>(k));
  const __m256 b = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-6f);
  for (long i = 0; i < iterations; ++i)
    for (int k = 0; k < kChains; ++k) acc[k] = _mm256_fmadd_ps(acc[k], b, c);
  __m256 sum = acc[0];
  for (int k = 1; k < kChains; ++k) sum = _mm256_add_ps(sum, acc[k]);
  alignas(32) float out[8];
  _mm256_store_ps(out, sum);
  float s = 0;
  for (float v : out) s += v;
  return s;
}
#endif

}  // namespace

#if defined(__x86_64__)
namespace {

// One measurement: each thread times kRuns short runs on its own and keeps its fastest (a run
// the scheduler interrupted is slower, not faster, so the minimum time is the FMA rate); the
// threads run at the same time, so the clock is the one all of them get together. Fills
// best[t] (GFLOP/s of thread t) and returns their sum.
double measure_once(int threads, int lanes, std::vector<double>& best) {
  const double flops_per_run = static_cast<double>(kIterations) * kChains * lanes * 2.0;
  best.assign(static_cast<size_t>(threads), 0.0);
  float sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
  {
    double mine = 0;
    for (int rep = 0; rep < kRuns; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      sum += lanes == 16 ? chains_avx512(kIterations) : chains_avx2(kIterations);
      const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
      if (dt.count() > 0) mine = std::max(mine, flops_per_run / dt.count() / 1e9);
    }
    best[static_cast<size_t>(omp_get_thread_num())] = mine;
  }
  g_sink = sum;
  double total = 0;
  for (double b : best) total += b;
  return total;
}

}  // namespace
#endif

PeakMeasurement measure_peak_gflops(int threads, int lanes) {
  PeakMeasurement m;
#if defined(__x86_64__)
  if (threads < 1) return m;
  if (lanes == 16 && !__builtin_cpu_supports("avx512f")) return m;
  if (lanes == 8 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) return m;
  if (lanes != 16 && lanes != 8) return m;
  // Two checks, one inside a measurement and one across them. Inside: identical cores agree
  // within a few percent, so a slowest thread below kThreadAgreement of the fastest was
  // descheduled. Across: two consecutive totals within kStable of each other say the rate
  // was steady for both (a neighbour that came or went in between shows as a step). Hybrid
  // CPUs, whose cores really differ, never pass the first check and take every attempt.
  constexpr int kMaxAttempts = 8;
  constexpr double kThreadAgreement = 0.8;
  constexpr double kStable = 0.03;
  std::vector<double> best;
  double lowest = 0, previous = 0;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    const double total = measure_once(threads, lanes, best);
    const auto [lo, hi] = std::minmax_element(best.begin(), best.end());
    const bool threads_agree = *lo >= kThreadAgreement * *hi;
    m.gflops = std::max(m.gflops, total);
    lowest = attempt == 0 ? total : std::min(lowest, total);
    ++m.attempts;
    const bool agrees_with_previous =
        attempt > 0 && std::abs(total - previous) <= kStable * std::max(total, previous);
    previous = threads_agree ? total : 0.0;  // a disagreeing measurement anchors nothing
    if (threads_agree && agrees_with_previous) {
      m.stable = true;
      break;
    }
  }
  m.spread = m.gflops > 0 ? (m.gflops - lowest) / m.gflops : 0.0;
#else
  (void)threads;
  (void)lanes;
#endif
  return m;
}

}  // namespace dlrt::cpu
