// cxx_api_test.cc: dlrt.hpp compiles warning-free (-Wall -Wextra -Werror -pedantic) and its
// one-call-per-method wrappers behave as the C API they wrap: contexts are created and
// moved, errors arrive as dlrt::Error with the C status's code and message, and the options
// builder reaches libdlrt (the settings report "api" as their source).
//
// It runs against the real libdlrt and the plugins of this build tree
// (DLRT_TEST_PLUGIN_DIR), but asserts nothing about which devices the machine has.
#include <dlrt/dlrt.hpp>
#include <dlrt/plugin.h>  // DLRT_ABI_MAJOR/MINOR, to compare with what libdlrt reports

#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <utility>

namespace {

static_assert(!std::is_copy_constructible_v<dlrt::Context>, "Context owns its handle");
static_assert(std::is_nothrow_move_constructible_v<dlrt::Context>, "Context moves cheaply");

TEST(CxxApi, CheckPassesOkAndThrowsErrorWithCodeAndMessage) {
  EXPECT_NO_THROW(dlrt::check(nullptr));
  try {
    dlrt::check(dlrt_status_create(DLRT_NOT_FOUND, "no such thing"));
    FAIL() << "check did not throw";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_NOT_FOUND);
    EXPECT_EQ(e.message(), "no such thing");
    EXPECT_STREQ(e.what(), "NOT_FOUND: no such thing");
  }
}

TEST(CxxApi, VersionsComeFromTheLibrary) {
  EXPECT_FALSE(dlrt::version().empty());
  const dlrt::AbiVersion abi = dlrt::abi_version();
  EXPECT_EQ(abi.major, static_cast<uint32_t>(DLRT_ABI_MAJOR));
  EXPECT_EQ(abi.minor, static_cast<uint32_t>(DLRT_ABI_MINOR));
  EXPECT_LE(abi.floor, abi.minor);
}

TEST(CxxApi, ContextIsCreatedAndMovedNotCopied) {
  dlrt::Context context;
  ASSERT_TRUE(context);
  const size_t plugins = context.plugin_count();
  EXPECT_EQ(context.plugins().size(), plugins);
  EXPECT_EQ(context.devices().size(), context.device_count());

  dlrt::Context moved(std::move(context));
  EXPECT_FALSE(context);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved.plugin_count(), plugins);
}

TEST(CxxApi, ReleasedHandleIsAdoptedBack) {
  dlrt::Context context;
  dlrt_context* raw = context.release();
  ASSERT_NE(raw, nullptr);
  EXPECT_FALSE(context);
  dlrt::Context adopted(raw);  // destroys it at scope exit
  EXPECT_EQ(adopted.get(), raw);
}

TEST(CxxApi, OnlyGivenPluginPathsAreSearchedWhenDefaultsAreOff) {
  dlrt::Context none(dlrt::ContextOptions().search_default_paths(false));
  EXPECT_EQ(none.plugin_count(), 0u);
  EXPECT_EQ(none.device_count(), 0u);

  dlrt::Context given(dlrt::ContextOptions().search_default_paths(false).plugin_path(
      DLRT_TEST_PLUGIN_DIR "/libdlrt-reference.so"));
  ASSERT_EQ(given.plugin_count(), 1u);
  const dlrt::PluginInfo p = given.plugin(0);
  EXPECT_EQ(p.name, "reference");
  EXPECT_TRUE(p.loaded()) << p.error;
  EXPECT_EQ(dlrt::plugin_state_name(p.state), "loaded");
  EXPECT_NE(p.path.find("libdlrt-reference.so"), std::string::npos);
}

TEST(CxxApi, OutOfRangeIndexIsAnError) {
  dlrt::Context context(dlrt::ContextOptions().search_default_paths(false));
  try {
    context.plugin(0);
    FAIL() << "plugin(0) of an empty context did not throw";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_OUT_OF_RANGE) << e.what();
  }
  EXPECT_THROW(context.device(0), dlrt::Error);
  EXPECT_THROW(context.device_memory_free(0), dlrt::Error);
}

TEST(CxxApi, MissingDeviceIsNotFoundNamingTheSpec) {
  dlrt::Context context;
  try {
    context.find_device("GPU:97");
    FAIL() << "find_device(GPU:97) did not throw";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_NOT_FOUND);
    EXPECT_NE(e.message().find("GPU:97"), std::string::npos) << e.message();
  }
}

TEST(CxxApi, FoundDeviceIsTheOneAtThatIndex) {
  dlrt::Context context(dlrt::ContextOptions().plugin_path(DLRT_TEST_PLUGIN_DIR));
  if (context.device_count() == 0) GTEST_SKIP() << "no device loaded";
  const dlrt::DeviceInfo first = context.device(0);
  const size_t index = context.find_device(first.name);
  EXPECT_EQ(context.device(index).name, first.name);
  EXPECT_NO_THROW(context.device_memory_free(index));
}

TEST(CxxApi, DeviceSpecParsesAndFormatsThroughTheLibrary) {
  const dlrt::DeviceSpec spec = dlrt::DeviceSpec::parse("gpu:1");
  EXPECT_EQ(spec.type, "GPU");
  EXPECT_EQ(spec.index, 1);
  EXPECT_EQ(spec.job, "");
  EXPECT_EQ(spec.replica, -1);
  EXPECT_EQ(spec.to_string(), "/job:localhost/replica:0/task:0/device:GPU:1");

  const dlrt::DeviceSpec full =
      dlrt::DeviceSpec::parse("/job:worker/replica:2/task:3/device:CPU:4");
  EXPECT_EQ(full.job, "worker");
  EXPECT_EQ(full.replica, 2);
  EXPECT_EQ(full.task, 3);
  EXPECT_EQ(dlrt::DeviceSpec::parse(full.to_string()).to_string(), full.to_string());
}

TEST(CxxApi, MalformedDeviceSpecIsInvalidArgument) {
  try {
    dlrt::DeviceSpec::parse("/device:GPU:zero");
    FAIL() << "parse did not throw";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_FALSE(e.message().empty());
  }
}

TEST(CxxApi, OptionsReachTheLibrary) {
  dlrt::Context context(dlrt::ContextOptions()
                            .log_level(DLRT_LOG_ERROR)
                            .visible_devices("CPU")
                            .soft_placement(false));
  bool saw_log_level = false;
  for (const dlrt::Setting& s : context.settings()) {
    if (s.name == "DLRT_LOG_LEVEL") {
      saw_log_level = true;
      EXPECT_EQ(s.source, DLRT_SOURCE_API) << s.value;
    }
    if (s.name == "DLRT_VISIBLE_DEVICES") {
      EXPECT_EQ(s.source, DLRT_SOURCE_API) << s.value;
    }
  }
  EXPECT_TRUE(saw_log_level);
  for (const dlrt::DeviceInfo& d : context.devices()) EXPECT_EQ(d.type, "CPU") << d.name;
}

}  // namespace
