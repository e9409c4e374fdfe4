// memory_plan.cc: greedy-by-size interval packing (see memory_plan.hpp).
#include "exec/memory_plan.hpp"

#include <algorithm>
#include <numeric>

namespace dlrt::core::exec {

namespace {
size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }
bool overlap_in_time(const Lifetime& a, const Lifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}
}  // namespace

MemoryPlan plan_memory(const std::vector<Lifetime>& values, size_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(values.size(), 0);
  // Largest first; ties by earlier definition, so the result does not depend on sort details.
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (values[a].bytes != values[b].bytes) return values[a].bytes > values[b].bytes;
    return values[a].first < values[b].first;
  });

  std::vector<size_t> placed;  // indices already given an offset, sorted by offset
  for (size_t v : order) {
    const size_t bytes = round_up(values[v].bytes, alignment);
    // Walk the live neighbours in offset order and take the first gap that fits.
    size_t offset = 0;
    for (size_t p : placed) {
      if (!overlap_in_time(values[v], values[p])) continue;
      const size_t p_end = plan.offsets[p] + round_up(values[p].bytes, alignment);
      if (plan.offsets[p] >= offset + bytes) break;  // the gap before p fits
      offset = std::max(offset, p_end);
    }
    plan.offsets[v] = offset;
    plan.total = std::max(plan.total, offset + bytes);
    placed.insert(
        std::upper_bound(placed.begin(), placed.end(), v,
                         [&](size_t a, size_t b) { return plan.offsets[a] < plan.offsets[b]; }),
        v);
  }
  return plan;
}

}  // namespace dlrt::core::exec
