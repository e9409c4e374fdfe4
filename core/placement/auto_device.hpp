// auto_device.hpp: compile's auto device (dlrt_compile_options.auto_device = 1, nn's
// CompileConfig device "auto"): one device for everything the program did not place itself,
// chosen by what the model needs, not by what devices claim.
//
// The rule (by what each device runs, so a plugin that claims 2^62 bytes but declines every op
// is never picked for its device class or its claims):
//   1. candidates are the devices automatic placement may pick (SupportOracle::automatic: the
//      reference oracle only when named), in priority order (GPU, ACCEL, CPU, other);
//   2. each candidate counts the executable's ops (op nodes and variables' init ops) its
//      plugin's op_supported accepts;
//   3. the pick is the candidate that runs the most, ties going to priority order, so a
//      device that runs all of them beats any that does not, and a GPU that runs all beats a
//      CPU that runs all.
// Ops the pick cannot run still go by priority to a device that can (soft placement), as a
// TensorFlow device scope does; ops with their own request keep it.
//
// The choice is logged: every plugin that was not loaded (warning: its devices were not
// candidates), every device left out as the oracle (info), then the pick and why. The pick's
// line is a warning when it passed over a higher-ranked candidate or runs only some ops (the
// user should know a GPU was not used), info otherwise. `summary` is that line, for callers
// (dlrt_executable_auto_device).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "placement/support.hpp"

namespace dlrt::core::placement {

struct AutoDevice {
  size_t device = 0;    // registry index
  size_t runs = 0;      // ops of the executable it runs
  size_t ops = 0;       // ops of the executable
  std::string summary;  // "picked /device:CPU:0 (plugin cpu): it runs all 12 ops; ..."
};

// nullopt when there is no candidate at all (then placement's own errors say why, per op).
std::optional<AutoDevice> choose_auto_device(const Graph& graph, SupportOracle& oracle,
                                             const std::vector<NodeId>& needed);

}  // namespace dlrt::core::placement
