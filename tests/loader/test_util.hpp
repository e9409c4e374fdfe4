// test_util.hpp: helpers of the loader tests — paths of the purpose-built plugins, temporary
// folders, environment variables restored after each test, and a context made from a list of
// plugin paths.
#pragma once

#include <dlrt/dlrt.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dlrt::testing {

namespace fs = std::filesystem;

// The folder of one purpose-built case, e.g. case_dir("good").
inline std::string case_dir(const std::string& name) {
  return std::string(DLRT_TEST_PLUGIN_DIR) + "/" + name;
}
inline std::string case_file(const std::string& name) {
  return case_dir(name) + "/libdlrt-loadertest-" + name + ".so";
}

// A fresh 0700 folder under /tmp, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/dlrt-loader-test-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, ec);
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  // Copies `file` in as `name` and returns the new path.
  std::string copy(const std::string& file, const std::string& name) const {
    std::string dst = path_ + "/" + name;
    fs::copy_file(file, dst, fs::copy_options::overwrite_existing);
    return dst;
  }

 private:
  std::string path_;
};

// Sets (or unsets, with nullopt) environment variables for one test and restores them.
class EnvGuard {
 public:
  void set(const std::string& name, std::optional<std::string> value) {
    if (saved_.count(name) == 0) {
      const char* old = ::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value) ::setenv(name.c_str(), value->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
  ~EnvGuard() {
    for (const auto& [name, value] : saved_) {
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

// A status's code and message, freeing it.
struct Result {
  dlrt_code code;
  std::string message;
};
inline Result take(dlrt_status* s) {
  Result r{dlrt_status_code(s), dlrt_status_message(s)};
  dlrt_status_free(s);
  return r;
}

// An owned context; `status` holds the create error when it failed.
class Ctx {
 public:
  Ctx(std::vector<std::string> paths, bool search_default = false,
      const char* plugin_options = nullptr, const char* visible = nullptr,
      std::vector<dlrt_logical_device_config> logical = {})
      : paths_(std::move(paths)) {
    for (const auto& p : paths_) ptrs_.push_back(p.c_str());
    dlrt_context_options o;
    dlrt_context_options_init(&o);
    o.plugin_paths = ptrs_.data();
    o.num_plugin_paths = ptrs_.size();
    o.search_default_paths = search_default ? 1 : 0;
    o.plugin_options = plugin_options;
    o.visible_devices = visible;
    o.logical_devices = logical.empty() ? nullptr : logical.data();
    o.num_logical_devices = logical.size();
    status = take(dlrt_context_create(&o, &ctx));
  }
  ~Ctx() { dlrt_context_destroy(ctx); }
  Ctx(const Ctx&) = delete;
  Ctx& operator=(const Ctx&) = delete;

  bool ok() const { return status.code == DLRT_OK && ctx != nullptr; }
  size_t plugin_count() const { return dlrt_context_plugin_count(ctx); }
  dlrt_plugin_info plugin(size_t i) const {
    dlrt_plugin_info info{};
    info.struct_size = DLRT_STRUCT_SIZE(dlrt_plugin_info);
    Result r = take(dlrt_context_plugin_info(ctx, i, &info));
    EXPECT_EQ(r.code, DLRT_OK) << r.message;
    return info;
  }
  size_t device_count() const { return dlrt_context_device_count(ctx); }
  dlrt_device_info device(size_t i) const {
    dlrt_device_info info{};
    info.struct_size = DLRT_STRUCT_SIZE(dlrt_device_info);
    Result r = take(dlrt_context_device_info(ctx, i, &info));
    EXPECT_EQ(r.code, DLRT_OK) << r.message;
    return info;
  }
  std::vector<std::string> device_names() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < device_count(); ++i) out.push_back(device(i).name);
    return out;
  }
  // Paths of the plugins with state LOADED.
  std::vector<std::string> loaded_paths() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < plugin_count(); ++i)
      if (plugin(i).state == DLRT_PLUGIN_LOADED) out.push_back(plugin(i).path);
    return out;
  }

  dlrt_context* ctx = nullptr;
  Result status{DLRT_OK, ""};

 private:
  std::vector<std::string> paths_;
  std::vector<const char*> ptrs_;
};

inline std::string canonical(const std::string& p) { return fs::canonical(p).string(); }

}  // namespace dlrt::testing
