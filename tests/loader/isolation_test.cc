// isolation_test.cc: hostile plugins (segfault, abort, exit, hang in dlrt_plugin_init) are
// reported, not fatal, when dlrt_context_options.isolate_plugins is on; the good plugin next
// to them still loads; and every load phase is announced at info level, so that without
// isolation the last log line names the plugin that took the process down.
#include <dlrt/dlrt.h>
#include <gtest/gtest.h>

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace {

using dlrt::testing::case_dir;
using dlrt::testing::case_file;
using dlrt::testing::Result;
using dlrt::testing::take;

// A context over `dirs` with isolation on (timeout_s for the child) or off.
struct IsolatedCtx {
  IsolatedCtx(const std::vector<std::string>& dirs, int32_t isolate, double timeout_s) {
    for (const auto& d : dirs) ptrs.push_back(d.c_str());
    dlrt_context_options o;
    dlrt_context_options_init(&o);
    o.plugin_paths = ptrs.data();
    o.num_plugin_paths = ptrs.size();
    o.search_default_paths = 0;
    o.isolate_plugins = isolate;
    o.isolate_timeout_s = timeout_s;
    status = take(dlrt_context_create(&o, &ctx));
  }
  ~IsolatedCtx() { dlrt_context_destroy(ctx); }
  dlrt_plugin_info plugin(size_t i) const {
    dlrt_plugin_info info{};
    info.struct_size = DLRT_STRUCT_SIZE(dlrt_plugin_info);
    Result r = take(dlrt_context_plugin_info(ctx, i, &info));
    EXPECT_EQ(r.code, DLRT_OK) << r.message;
    return info;
  }
  std::vector<const char*> ptrs;
  dlrt_context* ctx = nullptr;
  Result status{DLRT_OK, ""};
};

struct Hostile {
  const char* dir;
  dlrt_code code;
  const char* says;  // in the recorded error
};

// So CTest's test names show the case, not the struct's bytes.
void PrintTo(const Hostile& h, std::ostream* os) { *os << h.dir; }

class Isolation : public ::testing::TestWithParam<Hostile> {};

TEST_P(Isolation, HostilePluginIsReportedAndTheGoodOneStillLoads) {
  const Hostile& h = GetParam();
  const auto t0 = std::chrono::steady_clock::now();
  IsolatedCtx c({case_dir(h.dir), case_dir("good")}, 1, 1.0);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(c.status.code, DLRT_OK) << c.status.message;
  ASSERT_EQ(dlrt_context_plugin_count(c.ctx), 2u);
  dlrt_plugin_info bad = c.plugin(0);
  EXPECT_EQ(bad.state, DLRT_PLUGIN_FAILED);
  EXPECT_EQ(bad.phase, DLRT_PHASE_ABI);
  EXPECT_EQ(bad.error_code, h.code);
  const std::string error = bad.error;
  EXPECT_NE(error.find(case_file(h.dir)), std::string::npos) << error;
  EXPECT_NE(error.find(h.says), std::string::npos) << error;
  EXPECT_NE(error.find("checked in a child process"), std::string::npos) << error;
  EXPECT_EQ(c.plugin(1).state, DLRT_PLUGIN_LOADED) << c.plugin(1).error;
  EXPECT_LT(took, 5.0) << "the hang must end at the 1 s timeout";
}

INSTANTIATE_TEST_SUITE_P(
    HostileInit, Isolation,
    ::testing::Values(Hostile{"init_segfault", DLRT_INTERNAL, "crashed with SIGSEGV in init"},
                      Hostile{"init_abort", DLRT_INTERNAL, "crashed with SIGABRT in init"},
                      Hostile{"init_exit", DLRT_INTERNAL, "exited with status 3 in init"},
                      Hostile{"init_hang", DLRT_DEADLINE_EXCEEDED,
                              "did not return from init within 1.0 s"}),
    [](const ::testing::TestParamInfo<Hostile>& info) { return std::string(info.param.dir); });

// A plugin whose init fails politely is still reported by the in-process load, with its own
// message: the child's check passes it on.
TEST(IsolationPolite, InitErrorKeepsThePluginsOwnMessage) {
  IsolatedCtx c({case_dir("init_error")}, 1, 5.0);
  ASSERT_EQ(c.status.code, DLRT_OK) << c.status.message;
  dlrt_plugin_info info = c.plugin(0);
  EXPECT_EQ(info.state, DLRT_PLUGIN_FAILED);
  EXPECT_NE(std::string(info.error).find("refuses to start"), std::string::npos) << info.error;
}

TEST(IsolationOptions, BadValuesAreRefusedByName) {
  IsolatedCtx bad_flag({case_dir("good")}, 2, 0);
  EXPECT_EQ(bad_flag.status.code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(bad_flag.status.message.find("options.isolate_plugins is 2"), std::string::npos)
      << bad_flag.status.message;
  IsolatedCtx bad_timeout({case_dir("good")}, 1, -1);
  EXPECT_EQ(bad_timeout.status.code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(bad_timeout.status.message.find("options.isolate_timeout_s is -1"), std::string::npos)
      << bad_timeout.status.message;
}

// Without isolation the segfaulting plugin takes the process down, but the info log said
// which plugin, in which phase, just before.
TEST(IsolationOffDeathTest, SegfaultKillsTheHostButTheLogNamesThePlugin) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string file = case_file("init_segfault");
  EXPECT_DEATH(
      {
        dlrt::testing::EnvGuard env;
        env.set("DLRT_LOG_LEVEL", "info");
        IsolatedCtx c({case_dir("init_segfault")}, 0, 0);
      },
      "loading " + file + ": dlrt_plugin_init");
}

}  // namespace
