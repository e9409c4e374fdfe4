// Loader tests through libdlrt.so's C API: every purpose-built broken plugin is recorded with
// the right state, phase, code and message while a good plugin still loads beside it; the
// search order, the refusal rules (permissions, relative paths, current directory, duplicate
// names) and the C API's argument checks.
#include <dlrt/dlrt.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace dlrt::testing {
namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

void expect_good_loaded(const dlrt_plugin_info& p) {
  EXPECT_EQ(p.state, DLRT_PLUGIN_LOADED) << p.error;
  EXPECT_EQ(p.phase, DLRT_PHASE_READY) << p.error;
  EXPECT_STREQ(p.name, "loader_good");
  EXPECT_STREQ(p.platform, "loader-test");
  EXPECT_EQ(p.device_count, 2);
  EXPECT_EQ(p.error_code, DLRT_OK);
  EXPECT_STREQ(p.error, "");
}

TEST(Loader, GoodPluginLoadsWithItsDevices) {
  Ctx c({case_dir("good")});
  ASSERT_TRUE(c.ok()) << c.status.message;
  ASSERT_EQ(c.plugin_count(), 1u);
  dlrt_plugin_info p = c.plugin(0);
  expect_good_loaded(p);
  EXPECT_EQ(std::string(p.path), canonical(case_file("good")));
  EXPECT_EQ(p.abi_major, 1u);
  EXPECT_STREQ(p.version, "0.0.1");

  ASSERT_EQ(c.device_count(), 2u);
  dlrt_device_info d = c.device(1);
  EXPECT_STREQ(d.name, "/device:CPU:1");
  EXPECT_STREQ(d.full_name, "/job:localhost/replica:0/task:0/device:CPU:1");
  EXPECT_STREQ(d.type, "CPU");
  EXPECT_EQ(d.index, 1);
  EXPECT_EQ(d.device_class, DLRT_DEVICE_CLASS_CPU);
  EXPECT_STREQ(d.plugin, "loader_good");
  EXPECT_STREQ(d.platform, "loader-test");
  EXPECT_EQ(d.plugin_ordinal, 1);
  EXPECT_STREQ(d.model, "loader_good device 1");
  EXPECT_STREQ(d.vendor, "dlrt tests");
  EXPECT_STREQ(d.uuid, "");
  EXPECT_EQ(d.memory_total, 64ull << 20);
  ASSERT_EQ(d.num_attrs, 1u);
  EXPECT_STREQ(d.attrs[0]->name, "test_attr");
  EXPECT_STREQ(d.attrs[0]->s, "hello");

  uint64_t free_bytes = 0;
  Result r = take(dlrt_context_device_memory_free(c.ctx, 0, &free_bytes));
  EXPECT_EQ(r.code, DLRT_OK) << r.message;
  EXPECT_EQ(free_bytes, 64ull << 20);
}

// One broken case next to the good plugin.
struct Case {
  const char* dir;
  dlrt_plugin_state state;
  dlrt_plugin_phase phase;
  dlrt_code code;
  std::vector<std::string> message_parts;  // each must appear in the recorded error
};

// So gtest names a failing case by its folder instead of dumping its bytes.
void PrintTo(const Case& k, std::ostream* os) { *os << k.dir; }

class BrokenPlugin : public ::testing::TestWithParam<Case> {};

TEST_P(BrokenPlugin, IsRecordedAndTheGoodOneStillLoads) {
  const Case& k = GetParam();
  Ctx c({case_dir(k.dir), case_dir("good")});
  ASSERT_TRUE(c.ok()) << c.status.message;
  ASSERT_EQ(c.plugin_count(), 2u);
  dlrt_plugin_info p = c.plugin(0);
  EXPECT_EQ(std::string(p.path), canonical(case_file(k.dir)));
  EXPECT_EQ(p.state, k.state) << p.error;
  EXPECT_EQ(p.phase, k.phase) << p.error;
  EXPECT_EQ(p.error_code, k.code) << dlrt_code_name(static_cast<dlrt_code>(p.error_code)) << ": "
                                  << p.error;
  for (const auto& part : k.message_parts) EXPECT_TRUE(contains(p.error, part)) << p.error;
  expect_good_loaded(c.plugin(1));
  // The good plugin's devices are there, whatever happened to the other.
  size_t index = 99;
  EXPECT_EQ(take(dlrt_context_find_device(c.ctx, "CPU:0", &index)).code, DLRT_OK);
}

