// memory_plan.hpp: where each value of one device lives inside that device's arena block.
//
// The executor gives every non-variable value of a step a buffer, but two values whose
// lifetimes do not overlap can use the same bytes. A lifetime is the closed interval
// [first, last] of step positions: `first` is where the value is written, `last` the last
// step that reads it. plan_memory packs the intervals into one block greedily, largest first
// (TensorFlow Lite's arena planner, "greedy by size"): each value takes the lowest offset at
// which it overlaps no already-placed value that is alive at the same time.
//
// Pure arithmetic, no device: the executor allocates one Buffer of `total` bytes per device
// at compile time and hands kernels base + offset.
#pragma once

#include <cstddef>
#include <vector>

namespace dlrt::core::exec {

struct Lifetime {
  size_t bytes = 0;  // > 0
  size_t first = 0;  // step that writes it
  size_t last = 0;   // last step that reads it (>= first)
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // one per Lifetime, multiples of `alignment`
  size_t total = 0;             // bytes of the block (0 when there are no values)
};

// Alignment 256 suits every plugin (cuBLAS/cuDNN want 256, oneDNN 64).
constexpr size_t kPlanAlignment = 256;

MemoryPlan plan_memory(const std::vector<Lifetime>& values, size_t alignment = kPlanAlignment);

}  // namespace dlrt::core::exec
