// conv_one_channel.hpp: convolutions of images with one input channel (a grayscale network's
// first layer: the reference CNN's conv1, (64,28,28,1) * (3,3,1,32)), forward and filter
// gradient, NHWC, f32 or bf16 storage, as loops (conv_one_channel.cc says why and how).
// prim_conv.cc sends such ops here when one_channel_fits says so.
#pragma once

#include <cstdint>
#include <memory>

#include "../ops.hpp"

namespace dlrt::cpu::conv1ch {

// The forward convolution a pass is about: x (n,h,w,1) * w (kh,kw,1,co) -> y (n,oh,ow,co), any
// stride, dilation and padding (the windows say), no groups.
struct Geometry {
  plugin::ImageShape x, y;  // NHWC; x.c == 1, y.c == co
  plugin::Window1D h, w;    // along rows and columns: taps, stride, dilation, padding
};

// Shapes these kernels take: NHWC, one input channel, output channels a multiple of 16 (whole
// vectors on every ISA), at most kMaxTaps taps.
constexpr int64_t kMaxTaps = 49;  // up to 7x7
bool fits(const Geometry& g);

// conv2d / conv2d_bias_act (bias: input 2; relu: the activation) x, w[, b] -> y, or
// conv2d_backward_filter (filter) x, dy -> dw. bf16: every operand bf16 (the arithmetic stays
// f32; outputs rounded once), else f32. The build is chosen for the CPU: AVX-512 where oneDNN's
// effective ISA has it, else AVX2 + FMA where the loops use AVX2, else the portable one.
std::unique_ptr<Kernel> make_forward(const dlrt_plugin& p, const Geometry& g, bool bias, bool relu,
                                     bool bf16);
std::unique_ptr<Kernel> make_filter_grad(const dlrt_plugin& p, const Geometry& g, bool bf16);

}  // namespace dlrt::cpu::conv1ch