INSTANTIATE_TEST_SUITE_P(
    Loader, BrokenPlugin,
    ::testing::Values(
        Case{"wrong_major",
             DLRT_PLUGIN_REFUSED,
             DLRT_PHASE_ABI,
             DLRT_FAILED_PRECONDITION,
             {"was built for plugin ABI 2.0", "this libdlrt speaks 1.4",
              "accepts 1.0 and newer 1.x", "libdlrt-loadertest-wrong_major.so"}},
        Case{"old_minor", DLRT_PLUGIN_LOADED, DLRT_PHASE_READY, DLRT_OK, {}},
        Case{"new_minor", DLRT_PLUGIN_LOADED, DLRT_PHASE_READY, DLRT_OK, {}},
        Case{"no_entry",
             DLRT_PLUGIN_FAILED,
             DLRT_PHASE_OPEN,
             DLRT_NOT_FOUND,
             {"does not export dlrt_plugin_init"}},
        Case{"init_error",
             DLRT_PLUGIN_FAILED,
             DLRT_PHASE_ABI,
             DLRT_INTERNAL,
             {"dlrt_plugin_init failed", "refuses to start"}},
        Case{"init_throws",
             DLRT_PLUGIN_FAILED,
             DLRT_PHASE_ABI,
             DLRT_INTERNAL,
             {"plugin init threw", "thrown on purpose", "plugins must return a status"}},
        Case{"create_fails",
             DLRT_PLUGIN_FAILED,
             DLRT_PHASE_CREATE,
             DLRT_INVALID_ARGUMENT,
             {"plugin_create failed", "always fails to create"}},
        Case{"null_entry",
             DLRT_PLUGIN_REFUSED,
             DLRT_PHASE_ABI,
             DLRT_FAILED_PRECONDITION,
             {"required entry 'device_open'"}},
        Case{"count_fails",
             DLRT_PLUGIN_LOADED,
             DLRT_PHASE_DEVICES,
             DLRT_UNAVAILABLE,
             {"no test hardware"}},
        // Every device entry NULL: honest for a collectives-only transport (ABI 1.2), a
        // refusal naming the first missing entry for anything else.
        Case{"no_devices", DLRT_PLUGIN_LOADED, DLRT_PHASE_READY, DLRT_OK, {}},
        Case{"no_devices_no_collectives",
             DLRT_PLUGIN_REFUSED,
             DLRT_PHASE_ABI,
             DLRT_FAILED_PRECONDITION,
             {"leaves the required entry 'device_count' NULL"}}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.dir); });

TEST(Loader, VersionsAreReportedAsDeclared) {
  Ctx c({case_dir("old_minor"), case_dir("new_minor"), case_dir("wrong_major")});
  ASSERT_EQ(c.plugin_count(), 3u);
  EXPECT_EQ(c.plugin(0).abi_minor, 0u);
  EXPECT_EQ(c.plugin(1).abi_minor, 7u);
  EXPECT_EQ(c.plugin(2).abi_major, 2u);
  EXPECT_EQ(c.plugin(2).device_count, 0);
  // A plugin that cannot count its devices is loaded but lists none.
  Ctx d({case_dir("count_fails")});
  EXPECT_EQ(d.plugin(0).device_count, 0);
  EXPECT_EQ(d.device_count(), 0u);
  // A transport without device entries lists none, and nothing calls into them.
  Ctx e({case_dir("no_devices")});
  EXPECT_EQ(e.plugin(0).state, DLRT_PLUGIN_LOADED) << e.plugin(0).error;
  EXPECT_EQ(e.plugin(0).device_count, 0);
  EXPECT_EQ(e.device_count(), 0u);
}

TEST(Loader, UnknownPluginOptionFailsThatPluginsCreate) {
  Ctx c({case_dir("good"), case_dir("good2")}, false, "loader_good:colour=blue");
  ASSERT_TRUE(c.ok()) << c.status.message;
  dlrt_plugin_info p = c.plugin(0);
  EXPECT_EQ(p.state, DLRT_PLUGIN_FAILED);
  EXPECT_EQ(p.phase, DLRT_PHASE_CREATE);
  EXPECT_EQ(p.error_code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(p.error, "unknown option 'colour'")) << p.error;
  EXPECT_EQ(c.plugin(1).state, DLRT_PLUGIN_LOADED);
}

