// winograd_conv.hpp: 3x3 stride-1 convolutions (NHWC, f32) by Winograd's minimal filtering
// F(4x4, 3x3), forward, backward data and backward filter, for AVX2 + FMA CPUs. Chosen over
// oneDNN's direct kernels by prim_conv.cc when winograd_fits() says the shape qualifies and the
// plugin's `winograd` option is on (the default). Why and how: winograd_conv.cc.
#pragma once

#include <cstdint>
#include <memory>

#include "../ops.hpp"

namespace dlrt::cpu::wino {

enum class Pass { forward, backward_data, backward_filter };

// The forward convolution a pass is about: x (n,h,w,ci) * w (3,3,ci,co) -> y (n,oh,ow,co),
// stride 1, dilation 1; pad_h/pad_w are the cells of padding before the first row/column
// (SAME or VALID: whatever padding_before the op's window has; the rest follows from oh/ow).
struct Geometry {
  int64_t n = 0, h = 0, w = 0, ci = 0;
  int64_t oh = 0, ow = 0, co = 0;
  int64_t pad_h = 0, pad_w = 0;
};

// The CPU can run this path: AVX2 and FMA, and the plugin's loops may use AVX2
// (dlrt_plugin::avx2, which ONEDNN_MAX_CPU_ISA below AVX2 turns off).
bool cpu_supported(const dlrt_plugin& p);

// Channel counts this path handles: ci and co multiples of 16 (the GEMM micro-kernel writes
// 16 output channels at a time; backward data's GEMM writes ci).
bool channels_fit(int64_t ci, int64_t co);

// Whether Winograd saves work at this geometry once its per-run filter transform is paid for.
// Per (ci, co) channel pair, the direct convolution costs 18 flops per output cell
// (2 x 3x3) and Winograd 72 per 4x4 tile (36 planes x 2) plus one filter transform (or, for
// backward filter, one output transform) of U = G g G^T, measured at 26 ns per pair on a
// 2-core AVX-512 EPYC (perf: 78% of a batch-1 run of the exported reference CNN was
// filter_row), which is about kTransformFlopsPerPair flops of oneDNN's direct kernel. The
// transform runs every time: a kernel cannot tell that its filter is a constant (an inference
// session's weights) rather than a variable an optimizer rewrites, so a small image at a small
// batch (the CNN's 11x11 layer at batch 1) is faster direct.
//
// Where oneDNN runs AVX-512 (`onednn_avx512`), its direct kernels have 16 lanes against this
// kernel's 8, and measured on a 2-core Zen 5 EPYC (dlbench ops, two threads) they win the
// forward pass (the CNN's conv2 777 vs 909 us, conv3 142 vs 342 us; light_resnet50 at batch
// 64: 1.47 vs 1.62 s) and backward data of one-tile images (conv3: 154 vs 326 us), while
// Winograd still wins backward filter (conv2 756 vs 1338 us, conv3 230 vs 410) and backward
// data of larger images (conv2 796 vs 1189). So on AVX-512 the forward pass stays direct and
// backward data needs at least kMinTilesPerImageAvx512 tiles per image.
constexpr int64_t kTransformFlopsPerPair = 2600;
constexpr int64_t kMinTilesPerImageAvx512 = 4;
bool worth_it(const Geometry& g, Pass pass, bool onednn_avx512);

// The kernel. For Pass::forward, `bias` says whether input 2 is a bias (conv2d_bias_act) and
// `relu` whether a relu follows it; the inputs/outputs are the ops' own (docs/ops.md).
std::unique_ptr<Kernel> make_kernel(const dlrt_plugin& p, const Geometry& g, Pass pass, bool bias,
                                    bool relu);

}  // namespace dlrt::cpu::wino
