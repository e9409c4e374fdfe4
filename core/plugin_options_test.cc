// Unit tests of parse_plugin_options (plugin_options.cc): "cpu:threads=2;reference:num_devices=3".
#include <gtest/gtest.h>

#include "plugin_options.hpp"
#include "status.hpp"

namespace dlrt::core {
namespace {

TEST(PluginOptions, ParsesItemsPerPlugin) {
  PluginOptions o =
      parse_plugin_options(" cpu:threads=2; reference:num_devices=3;reference:ops=add ;");
  ASSERT_EQ(o.size(), 2u);
  ASSERT_EQ(o["cpu"].size(), 1u);
  EXPECT_EQ(o["cpu"][0], (std::pair<std::string, std::string>{"threads", "2"}));
  ASSERT_EQ(o["reference"].size(), 2u);
  EXPECT_EQ(o["reference"][1].first, "ops");
  EXPECT_TRUE(parse_plugin_options("").empty());
  EXPECT_EQ(parse_plugin_options("x:k=")["x"][0].second, "");
}

TEST(PluginOptions, MalformedItemsAreInvalidArgumentNamingTheItem) {
  for (const char* bad : {"threads=2", "cpu:threads", ":threads=2", "cpu:=2", "cpu=x:y"}) {
    try {
      parse_plugin_options(bad);
      ADD_FAILURE() << bad << " parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
      EXPECT_NE(e.message().find("<plugin>:<key>=<value>"), std::string::npos) << e.message();
    }
  }
  EXPECT_THROW(parse_plugin_options("cpu:a=1;cpu:a=2"), Error);
}

}  // namespace
}  // namespace dlrt::core
