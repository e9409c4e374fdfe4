// memory_plan_test.cc: liveness packing — disjoint lifetimes share bytes, overlapping ones
// never do, offsets are aligned, and the total is no larger than needed for simple chains.
#include "exec/memory_plan.hpp"

#include <gtest/gtest.h>

namespace dlrt::core::exec {
namespace {

bool bytes_overlap(const MemoryPlan& p, const std::vector<Lifetime>& v, size_t a, size_t b) {
  return p.offsets[a] < p.offsets[b] + v[b].bytes && p.offsets[b] < p.offsets[a] + v[a].bytes;
}

TEST(MemoryPlan, ChainReusesMemory) {
  // a -> b -> c -> d, each read only by the next: two buffers suffice.
  std::vector<Lifetime> v = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 3}};
  MemoryPlan p = plan_memory(v);
  EXPECT_EQ(p.total, 2 * 1024u);
  EXPECT_EQ(p.offsets[0], p.offsets[2]);
  EXPECT_EQ(p.offsets[1], p.offsets[3]);
}

TEST(MemoryPlan, LiveValuesNeverShare) {
  std::vector<Lifetime> v = {{300, 0, 5}, {700, 1, 2}, {100, 2, 4}, {900, 3, 6},
                             {50, 6, 6},  {256, 0, 0}, {1, 4, 5}};
  MemoryPlan p = plan_memory(v);
  for (size_t a = 0; a < v.size(); ++a) {
    EXPECT_EQ(p.offsets[a] % kPlanAlignment, 0u);
    EXPECT_LE(p.offsets[a] + v[a].bytes, p.total);
    for (size_t b = a + 1; b < v.size(); ++b) {
      bool live_together = v[a].first <= v[b].last && v[b].first <= v[a].last;
      if (live_together) EXPECT_FALSE(bytes_overlap(p, v, a, b)) << a << " and " << b;
    }
  }
}

TEST(MemoryPlan, FillsGapsBetweenLiveValues) {
  // Big values A [0,10] and B [0,10] stay apart; a small one alive at the same time goes
  // after them, while one alive only later reuses A's bytes.
  std::vector<Lifetime> v = {{512, 0, 10}, {512, 0, 4}, {256, 5, 10}, {256, 2, 3}};
  MemoryPlan p = plan_memory(v);
  EXPECT_EQ(p.offsets[2], p.offsets[1]);  // B is dead by step 5
  EXPECT_EQ(p.total, 1280u);
}

TEST(MemoryPlan, Empty) {
  MemoryPlan p = plan_memory({});
  EXPECT_EQ(p.total, 0u);
  EXPECT_TRUE(p.offsets.empty());
}

}  // namespace
}  // namespace dlrt::core::exec
