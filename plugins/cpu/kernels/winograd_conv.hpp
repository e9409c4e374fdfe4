// winograd_conv.hpp: 3x3 stride-1 convolutions (NHWC, f32, bf16 or f16 storage) by Winograd's minimal filtering
// F(4x4, 3x3), forward, backward data and backward filter, for AVX2 + FMA CPUs, in 16-lane
// AVX-512 code where oneDNN runs AVX-512 (the same source, winograd_kernel.inc, built twice). Chosen over
// oneDNN's direct kernels by prim_conv.cc when winograd_fits() says the shape qualifies and the
// plugin's `winograd` option is on (the default). Why and how: winograd_kernel.inc.
#pragma once

#include <cstdint>
#include <memory>

#include "../ops.hpp"

namespace dlrt::cpu::wino {

// backward_both: conv2d_backward, dx and dw in one sweep over the tiles (dy transformed once).
enum class Pass { forward, backward_data, backward_filter, backward_both };

// The forward convolution a pass is about: x (n,h,w,ci) * w (3,3,ci,co) -> y (n,oh,ow,co),
// stride 1, dilation 1; pad_h/pad_w are the cells of padding before the first row/column
// (SAME or VALID: whatever padding_before the op's window has; the rest follows from oh/ow).
struct Geometry {
  int64_t n = 0, h = 0, w = 0, ci = 0;
  int64_t oh = 0, ow = 0, co = 0;
  int64_t pad_h = 0, pad_w = 0;
  // The host marks the filter a graph constant (dlrt_op_desc.constant_inputs: an inference
  // session's weights). The forward pass then transforms it into U on its first run and keeps
  // U with the kernel (36 * ci * co floats), so later runs skip the transform.
  bool filter_constant = false;
};

// The CPU can run this path: AVX2 and FMA, and the plugin's loops may use AVX2
// (dlrt_plugin::avx2, which ONEDNN_MAX_CPU_ISA below AVX2 turns off).
bool cpu_supported(const dlrt_plugin& p);

// Storage dtypes the kernel reads and writes itself: f32, bf16 (bit operations), and f16 where
// the CPU converts it in hardware (F16C, which every AVX2 CPU has: checked all the same).
bool storage_supported(int32_t dtype);

// An f16 value's bits, a type of their own so that the kernels' load/store overloads tell f16
// storage from bf16 (both are 16-bit words).
struct F16Bits {
  uint16_t bits;
};

// Channel counts this path handles: ci and co multiples of 16 (the GEMM micro-kernel writes
// 16 output channels at a time; backward data's GEMM writes ci).
bool channels_fit(int64_t ci, int64_t co);

// Whether Winograd saves work at this geometry once its filter transform is paid for.
// Per (ci, co) channel pair, the direct convolution costs 18 flops per output cell
// (2 x 3x3) and Winograd 72 per 4x4 tile (36 planes x 2) plus one filter transform (or, for
// backward filter, one output transform) of U = G g G^T, measured at 26 ns per pair on a
// 2-core AVX-512 EPYC (perf: 78% of a batch-1 run of the exported reference CNN was
// filter_row, before constant filters kept U), which is about kTransformFlopsPerPair flops of
// oneDNN's direct kernel. The transform is paid on every run unless the forward pass's filter
// is a constant (Geometry::filter_constant): then it is paid once, and only the products
// count, so the CNN's 11x11 layer at batch 1 runs Winograd in an inference session and
// direct in training (where the optimizer rewrites the filter every step).
//
// Where oneDNN runs AVX-512 (`onednn_avx512`) the kernel runs its AVX-512 build, twice the
// lanes of the AVX2 one, and wins every pass that the rule above admits against oneDNN's
// direct kernels. Measured on a 2-core AVX-512 Xeon (dlbench ops, two threads, best median of
// three rounds, direct vs this kernel): the reference CNN's conv2 forward 914 vs 460 us,
// backward filter 974 vs 465, backward data 1034 vs 459; its conv3 (a 3x3 output: one tile
// per image) forward 195 vs 149, backward data 168 vs 158; ResNet-20's 3x3 layers at batch
// 128, forward, 16/32/64 channels: 1988/1750/1610 vs 1589/932/726 us, and the backward passes
// alike. (The AVX2 build lost the forward pass to those direct kernels: the CNN's conv2 777
// vs 909 us on a Zen 5 EPYC.) One exception, forward passes of more than
// kMaxForwardPairsAvx512 channel pairs: those are left to oneDNN's own AVX-512 Winograd
// (prim_conv.cc), which transforms a constant filter once and blocks large filters for the
// cache, where this kernel reads each plane's ci x co slice of U once per block of
// kBlockTiles tiles and falls out of L2 past 64 x 64 (36 x 64 x 64 floats = 576 KiB).
constexpr int64_t kTransformFlopsPerPair = 2600;
constexpr int64_t kMaxForwardPairsAvx512 = 64 * 64;
bool worth_it(const Geometry& g, Pass pass, bool onednn_avx512);

// The kernel. For Pass::forward, `bias` says whether input 2 is a bias (conv2d_bias_act) and
// `relu` whether a relu follows it; for Pass::backward_data, `bias` says whether input 2 is an
// addend dx starts from (conv2d_backward_data_add) instead of zeros. The inputs/outputs are
// the ops' own (docs/ops.md). `storage`: every operand's dtype, DLRT_F32, or DLRT_BF16 /
// DLRT_F16 (mixed precision; f16 where storage_supported): the images are widened as the
// tiles read them and rounded as they are written (dx summed in an f32 copy first), the same
// f32 arithmetic, so the results are the f32 kernel's between conversions, rounded once,
// without the conversions' passes over whole tensors. The
// AVX-512 build where oneDNN's effective ISA is AVX-512 (p.onednn_avx512: the CPU has it and
// ONEDNN_MAX_CPU_ISA does not cap it, so a test can force the AVX2 build), else the AVX2 one.
std::unique_ptr<Kernel> make_kernel(const dlrt_plugin& p, const Geometry& g, Pass pass, bool bias,
                                    bool relu, int32_t storage = DLRT_F32);

// The two builds make_kernel chooses between (winograd_avx2.cc, winograd_avx512.cc).
namespace avx2 {
std::unique_ptr<Kernel> make_kernel(const dlrt_plugin& p, const Geometry& g, Pass pass, bool bias,
                                    bool relu, int32_t storage = DLRT_F32);
}
namespace avx512 {
std::unique_ptr<Kernel> make_kernel(const dlrt_plugin& p, const Geometry& g, Pass pass, bool bias,
                                    bool relu, int32_t storage = DLRT_F32);
}

}  // namespace dlrt::cpu::wino
