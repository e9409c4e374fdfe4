// calibration.hpp: the cpu plugin's kernel choices (kernel_choices.hpp) measured on this CPU,
// once per CPU model, ISA, oneDNN version, plugin version and thread count, and cached in the
// user's cache folder so later processes only read a small JSON file.
//
// When: at plugin_create (build_desc), after the ISA flags are known, where a choice exists:
// dlrt's Winograd can run on this CPU and the `winograd` option is 1 (0 and 2 fix the kernel,
// so there is nothing to choose). The measurement times each contender on synthetic operands,
// interleaved so that a neighbour's burst of work slows both alike, and keeps the best run of
// each; about 0.1-0.3 s on 2 cores.
//
// Modes (plugin option `calibrate`, over the variable DLRT_CPU_CALIBRATE, over "auto"):
//   auto  use the cached verdicts for this key; measure and cache them when there are none
//   redo  measure again and replace the cached verdicts (after a BIOS, microcode or VM change)
//   skip  measure nothing, read nothing: the rules' defaults (Winograd wherever worth_it
//         admits it). Tests and comparisons between builds (tools/windows/compare-linux.sh)
//         run this way, so their kernels do not depend on timings.
//
// The cache: $XDG_CACHE_HOME/dlrt/cpu-kernel-choices.json, else ~/.cache/dlrt/..., on Windows
// %LOCALAPPDATA%\dlrt\...; one JSON object {"format": 1, "entries": {key: verdicts}}. A file
// that does not parse or has another format is replaced (with a warning naming it); one that
// cannot be written leaves the verdicts measured for this process only (also said). Written
// to a temporary file and renamed, so a concurrent reader sees the old file or the new one.
#pragma once

#include <string>

struct dlrt_plugin;

namespace dlrt::cpu {

enum class CalibrationMode { automatic, redo, skip };

// The mode from the option's value (`option`, "" when the option is absent) or else the
// variable's; INVALID_ARGUMENT naming the source and the accepted values for anything else.
CalibrationMode calibration_mode(const std::string& option);

// Fills p->choices (and its `source`) as the mode says. Needs p's engine, threads and ISA
// flags (build_desc sets them first). Never fails plugin creation: a measurement that throws
// leaves the rules' defaults and says why in `source`.
void calibrate_kernels(dlrt_plugin* p, CalibrationMode mode);

// The cache file's path for this user; "" when neither variable names a folder.
std::string calibration_cache_path();

// What the cached verdicts are filed under: CPU model, family/model/stepping, oneDNN's ISA
// and version, the plugin's version and calibration format, threads.
std::string calibration_key(const dlrt_plugin& p);

}  // namespace dlrt::cpu
