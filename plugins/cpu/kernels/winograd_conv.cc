// winograd_conv.cc: where the Winograd convolutions (winograd_kernel.inc) run and which ISA's
// build of them: the cost rule (worth_it) and the dispatch between winograd_avx2.cc and
// winograd_avx512.cc.
#include "winograd_conv.hpp"

namespace dlrt::cpu::wino {

bool cpu_supported(const dlrt_plugin& p) { return p.avx2 && __builtin_cpu_supports("fma"); }

bool storage_supported(int32_t dtype) {
  if (dtype == DLRT_F32 || dtype == DLRT_BF16) return true;
  return dtype == DLRT_F16 && __builtin_cpu_supports("f16c");
}

bool channels_fit(int64_t ci, int64_t co) {
  return ci > 0 && co > 0 && ci % 16 == 0 && co % 16 == 0;
}

bool worth_it(const Geometry& g, Pass pass, bool onednn_avx512) {
  // Past the cap, oneDNN's Winograd or its direct kernel (winograd_conv.hpp).
  if (onednn_avx512 && pass == Pass::forward && g.ci * g.co > kMaxForwardPairsAvx512) return false;
  int64_t tiles = g.n * ((g.oh + 3) / 4) * ((g.ow + 3) / 4);
  const int64_t direct = 18 * g.n * g.oh * g.ow;
  if (!(g.filter_constant && pass == Pass::forward))
    return direct > 72 * tiles + kTransformFlopsPerPair;
  // U kept from the first run: only the products count. The micro-kernel runs kMaxRows tiles
  // at a time (6 in the AVX2 build, 12 in the AVX-512 one) and a short group costs a whole
  // one, so a few tiles (one image's 3x3 output: one tile) do not amortise reading U, four
  // times the filter's size. (The rule above, fitted to measurements with the transform paid,
  // counts tiles as they are.)
  const int64_t rows = onednn_avx512 ? 12 : 6;
  tiles = (tiles + rows - 1) / rows * rows;
  return direct > 72 * tiles;
}

std::unique_ptr<Kernel> make_kernel(const dlrt_plugin& p, const Geometry& g, Pass pass, bool bias,
                                    bool relu, int32_t storage) {
  if (p.onednn_avx512) return avx512::make_kernel(p, g, pass, bias, relu, storage);
  return avx2::make_kernel(p, g, pass, bias, relu, storage);
}

}  // namespace dlrt::cpu::wino