TEST(Loader, MalformedPluginOptionsFailTheCreate) {
  Ctx c({case_dir("good")}, false, "loader_good-devices=3");
  EXPECT_EQ(c.status.code, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(c.status.message, "<plugin>:<key>=<value>")) << c.status.message;
  EXPECT_EQ(c.ctx, nullptr);
}

// ---- permissions ------------------------------------------------------------------------

void expect_refused_for_permissions(const Ctx& c, const std::string& what) {
  ASSERT_EQ(c.plugin_count(), 2u);
  dlrt_plugin_info p = c.plugin(0);
  EXPECT_EQ(p.state, DLRT_PLUGIN_REFUSED);
  EXPECT_EQ(p.phase, DLRT_PHASE_SEARCH);
  EXPECT_EQ(p.error_code, DLRT_PERMISSION_DENIED);
  EXPECT_TRUE(contains(p.error, what)) << p.error;
  EXPECT_EQ(c.plugin(1).state, DLRT_PLUGIN_LOADED);  // the good one, from its own folder
}

TEST(LoaderSecurity, WorldWritablePluginIsRefused) {
  TempDir tmp;
  std::string copy = tmp.copy(case_file("good2"), "libdlrt-copy.so");
  ASSERT_EQ(::chmod(copy.c_str(), 0757), 0);
  Ctx c({copy, case_dir("good")});
  expect_refused_for_permissions(c, "world-writable");
}

TEST(LoaderSecurity, GroupWritablePluginIsRefused) {
  TempDir tmp;
  std::string copy = tmp.copy(case_file("good2"), "libdlrt-copy.so");
  ASSERT_EQ(::chmod(copy.c_str(), 0775), 0);
  Ctx c({tmp.path(), case_dir("good")});
  expect_refused_for_permissions(c, "group-writable");
}

TEST(LoaderSecurity, PluginInAWritableFolderIsRefused) {
  TempDir tmp;
  tmp.copy(case_file("good2"), "libdlrt-copy.so");
  ASSERT_EQ(::chmod(tmp.path().c_str(), 0777), 0);
  Ctx c({tmp.path(), case_dir("good")});
  expect_refused_for_permissions(c, "plugin folder");
}

// A plugin folder that someone else could replace is refused: the folder itself is 755, but
// its parent is 777 and not sticky, so anyone may rename the folder and put their own in its
// place. /tmp above it (1777, root's) is fine.
TEST(LoaderSecurity, PluginBelowAWritableNonStickyAncestorIsRefused) {
  TempDir tmp;
  const std::string plugins = tmp.path() + "/plugins";
  ASSERT_EQ(::mkdir(plugins.c_str(), 0755), 0);
  fs::copy_file(case_file("good2"), plugins + "/libdlrt-copy.so");
  ASSERT_EQ(::chmod(tmp.path().c_str(), 0777), 0);
  Ctx c({plugins, case_dir("good")});
  expect_refused_for_permissions(c, "an ancestor of plugin folder");
  const std::string error = c.plugin(0).error;
  EXPECT_TRUE(contains(error, tmp.path() + ", an ancestor")) << error;
  EXPECT_TRUE(contains(error, "world-writable (mode 777) and not a sticky folder owned by root"))
      << error;
}

TEST(LoaderSecurity, StickyRootOwnedAncestorIsAccepted) {
  // The same tree with the sticky bit on the 777 parent (as /tmp): loads.
  TempDir tmp;
  const std::string plugins = tmp.path() + "/plugins";
  ASSERT_EQ(::mkdir(plugins.c_str(), 0755), 0);
  fs::copy_file(case_file("good2"), plugins + "/libdlrt-copy.so");
  ASSERT_EQ(::chmod(tmp.path().c_str(), 01777), 0);
  struct stat st {};
  ASSERT_EQ(::stat(tmp.path().c_str(), &st), 0);
  if (st.st_uid != 0) GTEST_SKIP() << "the sticky rule is for root-owned folders; run as root";
  Ctx c({plugins});
  ASSERT_EQ(c.plugin_count(), 1u);
  EXPECT_EQ(c.plugin(0).state, DLRT_PLUGIN_LOADED) << c.plugin(0).error;
}

TEST(LoaderSecurity, PluginOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  TempDir tmp;
  std::string copy = tmp.copy(case_file("good2"), "libdlrt-copy.so");
  ASSERT_EQ(::chown(copy.c_str(), 65534, 65534), 0);
  Ctx c({copy, case_dir("good")});
  expect_refused_for_permissions(c, "owned by uid 65534");
}

