// fake_host.hpp: a stand-in for libdlrt's host services, for tests that dlopen one plugin and
// drive its C table directly (no core involved). Test-only; header-only.
//
//   dlrt::testing::LoadedPlugin p("/path/libdlrt-cpu.so");   // dlopen + dlrt_plugin_init
//   ASSERT_TRUE(p.ok()) << p.error();
//   dlrt_plugin* inst = p.create({{"threads", "2"}});         // plugin_create with options
//
// Statuses the plugin returns are `FakeStatus` objects made by this host; take_status()
// turns one into (code, message) and frees it.
#pragma once

#include <dlfcn.h>
#include <dlrt/plugin.h>

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

// The fake host's definition of the opaque status type. (libdlrt has its own, private one;
// a test program uses one host or the other, never both.)
struct dlrt_status {
  dlrt_code code;
  std::string message;
};

namespace dlrt::testing {

inline dlrt_status* fake_status_create(dlrt_code code, const char* message) {
  if (code == DLRT_OK) return nullptr;
  return new dlrt_status{code, message ? message : ""};
}
inline void fake_status_free(dlrt_status* s) { delete s; }
inline void fake_log(int32_t level, const char* plugin, const char* message) {
  std::fprintf(stderr, "[fake-host] level=%d %s: %s\n", level, plugin ? plugin : "?",
               message ? message : "");
}

inline const dlrt_host_api* fake_host() {
  static const dlrt_host_api host = {sizeof(dlrt_host_api), DLRT_ABI_MAJOR,    DLRT_ABI_MINOR,
                                     &fake_status_create,   &fake_status_free, &fake_log};
  return &host;
}

// (code, message) of a returned status, freeing it; (DLRT_OK, "") for NULL.
inline std::pair<dlrt_code, std::string> take_status(dlrt_status* s) {
  if (s == nullptr) return {DLRT_OK, ""};
  std::pair<dlrt_code, std::string> r{s->code, s->message};
  delete s;
  return r;
}

// dlopen + dlrt_plugin_init, keeping the library open for the object's lifetime.
class LoadedPlugin {
 public:
  explicit LoadedPlugin(const std::string& path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      error_ = std::string("dlopen: ") + dlerror();
      return;
    }
    auto init = reinterpret_cast<dlrt_plugin_init_fn>(dlsym(handle_, DLRT_PLUGIN_INIT_SYMBOL));
    if (init == nullptr) {
      error_ = "no dlrt_plugin_init";
      return;
    }
    api_ = dlrt_plugin_api{};
    api_.struct_size = sizeof(dlrt_plugin_api);
    auto [code, msg] = take_status(init(fake_host(), &api_));
    if (code != DLRT_OK) error_ = "init: " + msg;
  }
  ~LoadedPlugin() {
    destroy();
    // Deliberately no dlclose: vendor libraries (oneDNN, CUDA) dislike being unloaded.
  }
  // plugin_destroy of the instance create() made, now rather than at destruction (a test
  // that times shutdown); a no-op when there is none or it was destroyed already.
  void destroy() {
    if (instance_ != nullptr && api_.plugin_destroy != nullptr) api_.plugin_destroy(instance_);
    instance_ = nullptr;
  }
  LoadedPlugin(const LoadedPlugin&) = delete;
  LoadedPlugin& operator=(const LoadedPlugin&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  const dlrt_plugin_api& api() const { return api_; }

  // plugin_create with string options; on failure returns nullptr and sets error().
  dlrt_plugin* create(const std::map<std::string, std::string>& options = {}) {
    std::vector<dlrt_attr> attrs;
    for (const auto& [k, v] : options) {
      dlrt_attr a{};
      a.struct_size = sizeof(dlrt_attr);
      a.name = k.c_str();
      a.type = DLRT_ATTR_STRING;
      a.s = v.c_str();
      attrs.push_back(a);
    }
    std::vector<const dlrt_attr*> ptrs;
    for (auto& a : attrs) ptrs.push_back(&a);
    dlrt_plugin_create_args args{sizeof(dlrt_plugin_create_args), fake_host(), ptrs.size(),
                                 ptrs.data()};
    dlrt_plugin* p = nullptr;
    auto [code, msg] = take_status(api_.plugin_create(&args, &p));
    if (code != DLRT_OK) {
      error_ = "plugin_create: " + msg;
      return nullptr;
    }
    instance_ = p;
    return p;
  }

 private:
  void* handle_ = nullptr;
  dlrt_plugin_api api_{};
  dlrt_plugin* instance_ = nullptr;
  std::string error_;
};

}  // namespace dlrt::testing
