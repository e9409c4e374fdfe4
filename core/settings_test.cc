// Unit tests of settings.cc: precedence (API > environment > default), normalisation, and
// that a bad environment value falls back to the default instead of failing (except
// DLRT_COLLECTIVE_TIMEOUT's, which fails).
#include "settings.hpp"

#include <dlrt/dlrt.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "platform/platform.hpp"
#include "status.hpp"

namespace dlrt::core {
namespace {

struct FakeEnv {
  std::map<std::string, std::string> vars;
  EnvLookup lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

dlrt_context_options defaults() {
  dlrt_context_options o;
  dlrt_context_options_init(&o);
  return o;
}

// Path lists joined with this system's separator (':' on POSIX, ';' on Windows).
std::string path_list(std::initializer_list<const char*> parts) {
  std::string out;
  for (const char* p : parts) {
    if (!out.empty()) out += platform::kPathListSeparator;
    out += p;
  }
  return out;
}

TEST(Settings, EveryDesignVariableIsListed) {
  FakeEnv env;
  Settings s = Settings::resolve(defaults(), "/opt/dlrt/lib/dlrt/plugins", env.lookup());
  for (const char* name :
       {"DLRT_PLUGIN_PATH", "DLRT_VISIBLE_DEVICES", "DLRT_LOG_LEVEL", "DLRT_LOG_DEVICE_PLACEMENT",
        "DLRT_GPU_ALLOW_GROWTH", "DLRT_GPU_MEMORY_LIMIT_MB", "DLRT_CHECK_NUMERICS",
        "DLRT_TRACE_FILE", "DLRT_PLUGIN_OPTIONS", "CUDA_VISIBLE_DEVICES",
        "DLRT_CPU_CALIBRATE", "DLRT_COLLECTIVE_TIMEOUT"}) {
    const Setting* setting = s.find(name);
    ASSERT_NE(setting, nullptr) << name;
    EXPECT_EQ(setting->source, DLRT_SOURCE_DEFAULT) << name;
    EXPECT_FALSE(setting->help.empty()) << name;
  }
  EXPECT_EQ(s.value("DLRT_LOG_LEVEL"), "warning");
  EXPECT_EQ(s.value("DLRT_LOG_DEVICE_PLACEMENT"), "0");
  EXPECT_EQ(s.value("DLRT_PLUGIN_PATH"), "/opt/dlrt/lib/dlrt/plugins");
}

TEST(Settings, EnvironmentOverridesDefaultAndApiOverridesEnvironment) {
  FakeEnv env;
  env.vars = {{"DLRT_LOG_LEVEL", "DEBUG"},           {"DLRT_VISIBLE_DEVICES", "GPU:1"},
              {"DLRT_LOG_DEVICE_PLACEMENT", "true"}, {"DLRT_GPU_MEMORY_LIMIT_MB", "1024"},
              {"DLRT_PLUGIN_PATH", path_list({"/a", "/b"})},         {"CUDA_VISIBLE_DEVICES", "0,1"}};
  Settings s = Settings::resolve(defaults(), "/d", env.lookup());
  EXPECT_EQ(s.value("DLRT_LOG_LEVEL"), "debug");
  EXPECT_EQ(s.log_level(), DLRT_LOG_DEBUG);
  EXPECT_EQ(s.find("DLRT_LOG_LEVEL")->source, DLRT_SOURCE_ENVIRONMENT);
  EXPECT_EQ(s.value("DLRT_VISIBLE_DEVICES"), "GPU:1");
  EXPECT_EQ(s.value("DLRT_LOG_DEVICE_PLACEMENT"), "1");
  EXPECT_TRUE(s.log_device_placement());
  EXPECT_EQ(s.value("DLRT_GPU_MEMORY_LIMIT_MB"), "1024");
  EXPECT_EQ(s.value("DLRT_PLUGIN_PATH"), path_list({"/a", "/b", "/d"}));
  EXPECT_EQ(s.find("DLRT_PLUGIN_PATH")->source, DLRT_SOURCE_ENVIRONMENT);
  EXPECT_EQ(s.value("CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(s.env_plugin_path(), (std::vector<std::string>{"/a", "/b"}));

  dlrt_context_options o = defaults();
  const char* paths[] = {"/api"};
  o.plugin_paths = paths;
  o.num_plugin_paths = 1;
  o.log_level = DLRT_LOG_ERROR;
  o.visible_devices = "CPU:0";
  o.log_device_placement = 0;
  o.plugin_options = "cpu:threads=2";
  s = Settings::resolve(o, "/d", env.lookup());
  EXPECT_EQ(s.value("DLRT_LOG_LEVEL"), "error");
  EXPECT_EQ(s.find("DLRT_LOG_LEVEL")->source, DLRT_SOURCE_API);
  EXPECT_EQ(s.value("DLRT_VISIBLE_DEVICES"), "CPU:0");
  EXPECT_EQ(s.find("DLRT_VISIBLE_DEVICES")->source, DLRT_SOURCE_API);
  EXPECT_EQ(s.value("DLRT_LOG_DEVICE_PLACEMENT"), "0");
  EXPECT_EQ(s.value("DLRT_PLUGIN_OPTIONS"), "cpu:threads=2");
  EXPECT_EQ(s.value("DLRT_PLUGIN_PATH"), path_list({"/api", "/a", "/b", "/d"}));
  EXPECT_EQ(s.find("DLRT_PLUGIN_PATH")->source, DLRT_SOURCE_API);

  // search_default_paths = 0: only the API paths.
  o.search_default_paths = 0;
  s = Settings::resolve(o, "/d", env.lookup());
  EXPECT_EQ(s.value("DLRT_PLUGIN_PATH"), "/api");
  EXPECT_TRUE(s.env_plugin_path().empty());
}

TEST(Settings, BadEnvironmentValuesFallBackToDefaults) {
  FakeEnv env;
  env.vars = {{"DLRT_LOG_LEVEL", "loud"},
              {"DLRT_CHECK_NUMERICS", "maybe"},
              {"DLRT_GPU_MEMORY_LIMIT_MB", "-5"}};
  Settings s = Settings::resolve(defaults(), "/d", env.lookup());
  EXPECT_EQ(s.value("DLRT_LOG_LEVEL"), "warning");
  EXPECT_EQ(s.find("DLRT_LOG_LEVEL")->source, DLRT_SOURCE_DEFAULT);
  EXPECT_EQ(s.value("DLRT_CHECK_NUMERICS"), "0");
  EXPECT_EQ(s.find("DLRT_CHECK_NUMERICS")->source, DLRT_SOURCE_DEFAULT);
  EXPECT_EQ(s.value("DLRT_GPU_MEMORY_LIMIT_MB"), "");
}

TEST(Settings, CollectiveTimeoutIsSecondsFromTheEnvironment) {
  FakeEnv env;
  Settings s = Settings::resolve(defaults(), "/d", env.lookup());
  EXPECT_EQ(s.collective_timeout_ms(), 300000);
  EXPECT_EQ(s.value("DLRT_COLLECTIVE_TIMEOUT"), "300");
  EXPECT_EQ(s.find("DLRT_COLLECTIVE_TIMEOUT")->source, DLRT_SOURCE_DEFAULT);

  env.vars = {{"DLRT_COLLECTIVE_TIMEOUT", "0.25"}};
  s = Settings::resolve(defaults(), "/d", env.lookup());
  EXPECT_EQ(s.collective_timeout_ms(), 250);
  EXPECT_EQ(s.value("DLRT_COLLECTIVE_TIMEOUT"), "0.25");
  EXPECT_EQ(s.find("DLRT_COLLECTIVE_TIMEOUT")->source, DLRT_SOURCE_ENVIRONMENT);

  env.vars = {{"DLRT_COLLECTIVE_TIMEOUT", "45"}};
  EXPECT_EQ(Settings::resolve(defaults(), "/d", env.lookup()).collective_timeout_ms(), 45000);
}

// Unlike the other variables, a bad timeout fails (settings.hpp: a bound on failures must not
// silently become another one).
TEST(Settings, BadCollectiveTimeoutIsAnErrorNamingTheVariable) {
  for (const char* bad : {"0", "-3", "ten", "5s", " 5", "nan", "inf", "1e10"}) {
    FakeEnv env;
    env.vars = {{"DLRT_COLLECTIVE_TIMEOUT", bad}};
    try {
      Settings::resolve(defaults(), "/d", env.lookup());
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT) << bad;
      EXPECT_NE(e.message().find("DLRT_COLLECTIVE_TIMEOUT='"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("seconds > 0"), std::string::npos) << e.message();
    }
  }
}

TEST(Settings, Helpers) {
  EXPECT_EQ(parse_bool("ON"), true);
  EXPECT_EQ(parse_bool("no"), false);
  EXPECT_EQ(parse_bool("2"), std::nullopt);
  EXPECT_EQ(split_nonempty("a::b:", ':'), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(split_nonempty("", ':').empty());
  EXPECT_EQ(parse_timeout_seconds("1.5"), 1500);
  EXPECT_EQ(parse_timeout_seconds("0.0001"), 1);  // rounded up to the smallest wait
  EXPECT_EQ(parse_timeout_seconds("1e3"), 1000000);
  EXPECT_EQ(parse_timeout_seconds(""), std::nullopt);
  EXPECT_EQ(parse_timeout_seconds("-1"), std::nullopt);
}

}  // namespace
}  // namespace dlrt::core
