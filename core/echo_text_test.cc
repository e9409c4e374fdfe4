// echo_text_test.cc: messages that echo input quote at most kEchoMaxChars of it, so a huge
// input never becomes a huge error message or log line: the helper itself, then a 1 MB device
// spec, plugin option string and settings value through the real parsers, and strtoull's
// overflow in a settings value.
#include "echo_text.hpp"

#include <dlrt/dlrt.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "device_spec.hpp"
#include "plugin_loader.hpp"
#include "settings.hpp"
#include "status.hpp"

namespace dlrt::core {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kMegabyte(size_t{1} << 20, 'x');

TEST(EchoText, ShortTextIsKeptWhole) {
  EXPECT_EQ(truncated_for_message("GPU:0"), "GPU:0");
  EXPECT_EQ(truncated_for_message(std::string(kEchoMaxChars, 'a')),
            std::string(kEchoMaxChars, 'a'));
}

TEST(EchoText, LongTextIsCutAndSaysHowLongItWas) {
  const std::string out = truncated_for_message(kMegabyte);
  EXPECT_EQ(out, std::string(kEchoMaxChars, 'x') + "... (1048576 bytes in all)");
}

TEST(EchoText, CutNeverSplitsAUtf8Character) {
  // 199 ASCII bytes, then "×" (2 bytes) straddling the 200-byte cut.
  const std::string text = std::string(199, 'a') + "×" + std::string(50, 'b');
  EXPECT_EQ(truncated_for_message(text), std::string(199, 'a') + "... (251 bytes in all)");
}

// The message of the core::Error `f` throws.
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(EchoText, HugeDeviceSpecIsNotRepeatedInFull) {
  const std::string msg = error_of([] { parse_device_spec("/" + kMegabyte); });
  EXPECT_THAT(msg, HasSubstr("bad device spec"));
  EXPECT_THAT(msg, HasSubstr("bytes in all)"));
  EXPECT_LT(msg.size(), 2000u) << msg.substr(0, 300);
}

TEST(EchoText, HugePluginOptionsAreNotRepeatedInFull) {
  const std::string msg = error_of([] { parse_plugin_options(kMegabyte); });
  EXPECT_THAT(msg, HasSubstr("bad plugin option"));
  EXPECT_LT(msg.size(), 2000u) << msg.substr(0, 300);
}

struct FakeEnv {
  std::map<std::string, std::string> vars;
  EnvLookup lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

// The warnings resolve() logs for `env` (the logger writes to stderr).
std::string warnings_for(const FakeEnv& env, std::string* limit_value = nullptr) {
  dlrt_context_options o;
  dlrt_context_options_init(&o);
  ::testing::internal::CaptureStderr();
  Settings s = Settings::resolve(o, "/opt/dlrt/lib/dlrt/plugins", env.lookup());
  if (limit_value != nullptr) *limit_value = s.value("DLRT_GPU_MEMORY_LIMIT_MB");
  return ::testing::internal::GetCapturedStderr();
}

TEST(EchoText, HugeSettingsValueIsCutInTheWarning) {
  FakeEnv env;
  env.vars["DLRT_CHECK_NUMERICS"] = kMegabyte;
  const std::string log = warnings_for(env);
  EXPECT_THAT(log, HasSubstr("is not a boolean"));
  EXPECT_LT(log.size(), 2000u);
}

TEST(SettingsOverflow, StrtoullOverflowIsDetectedNotShownAsTheMaximum) {
  FakeEnv env;
  env.vars["DLRT_GPU_MEMORY_LIMIT_MB"] = "99999999999999999999999";
  std::string value;
  const std::string log = warnings_for(env, &value);
  EXPECT_EQ(value, "");  // no limit, as for any other bad value
  EXPECT_THAT(log, HasSubstr("DLRT_GPU_MEMORY_LIMIT_MB='99999999999999999999999' is larger than "
                             "the largest 64-bit value"));
  EXPECT_THAT(log, Not(HasSubstr("='18446744073709551615'")));
}

}  // namespace
}  // namespace dlrt::core