// ---- search order and the current directory ---------------------------------------------

class CurrentDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    char buf[4096];
    ASSERT_NE(::getcwd(buf, sizeof buf), nullptr);
    old_cwd_ = buf;
    copy_ = tmp_.copy(case_file("good2"), "libdlrt-here.so");
    ASSERT_EQ(::chdir(tmp_.path().c_str()), 0);
  }
  void TearDown() override { ASSERT_EQ(::chdir(old_cwd_.c_str()), 0); }

  bool loaded_from_cwd(const Ctx& c) const {
    for (size_t i = 0; i < c.plugin_count(); ++i)
      if (contains(c.plugin(i).path, tmp_.path()) && c.plugin(i).state == DLRT_PLUGIN_LOADED)
        return true;
    return false;
  }

  TempDir tmp_;
  std::string copy_, old_cwd_;
  EnvGuard env_;
};

TEST_F(CurrentDirectory, IsNotSearchedByDefault) {
  env_.set("DLRT_PLUGIN_PATH", std::nullopt);
  Ctx c({}, /*search_default=*/true);
  ASSERT_TRUE(c.ok()) << c.status.message;
  EXPECT_FALSE(loaded_from_cwd(c));
}

TEST_F(CurrentDirectory, RelativePluginPathEntriesAreRefused) {
  env_.set("DLRT_PLUGIN_PATH", ".:libdlrt-here.so:" + case_dir("good"));
  Ctx c({}, /*search_default=*/true);
  ASSERT_TRUE(c.ok()) << c.status.message;
  EXPECT_FALSE(loaded_from_cwd(c));
  ASSERT_GE(c.plugin_count(), 3u);
  for (size_t i : {0, 1}) {
    dlrt_plugin_info p = c.plugin(i);
    EXPECT_EQ(p.state, DLRT_PLUGIN_REFUSED);
    EXPECT_EQ(p.phase, DLRT_PHASE_SEARCH);
    EXPECT_EQ(p.error_code, DLRT_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(p.error, "relative path")) << p.error;
    EXPECT_TRUE(contains(p.error, "DLRT_PLUGIN_PATH")) << p.error;
  }
  EXPECT_STREQ(c.plugin(0).path, ".");
  EXPECT_EQ(c.plugin(2).state, DLRT_PLUGIN_LOADED);
  EXPECT_STREQ(c.plugin(2).name, "loader_good");
}

TEST_F(CurrentDirectory, RelativeApiPathIsRefused) {
  Ctx c({"libdlrt-here.so"});
  ASSERT_EQ(c.plugin_count(), 1u);
  EXPECT_EQ(c.plugin(0).state, DLRT_PLUGIN_REFUSED);
  EXPECT_TRUE(contains(c.plugin(0).error, "plugin_paths entry 'libdlrt-here.so'"))
      << c.plugin(0).error;
}

TEST(LoaderSearch, PluginPathColonListIsHonouredAfterApiPaths) {
  EnvGuard env;
  env.set("DLRT_PLUGIN_PATH", case_dir("good") + "::" + case_file("new_minor"));
  Ctx c({case_dir("good2")}, /*search_default=*/true);
  ASSERT_TRUE(c.ok()) << c.status.message;
  ASSERT_GE(c.plugin_count(), 3u);
  EXPECT_STREQ(c.plugin(0).name, "loader_good2");  // API paths first
  EXPECT_STREQ(c.plugin(1).name, "loader_good");   // then DLRT_PLUGIN_PATH, in order
  EXPECT_STREQ(c.plugin(2).name, "loader_new_minor");
  // search_default_paths = 0: DLRT_PLUGIN_PATH is not read.
  Ctx only_api({case_dir("good2")}, /*search_default=*/false);
  EXPECT_EQ(only_api.plugin_count(), 1u);
}

