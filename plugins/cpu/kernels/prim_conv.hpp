// prim_conv.hpp: the convolution family's kernel factory (prim_conv.cc), for the calibration
// (calibration.cc), which times the kernels it makes under different plugin flags.
#pragma once

#include <memory>

#include "../ops.hpp"

namespace dlrt::cpu::prim {

// The kernel conv_check accepted `op` for: dlrt's one-channel or Winograd kernels, or oneDNN's
// primitives, as the plugin's flags and kernel choices say (prim_conv.cc's file comment).
std::unique_ptr<Kernel> conv_create(const dlrt_plugin& p, const plugin::OpView& op);

}  // namespace dlrt::cpu::prim
