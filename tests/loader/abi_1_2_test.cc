// abi_1_2_test.cc: ABI 1.2 appended dlrt_op_desc.op_version (sdk/CHANGELOG.md).
//
//   - a plugin built against 1.1 (test_plugin.cc's CASE_MINOR_1, which reads op descriptors
//     only as 1.1 laid them out) still loads and is asked about ops under the 1.2 host;
//   - the op's version from the core's op schema reaches a 1.2 plugin (CASE_OP_VERSION
//     declines every op with a reason that echoes the op_version and struct_size it got).
#include <dlrt/dlrt.hpp>
#include <dlrt/plugin.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "test_util.hpp"

namespace {

using dlrt::testing::case_dir;

dlrt::Context context_for(const std::string& test_case) {
  return dlrt::Context(dlrt::ContextOptions()
                           .plugin_path(case_dir(test_case))
                           .search_default_paths(false)
                           .visible_devices("")
                           .plugin_options(""));
}

TEST(Abi11Plugin, LoadsUnderThe12HostAndIsAskedAboutOps) {
  dlrt::Context ctx = context_for("minor_1");
  ASSERT_EQ(ctx.plugin_count(), 1u);
  EXPECT_EQ(ctx.plugin(0).abi_minor, 1u);
  EXPECT_EQ(ctx.plugin(0).state, DLRT_PLUGIN_LOADED);
  ASSERT_EQ(ctx.device_count(), 2u);
  // Its own answer, read from the 1.1 part of the descriptor: relu's name and 1 input.
  const dlrt::OpSupport s = ctx.op_probe("relu", 0);
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("loader_minor_1 (ABI 1.1) saw relu with 1 inputs"), std::string::npos)
      << s.reason;
}

TEST(Abi12Plugin, TheOpVersionOfTheSchemaReachesThePlugin) {
  dlrt::Context ctx = context_for("op_version");
  ASSERT_EQ(ctx.plugin_count(), 1u);
  EXPECT_EQ(ctx.plugin(0).abi_minor, uint32_t{DLRT_ABI_MINOR});
  // adam_update is at version 2 (its learning rate became an input).
  for (auto [op, version] : {std::pair{"relu", 1}, {"conv2d", 1}, {"adam_update", 2}}) {
    const dlrt::OpSupport s = ctx.op_probe(op, 0);
    EXPECT_FALSE(s.supported);
    const std::string expected = std::string("loader_op_version saw ") + op + " op_version " +
                                 std::to_string(version) + " struct_size " +
                                 std::to_string(sizeof(dlrt_op_desc));
    EXPECT_NE(s.reason.find(expected), std::string::npos) << s.reason;
  }
}

}  // namespace