TEST(LoaderSearch, DefaultFolderIsNextToLibdlrt) {
  EnvGuard env;
  env.set("DLRT_PLUGIN_PATH", std::nullopt);
  Ctx c({}, /*search_default=*/true);
  ASSERT_TRUE(c.ok()) << c.status.message;
  // The effective search list ends with <folder of libdlrt.so>/dlrt/plugins, which in the build
  // tree is where the real plugins are written.
  bool found = false;
  for (size_t i = 0; i < dlrt_context_setting_count(c.ctx); ++i) {
    dlrt_setting s{};
    s.struct_size = sizeof s;
    ASSERT_EQ(dlrt_context_setting(c.ctx, i, &s), nullptr);
    if (std::string(s.name) != "DLRT_PLUGIN_PATH") continue;
    found = true;
    EXPECT_EQ(fs::weakly_canonical(s.value), fs::weakly_canonical(DLRT_BUILD_PLUGIN_DIR))
        << s.value;
    EXPECT_EQ(s.source, DLRT_SOURCE_DEFAULT);
  }
  EXPECT_TRUE(found);
  for (size_t i = 0; i < c.plugin_count(); ++i)
    EXPECT_EQ(std::string(c.plugin(i).path).rfind(canonical(DLRT_BUILD_PLUGIN_DIR), 0), 0u)
        << c.plugin(i).path;
}

TEST(LoaderSearch, SameFileTwiceLoadsOnce) {
  Ctx c({case_dir("good"), case_file("good"), case_dir("good") + "/../good"});
  ASSERT_EQ(c.plugin_count(), 1u);
  EXPECT_EQ(c.plugin(0).state, DLRT_PLUGIN_LOADED);
}

TEST(LoaderSearch, SecondPluginWithTheSameNameIsRefused) {
  TempDir tmp;
  tmp.copy(case_file("good"), "libdlrt-a.so");
  tmp.copy(case_file("good"), "libdlrt-b.so");
  tmp.copy(case_file("good"), "not-a-plugin-name.so");  // folders load only libdlrt-*.so
  Ctx c({tmp.path()});
  ASSERT_EQ(c.plugin_count(), 2u);
  EXPECT_EQ(c.plugin(0).state, DLRT_PLUGIN_LOADED);
  dlrt_plugin_info second = c.plugin(1);
  EXPECT_EQ(second.state, DLRT_PLUGIN_REFUSED);
  EXPECT_EQ(second.error_code, DLRT_ALREADY_EXISTS);
  EXPECT_TRUE(contains(second.error, "'loader_good'")) << second.error;
  EXPECT_TRUE(contains(second.error, canonical(tmp.path() + "/libdlrt-a.so"))) << second.error;
  EXPECT_EQ(c.device_count(), 2u);
}

TEST(LoaderSearch, MissingExplicitPathIsRecorded) {
  Ctx c({"/nonexistent/dlrt/plugins", case_dir("good")});
  ASSERT_EQ(c.plugin_count(), 2u);
  EXPECT_EQ(c.plugin(0).state, DLRT_PLUGIN_FAILED);
  EXPECT_EQ(c.plugin(0).error_code, DLRT_NOT_FOUND);
  EXPECT_TRUE(contains(c.plugin(0).error, "/nonexistent/dlrt/plugins")) << c.plugin(0).error;
}

TEST(LoaderSearch, NonPluginFileFailsToOpen) {
  TempDir tmp;
  std::string junk = tmp.path() + "/libdlrt-junk.so";
  FILE* f = std::fopen(junk.c_str(), "w");
  std::fputs("not an ELF file", f);
  std::fclose(f);
  Ctx c({tmp.path(), case_dir("good")});
  ASSERT_EQ(c.plugin_count(), 2u);
  EXPECT_EQ(c.plugin(0).state, DLRT_PLUGIN_FAILED);
  EXPECT_EQ(c.plugin(0).phase, DLRT_PHASE_OPEN);
  EXPECT_TRUE(contains(c.plugin(0).error, "cannot open")) << c.plugin(0).error;
  EXPECT_EQ(c.plugin(1).state, DLRT_PLUGIN_LOADED);
}

// ---- the C API's own checks ------------------------------------------------------------

