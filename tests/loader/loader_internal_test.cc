// What the C API does not show, checked on the core's C++ classes: the host's copy of a
// plugin's table (fields past an older plugin's struct_size read as NULL, a newer plugin's
// larger size is clamped) and the device handle shared by logical devices.
#include <dlrt/dlrt.h>
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <stdlib.h>

#include <cstddef>

#include "context.hpp"
#include "plugin_loader.hpp"
#include "plugin_search.hpp"
#include "status.hpp"
#include "test_util.hpp"

namespace dlrt::testing {
namespace {

std::unique_ptr<dlrt_context> make(std::vector<std::string> paths, const char* plugin_options,
                                   std::vector<dlrt_logical_device_config> logical = {}) {
  std::vector<const char*> ptrs;
  for (const auto& p : paths) ptrs.push_back(p.c_str());
  dlrt_context_options o;
  dlrt_context_options_init(&o);
  o.plugin_paths = ptrs.data();
  o.num_plugin_paths = ptrs.size();
  o.search_default_paths = 0;
  o.plugin_options = plugin_options;
  o.logical_devices = logical.empty() ? nullptr : logical.data();
  o.num_logical_devices = logical.size();
  return std::make_unique<dlrt_context>(&o);
}

// Whether the library at `path` is mapped in this process (RTLD_NOLOAD never loads it).
bool is_mapped(const std::string& path) {
  void* h = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (h != nullptr) ::dlclose(h);
  return h != nullptr;
}

// DLRT_KEEP_PLUGINS_LOADED=1 (on by default under ASan): a destroyed context's plugins stay
// mapped, so LeakSanitizer at exit can name their frames; =0: they are unloaded. Each case has
// its own plugin file, loaded by no other test, so a library still mapped came from this case.
TEST(LoaderInternal, KeepPluginsLoadedLeavesTheLibraryMappedAfterTheContext) {
  const std::string so = case_file("keep_on");
  ASSERT_FALSE(is_mapped(so));
  ::setenv("DLRT_KEEP_PLUGINS_LOADED", "1", 1);
  EXPECT_TRUE(core::keep_plugins_loaded());
  {
    auto ctx = make({so}, nullptr);
    ASSERT_TRUE(ctx->plugins().at(0)->usable()) << ctx->plugins()[0]->error;
    EXPECT_TRUE(is_mapped(so));
  }
  EXPECT_TRUE(is_mapped(so)) << "the plugin was unloaded although DLRT_KEEP_PLUGINS_LOADED=1";
  ::unsetenv("DLRT_KEEP_PLUGINS_LOADED");
}

TEST(LoaderInternal, WithoutKeepPluginsLoadedTheLibraryIsUnloaded) {
  const std::string so = case_file("keep_off");
  ASSERT_FALSE(is_mapped(so));
  ::setenv("DLRT_KEEP_PLUGINS_LOADED", "0", 1);
  EXPECT_FALSE(core::keep_plugins_loaded());
  {
    auto ctx = make({so}, nullptr);
    ASSERT_TRUE(ctx->plugins().at(0)->usable()) << ctx->plugins()[0]->error;
    EXPECT_TRUE(is_mapped(so));
  }
  EXPECT_FALSE(is_mapped(so));
  ::unsetenv("DLRT_KEEP_PLUGINS_LOADED");
}

TEST(LoaderInternal, OlderMinorOptionalTablesReadAsAbsent) {
  auto ctx = make({case_dir("old_minor")}, nullptr);
  ASSERT_EQ(ctx->plugins().size(), 1u);
  const core::Plugin& p = *ctx->plugins()[0];
  ASSERT_TRUE(p.usable()) << p.error;
  EXPECT_EQ(p.api().struct_size, offsetof(dlrt_plugin_api, capture));
  // The plugin wrote junk there, past its struct_size: the host must see NULL.
  EXPECT_EQ(p.api().capture, nullptr);
  EXPECT_EQ(p.api().collectives, nullptr);
  EXPECT_EQ(ctx->registry().devices().size(), 2u);
}

TEST(LoaderInternal, NewerMinorIsClampedToTheHostsTable) {
  auto ctx = make({case_dir("new_minor")}, nullptr);
  const core::Plugin& p = *ctx->plugins()[0];
  ASSERT_TRUE(p.usable()) << p.error;
  EXPECT_EQ(p.abi_minor, 7u);
  EXPECT_EQ(p.api().struct_size, sizeof(dlrt_plugin_api));
  EXPECT_NE(p.api().kernel_destroy, nullptr);
}

TEST(LoaderInternal, LogicalDevicesShareOneOpenedDevice) {
  dlrt_logical_device_config split{};
  split.struct_size = sizeof split;
  split.physical_device = "CPU:1";
  split.count = 3;
  auto ctx = make({case_dir("good")}, nullptr, {split});
  ASSERT_EQ(ctx->registry().devices().size(), 4u);
  auto [api0, dev0] = ctx->device_handle(0);
  auto [api1, dev1] = ctx->device_handle(1);
  auto [api3, dev3] = ctx->device_handle(3);
  EXPECT_NE(dev0, dev1);  // CPU:0 and the first split of CPU:1
  EXPECT_EQ(dev1, dev3);  // all splits of CPU:1
  EXPECT_EQ(api0, api1);
  EXPECT_THROW(ctx->device_handle(4), core::Error);
}

TEST(LoaderInternal, RefusedAndFailedPluginsKeepNoLibraryOpen) {
  auto ctx = make({case_dir("wrong_major"), case_dir("create_fails")}, nullptr);
  ASSERT_EQ(ctx->plugins().size(), 2u);
  for (const auto& p : ctx->plugins()) {
    EXPECT_FALSE(p->usable());
    EXPECT_EQ(p->instance(), nullptr);
  }
}

// The search checks the file through a descriptor and the loader loads that
// descriptor, so swapping the path between check and load changes nothing: the checked
// plugin (loader_good2) loads, not the file now at its path (loader_good).
TEST(LoaderInternal, TheFileCheckedIsTheFileLoaded) {
  TempDir tmp;
  const std::string path = tmp.copy(case_file("good2"), "libdlrt-x.so");
  core::SearchRequest request;
  request.api_paths = {path};
  std::vector<core::PluginCandidate> found = core::find_plugin_candidates(request);
  ASSERT_EQ(found.size(), 1u);
  ASSERT_EQ(found[0].code, DLRT_OK) << found[0].error;
  ASSERT_NE(found[0].file, nullptr);
  const std::string other = tmp.copy(case_file("good"), "other.so");
  ASSERT_EQ(::rename(other.c_str(), path.c_str()), 0);
  std::unique_ptr<core::Plugin> plugin = core::load_plugin(found[0], {}, {});
  EXPECT_TRUE(plugin->usable()) << plugin->error;
  EXPECT_EQ(plugin->name, "loader_good2");
  EXPECT_EQ(plugin->path, found[0].path);  // records and messages keep the real path
}

}  // namespace
}  // namespace dlrt::testing
