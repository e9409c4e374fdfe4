// kernel_registry_test.cc: plugins/common/kernel_registry.hpp on a row type of its own: blocks
// from anywhere in a file join one table, sorted by name; lookups find exactly the names
// registered; a name registered twice is reported (each plugin then refuses to load).
#include "kernel_registry.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

struct Row {
  const char* op;
  int value;
};
using Registry = dlrt::plugin::KernelRegistry<Row, &Row::op>;

DLRT_KERNEL_ROWS(Registry, t) {
  t.push_back({"tanh", 1});
  t.push_back({"abs", 2});
}

}  // namespace

namespace another {
// A second block, in another namespace, with "abs" again.
DLRT_KERNEL_ROWS(Registry, t) {
  t.push_back({"mish", 3});
  t.push_back({"abs", 4});
}
}  // namespace another

namespace {

TEST(KernelRegistry, GathersEveryBlockSortedByName) {
  std::vector<std::string> names;
  for (const Row& r : Registry::rows()) names.push_back(r.op);
  EXPECT_EQ(names, (std::vector<std::string>{"abs", "abs", "mish", "tanh"}));
}

TEST(KernelRegistry, FindsRegisteredNamesOnly) {
  ASSERT_NE(Registry::find("mish"), nullptr);
  EXPECT_EQ(Registry::find("mish")->value, 3);
  EXPECT_EQ(Registry::find("tanh")->value, 1);
  EXPECT_EQ(Registry::find("abs")->value, 2);  // the first block's row: file order is kept
  EXPECT_EQ(Registry::find("relu"), nullptr);
  EXPECT_EQ(Registry::find(""), nullptr);
  EXPECT_EQ(Registry::find("zzz"), nullptr);
}

TEST(KernelRegistry, NamesAnOpRegisteredTwice) { EXPECT_EQ(Registry::duplicate(), "abs"); }

}  // namespace