TEST(CApi, NullArgumentsAreInvalidArgument) {
  EXPECT_EQ(take(dlrt_context_create(nullptr, nullptr)).code, DLRT_INVALID_ARGUMENT);
  Ctx c({case_dir("good")});
  EXPECT_EQ(take(dlrt_context_plugin_info(c.ctx, 0, nullptr)).code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(take(dlrt_context_plugin_info(nullptr, 0, nullptr)).code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(take(dlrt_context_device_info(c.ctx, 0, nullptr)).code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(take(dlrt_context_find_device(c.ctx, nullptr, nullptr)).code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(take(dlrt_context_device_memory_free(c.ctx, 0, nullptr)).code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(take(dlrt_context_setting(c.ctx, 0, nullptr)).code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(dlrt_context_plugin_count(nullptr), 0u);
  EXPECT_EQ(dlrt_context_device_count(nullptr), 0u);
  dlrt_context_destroy(nullptr);

  dlrt_plugin_info info{};
  info.struct_size = sizeof info;
  Result r = take(dlrt_context_plugin_info(c.ctx, 5, &info));
  EXPECT_EQ(r.code, DLRT_OUT_OF_RANGE);
  EXPECT_TRUE(contains(r.message, "5")) << r.message;
  dlrt_device_info dinfo{};
  dinfo.struct_size = sizeof dinfo;
  EXPECT_EQ(take(dlrt_context_device_info(c.ctx, 2, &dinfo)).code, DLRT_OUT_OF_RANGE);
  uint64_t free_bytes = 1;
  EXPECT_EQ(take(dlrt_context_device_memory_free(c.ctx, 2, &free_bytes)).code, DLRT_OUT_OF_RANGE);
  EXPECT_EQ(free_bytes, 0u);
  info.struct_size = 0;
  EXPECT_EQ(take(dlrt_context_plugin_info(c.ctx, 0, &info)).code, DLRT_INVALID_ARGUMENT);
}

TEST(CApi, DefaultOptionsAndVersions) {
  dlrt_context* ctx = nullptr;
  Result r = take(dlrt_context_create(nullptr, &ctx));
  EXPECT_EQ(r.code, DLRT_OK) << r.message;
  EXPECT_NE(ctx, nullptr);
  dlrt_context_destroy(ctx);
  uint32_t major = 0, minor = 9, floor = 9;
  dlrt_abi_version(&major, &minor, &floor);
  EXPECT_EQ(major, 1u);
  EXPECT_EQ(minor, 4u);  // 1.4: the dtypes u16, u32, u64, i16 (sdk/CHANGELOG.md)
  EXPECT_EQ(floor, 0u);
  EXPECT_STRNE(dlrt_version(), "");
}

TEST(CApi, OlderCallerStructsAreNotOverrun) {
  Ctx c({case_dir("good")});
  // A caller built when dlrt_plugin_info ended at `version`.
  struct {
    dlrt_plugin_info info;
    unsigned char canary[64];
  } old{};
  std::memset(&old, 0xAB, sizeof old);
  old.info.struct_size = offsetof(dlrt_plugin_info, state);
  ASSERT_EQ(dlrt_context_plugin_info(c.ctx, 0, &old.info), nullptr);
  EXPECT_STREQ(old.info.name, "loader_good");
  EXPECT_EQ(old.info.struct_size, offsetof(dlrt_plugin_info, state));
  const unsigned char* after =
      reinterpret_cast<const unsigned char*>(&old.info) + offsetof(dlrt_plugin_info, state);
  EXPECT_EQ(after[0], 0xAB);
}

TEST(CApi, SettingsShowTheirSource) {
  EnvGuard env;
  env.set("DLRT_CHECK_NUMERICS", "yes");
  Ctx c({case_dir("good")}, false, nullptr, "CPU:1");
  ASSERT_TRUE(c.ok()) << c.status.message;
  std::map<std::string, std::pair<std::string, int32_t>> seen;
  for (size_t i = 0; i < dlrt_context_setting_count(c.ctx); ++i) {
    dlrt_setting s{};
    s.struct_size = sizeof s;
    ASSERT_EQ(dlrt_context_setting(c.ctx, i, &s), nullptr);
    seen[s.name] = {s.value, s.source};
  }
  EXPECT_EQ(seen["DLRT_VISIBLE_DEVICES"],
            (std::pair<std::string, int32_t>{"CPU:1", DLRT_SOURCE_API}));
  EXPECT_EQ(seen["DLRT_CHECK_NUMERICS"],
            (std::pair<std::string, int32_t>{"1", DLRT_SOURCE_ENVIRONMENT}));
  EXPECT_EQ(seen["DLRT_TRACE_FILE"].second, DLRT_SOURCE_DEFAULT);
  EXPECT_EQ(seen.count("CUDA_VISIBLE_DEVICES"), 1u);
  dlrt_setting s{};
  s.struct_size = sizeof s;
  EXPECT_EQ(take(dlrt_context_setting(c.ctx, 100, &s)).code, DLRT_OUT_OF_RANGE);
}

}  // namespace
}  // namespace dlrt::testing
