// plugin_call_test.cc: plugin_call.hpp, the one helper through which the core calls a plugin
// entry: a status becomes a value or an Error prefixed with what we were doing, an exception
// from a (broken) plugin becomes INTERNAL, and a callable message is built only on failure.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "plugin_call.hpp"
#include "status.hpp"

namespace {

using dlrt::core::Error;
using dlrt::core::plugin_call;
using dlrt::core::plugin_status;

dlrt_status* ok_entry() { return nullptr; }
dlrt_status* failing_entry() { return dlrt_status_create(DLRT_UNAVAILABLE, "no device"); }

TEST(PluginCall, StatusIsTakenAsAValue) {
  EXPECT_TRUE(plugin_status("entry", ok_entry).ok());
  auto s = plugin_status("entry", failing_entry);
  EXPECT_EQ(s.code, DLRT_UNAVAILABLE);
  EXPECT_EQ(s.message, "no device");
}

TEST(PluginCall, ExceptionsBecomeInternalNamingTheEntry) {
  auto s = plugin_status("mem_alloc", []() -> dlrt_status* { throw std::runtime_error("boom"); });
  EXPECT_EQ(s.code, DLRT_INTERNAL);
  EXPECT_NE(s.message.find("mem_alloc threw a C++ exception (boom)"), std::string::npos)
      << s.message;
  s = plugin_status("kernel_run", []() -> dlrt_status* { throw 42; });
  EXPECT_EQ(s.code, DLRT_INTERNAL);
  EXPECT_NE(s.message.find("kernel_run threw an exception"), std::string::npos) << s.message;
}

TEST(PluginCall, ErrorsArePrefixedAndLazyMessagesBuiltOnlyOnFailure) {
  int built = 0;
  auto what = [&] {
    ++built;
    return std::string("conv2d on /device:CPU:0");
  };
  plugin_call(what, ok_entry);
  EXPECT_EQ(built, 0);
  try {
    plugin_call(what, failing_entry);
    FAIL() << "plugin_call did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), DLRT_UNAVAILABLE);
    EXPECT_EQ(e.message(), "conv2d on /device:CPU:0: no device");
  }
  EXPECT_EQ(built, 1);
  try {
    plugin_call("copying", failing_entry);
    FAIL() << "plugin_call did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "copying: no device");
  }
}

}  // namespace
