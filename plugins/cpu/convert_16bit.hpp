// convert_16bit.hpp: whole buffers of f32 to and from bf16/f16, at the widest the CPU allows.
//
// Mixed precision converts every step: the weights to bf16 for the forward, their gradients
// back to f32 for the optimizer, and the operands of every op that runs its f32 kernel between
// conversions (widening_kernel.hpp). These loops are that work; the cast kernel
// (kernels/loop_shape.cc) and the WideningKernel call them, on the chunks their threads own.
//
// Every build gives the same bits as plugin::float_to_bf16 / bf16_to_float (bf16) and
// plugin::float_to_narrow / narrow_to_float (f16): round to nearest, ties to even, once; NaN
// stays a quiet NaN with its payload's top bits; subnormals kept. The builds, chosen from the
// ISA oneDNN uses (so ONEDNN_MAX_CPU_ISA selects the lower ones, as the tests do):
//   kAvx512Bf16  AVX512-BF16's vcvtne2ps2bf16, 32 values an instruction. It treats subnormal
//                inputs as zero, so a block holding one (vfpclassps) takes the integer path.
//   kAvx512      the integer rounding (add 0x7FFF plus the kept bit's parity, keep the top
//                half) on 16 lanes, vpmovdw to narrow.
//   kAvx2        the same rounding as a plain loop the compiler vectorises 8 lanes wide.
//   kBase        that loop at baseline x86-64 (4 lanes).
// f16 uses F16C (narrow_float.hpp) on any build that has it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cpu.hpp"

namespace dlrt::cpu {

enum class ConvertIsa { kBase, kAvx2, kAvx512, kAvx512Bf16 };

// The widest build the plugin's ISA allows (dlrt_plugin's avx2 / onednn_avx512 / onednn_bf16).
ConvertIsa convert_isa(const dlrt_plugin& p);

// n elements; `dtype` DLRT_BF16 or DLRT_F16. Called by one thread on its chunk.
void widen_16bit(ConvertIsa isa, int32_t dtype, const uint16_t* in, float* out, size_t n);
void narrow_16bit(ConvertIsa isa, int32_t dtype, const float* in, uint16_t* out, size_t n);

}  // namespace dlrt::cpu
