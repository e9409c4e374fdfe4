// kernel_choices.hpp: which kernel the cpu plugin runs where it has one of its own and oneDNN
// has another for the same op, decided by measurement on this CPU (calibration.cc) rather than
// by its ISA flags alone.
//
// Today the one such choice is dlrt's Winograd F(4x4, 3x3) convolution
// (kernels/winograd_conv.hpp) against oneDNN's direct kernels, for 3x3 stride-1 NHWC
// convolutions whose channel counts are multiples of 16. A fixed cost rule (wino::worth_it:
// enough tiles to pay for the transforms) says where Winograd *can* pay; whether it does
// depends on the CPU (the AVX2 build lost the forward pass to oneDNN on a Zen 5 EPYC and won it
// on a Zen 3 one), so the calibration times both kernels per pass at two channel counts and
// keeps the winner. The rule still applies on top: a measured win at 32x32 images does not
// make Winograd pay on a 2x2 one.
//
// Owned by dlrt_plugin (cpu.hpp), filled once in plugin_create and read-only afterwards, so
// kernel creation on any thread may read it.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace dlrt::cpu {

// The passes with a choice. conv2d_backward (both gradients in one op) runs Winograd's shared
// sweep only where both its parts would run Winograd.
enum class ChoicePass { forward = 0, backward_data = 1, backward_filter = 2 };
inline constexpr int kChoicePasses = 3;
const char* choice_pass_name(ChoicePass pass);

// Channel-pair classes (ci x co): few (up to kFewPairsMax) are measured at 16 -> 16 channels,
// many at 64 -> 64; a convolution takes the verdict of the class it falls in (the nearer of
// the two measured shapes, on a log scale: 1024 is the geometric mean of 256 and 4096).
inline constexpr int64_t kFewPairsMax = 1024;
inline constexpr int kPairClasses = 2;
const char* pair_class_name(int pair_class);
inline int pair_class_of(int64_t pairs) { return pairs <= kFewPairsMax ? 0 : 1; }

struct WinogradVerdict {
  bool measured = false;  // false: no measurement, the rule's default (Winograd where it applies)
  bool dlrt_wins = true;  // dlrt's Winograd runs: it was faster, or a tie (below)
  bool tie = false;       // within 5%, or the two rounds disagreed: the rule's choice stands
  double dlrt_us = 0;     // the best of the timed runs of each kernel, microseconds
  double onednn_us = 0;
};

struct KernelChoices {
  std::array<std::array<WinogradVerdict, kPairClasses>, kChoicePasses> winograd{};
  // How the verdicts came: "measured in 0.31 s on 2 threads, cached in <path>", "from the
  // cache <path> (measured 2026-12-08T01:02:03Z)", "skipped (DLRT_CPU_CALIBRATE=skip): the
  // rules' defaults", ... (calibration.cc). The device attribute `calibration`.
  std::string source = "not calibrated: the rules' defaults";

  // Whether dlrt's Winograd may run this pass for a convolution of `pairs` channel pairs (the
  // shape rules in prim_conv.cc still apply): the verdict of its class; true unmeasured.
  bool winograd_allowed(ChoicePass pass, int64_t pairs) const {
    const WinogradVerdict& v = winograd[static_cast<int>(pass)][pair_class_of(pairs)];
    return !v.measured || v.dlrt_wins;
  }

  // One line per measured choice, "; "-separated, e.g. "conv3x3 forward, <= 1024 channel
  // pairs: dlrt winograd, 212 us against oneDNN direct 355 us"; "" when nothing was measured.
  // The device attribute `kernel_choices`, which dlprobe lists under the device.
  std::string describe() const;
};

}  // namespace dlrt::cpu
