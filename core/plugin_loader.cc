// plugin_loader.cc: the phases of loading one plugin (OPEN, ABI, CREATE, DEVICES) and the
// Plugin record they fill (plugin_loader.hpp). What the phases check and copy is in
// plugin_abi_check, plugin_device_desc and plugin_library; options come from plugin_options.
#include "plugin_loader.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <cstring>
#include <exception>
#include <utility>
#include <vector>

#include "host_api.hpp"
#include "log.hpp"
#include "plugin_abi_check.hpp"
#include "plugin_call.hpp"
#include "plugin_isolation.hpp"
#include "plugin_library.hpp"
#include "status.hpp"

namespace dlrt::core {
namespace {

// NULL as "" (the ABI's strings may be NULL).
std::string str(const char* s) { return s != nullptr ? s : ""; }

class Loading {
 public:
  // load_path: what dlopen gets (the checked descriptor's /proc/self/fd/N; p.path otherwise).
  Loading(Plugin& p, boost::dll::shared_library& library, dlrt_plugin_api& api,
          std::string load_path)
      : p_(p), library_(library), api_(api), load_path_(std::move(load_path)) {}

  // Each phase returns false when the plugin stopped there (the record says why).
  // Each phase starts with an info line "loading <path>: <phase>", so that when a plugin
  // hangs or kills the process inside one, the last line logged names the plugin and the
  // phase (the loader cannot say so afterwards: it is not running any more).
  bool open() {
    p_.phase = DLRT_PHASE_OPEN;
    log(DLRT_LOG_INFO, "loader", "loading {}: dlopen", p_.path);
    try {
      load_library(library_, load_path_);
    } catch (const std::exception& e) {
      return stop(DLRT_PLUGIN_FAILED, DLRT_UNAVAILABLE, fmt::format("cannot open: {}", e.what()));
    }
    if (!library_.has(DLRT_PLUGIN_INIT_SYMBOL))
      return stop(DLRT_PLUGIN_FAILED, DLRT_NOT_FOUND,
                  fmt::format("{} does not export {}; is it a dlrt plugin?", p_.path,
                              DLRT_PLUGIN_INIT_SYMBOL));
    return true;
  }

  bool init(const std::map<std::string, std::string>& names_taken) {
    p_.phase = DLRT_PHASE_ABI;
    log(DLRT_LOG_INFO, "loader", "loading {}: {}", p_.path, DLRT_PLUGIN_INIT_SYMBOL);
    auto init_fn =
        library_.get<dlrt_status*(const dlrt_host_api*, dlrt_plugin_api*)>(DLRT_PLUGIN_INIT_SYMBOL);

    // The plugin writes into a zeroed table with room to spare: a well-behaved plugin writes at
    // most sizeof(dlrt_plugin_api) bytes (dlrt_plugin_api_fill), but a newer one that copied
    // its whole, larger table by mistake then scribbles on padding, not on our stack.
    struct alignas(dlrt_plugin_api) Padded {
      unsigned char bytes[sizeof(dlrt_plugin_api) + 1024];
    } table{};
    auto* api = reinterpret_cast<dlrt_plugin_api*>(&table);
    api->struct_size = sizeof(dlrt_plugin_api);

    StatusValue s;
    try {
      s = take_status(init_fn(host_api(), api));
    } catch (const std::exception& e) {
      return stop(DLRT_PLUGIN_FAILED, DLRT_INTERNAL,
                  fmt::format("plugin init threw a C++ exception ({}); plugins must return a "
                              "status, never throw",
                              e.what()));
    } catch (...) {
      return stop(DLRT_PLUGIN_FAILED, DLRT_INTERNAL,
                  "plugin init threw an exception; plugins must return a status, never throw");
    }

    // Keep what the plugin declared, as far as its struct_size covers it.
    size_t size = api->struct_size;
    constexpr size_t kVersionEnd = offsetof(dlrt_plugin_api, abi_minor) + sizeof(uint32_t);
    if (size >= kVersionEnd) {
      p_.abi_major = api->abi_major;
      p_.abi_minor = api->abi_minor;
    }
    constexpr size_t kNamesEnd = offsetof(dlrt_plugin_api, version) + sizeof(const char*);
    if (size >= kNamesEnd) {
      p_.name = str(api->name);
      p_.platform = str(api->platform);
      p_.version = str(api->version);
    }
    if (!s.ok()) return stop(DLRT_PLUGIN_FAILED, s.code, "dlrt_plugin_init failed: " + s.message);

    if (size < kVersionEnd)
      return stop(DLRT_PLUGIN_REFUSED, DLRT_FAILED_PRECONDITION,
                  fmt::format("plugin {} filled a table of {} bytes, too small to hold its ABI "
                              "version (needs at least {}); {}",
                              p_.path, size, kVersionEnd, accepted_text()));
    if (p_.abi_major != DLRT_ABI_MAJOR)
      return stop(DLRT_PLUGIN_REFUSED, DLRT_FAILED_PRECONDITION,
                  fmt::format("plugin {} was built for plugin ABI {}; {}", p_.path,
                              abi_text(p_.abi_major, p_.abi_minor), accepted_text()));
    // Compared as signed variables: with a floor of 0 a direct unsigned test is always false.
    const int64_t minor = p_.abi_minor, floor = DLRT_ABI_MINOR_FLOOR;
    if (minor < floor)
      return stop(DLRT_PLUGIN_REFUSED, DLRT_FAILED_PRECONDITION,
                  fmt::format("plugin {} was built for plugin ABI {}, older than the oldest "
                              "this libdlrt accepts; {}; rebuild the plugin",
                              p_.path, abi_text(p_.abi_major, p_.abi_minor), accepted_text()));

    // Copy what the host knows about, then zero every field past the plugin's struct_size:
    // an older plugin never wrote them, and whatever lies there must read as absent (NULL).
    // A newer plugin's larger size is clamped: we only know our own fields.
    if (size > sizeof(dlrt_plugin_api)) size = sizeof(dlrt_plugin_api);
    std::memset(&api_, 0, sizeof api_);
    std::memcpy(&api_, api, size);
    api_.struct_size = size;

    for (const PluginEntry& e : required_entries(api_)) {
      if (e.offset + sizeof(void*) > size)
        return stop(DLRT_PLUGIN_REFUSED, DLRT_FAILED_PRECONDITION,
                    fmt::format("plugin {} (ABI {}) has a table of {} bytes that ends before "
                                "the required entry '{}'",
                                p_.path, abi_text(p_.abi_major, p_.abi_minor), size, e.name));
      if (!slot_is_set(api_, e.offset))
        return stop(DLRT_PLUGIN_REFUSED, DLRT_FAILED_PRECONDITION,
                    fmt::format("plugin {} leaves the required entry '{}' NULL", p_.path, e.name));
    }
    if (p_.name.empty())
      return stop(DLRT_PLUGIN_REFUSED, DLRT_FAILED_PRECONDITION,
                  fmt::format("plugin {} has an empty name; every plugin needs a short unique "
                              "name such as \"cpu\"",
                              p_.path));
    auto taken = names_taken.find(p_.name);
    if (taken != names_taken.end())
      return stop(DLRT_PLUGIN_REFUSED, DLRT_ALREADY_EXISTS,
                  fmt::format("a plugin named '{}' was already loaded from {}; refusing a "
                              "second one from {}",
                              p_.name, taken->second, p_.path));
    return true;
  }

  bool create(const PluginOptions& all_options, dlrt_plugin** out_instance) {
    p_.phase = DLRT_PHASE_CREATE;
    log(DLRT_LOG_INFO, "loader", "loading {}: plugin_create", p_.path);
    // Options reach the plugin as string attributes; `options` owns what they point to.
    static const std::vector<std::pair<std::string, std::string>> kNone;
    auto found = all_options.find(p_.name);
    const auto& options = found != all_options.end() ? found->second : kNone;
    std::vector<dlrt_attr> attrs(options.size());
    std::vector<const dlrt_attr*> ptrs;
    for (size_t i = 0; i < options.size(); ++i) {
      attrs[i].struct_size = sizeof(dlrt_attr);
      attrs[i].name = options[i].first.c_str();
      attrs[i].type = DLRT_ATTR_STRING;
      attrs[i].s = options[i].second.c_str();
      ptrs.push_back(&attrs[i]);
    }
    dlrt_plugin_create_args args{};
    args.struct_size = sizeof args;
    args.host = host_api();
    args.num_options = ptrs.size();
    args.options = ptrs.empty() ? nullptr : ptrs.data();
    *out_instance = nullptr;
    StatusValue s =
        plugin_status("plugin_create", [&] { return api_.plugin_create(&args, out_instance); });
    if (!s.ok()) {
      *out_instance = nullptr;  // a failed create released what it built (plugin.h)
      return stop(DLRT_PLUGIN_FAILED, s.code, "plugin_create failed: " + s.message);
    }
    return true;
  }

  // Never stops the plugin: an error here leaves it LOADED, with fewer (or no) devices.
  void devices(dlrt_plugin* instance) {
    p_.phase = DLRT_PHASE_DEVICES;
    if (api_.device_count == nullptr) {  // a transport without devices (plugin.h, ABI 1.2)
      p_.device_count = 0;
      p_.phase = DLRT_PHASE_READY;
      return;
    }
    log(DLRT_LOG_INFO, "loader", "loading {}: devices", p_.path);
    int32_t count = 0;
    StatusValue s =
        plugin_status("device_count", [&] { return api_.device_count(instance, &count); });
    if (s.ok() && (count < 0 || count > 65536))
      s = {DLRT_INTERNAL, fmt::format("device_count returned {}, expected 0..65536", count)};
    if (!s.ok()) {
      p_.code = s.code;
      p_.error = "no devices: " + s.message;
      p_.device_count = 0;
      log(DLRT_LOG_INFO, "loader", "plugin {} ({}) has no devices: {} ({})", p_.name, p_.path,
          s.message, dlrt_code_name(s.code));
      return;
    }
    p_.device_count = count;
    for (int32_t ordinal = 0; ordinal < count; ++ordinal) {
      dlrt_device_desc desc{};
      desc.struct_size = sizeof desc;
      s = plugin_status("device_get_desc",
                        [&] { return api_.device_get_desc(instance, ordinal, &desc); });
      if (!s.ok()) {
        // Leave this device out but keep the others; the record says which one and why.
        p_.code = s.code;
        p_.error += fmt::format("{}device {} left out: device_get_desc failed: {}",
                                p_.error.empty() ? "" : "; ", ordinal, s.message);
        log(DLRT_LOG_WARNING, "loader", "plugin {}: device {} left out: {}", p_.name, ordinal,
            s.message);
        continue;
      }
      // A plugin that reports a smaller struct_size never wrote the fields past it.
      if (desc.struct_size >= sizeof(size_t) && desc.struct_size < sizeof desc)
        std::memset(reinterpret_cast<unsigned char*>(&desc) + desc.struct_size, 0,
                    sizeof desc - desc.struct_size);
      p_.devices.push_back(copy_desc(desc, ordinal));
    }
    p_.phase = p_.error.empty() ? DLRT_PHASE_READY : DLRT_PHASE_DEVICES;
  }

 private:
  bool stop(dlrt_plugin_state state, dlrt_code code, std::string message) {
    p_.state = state;
    p_.code = code;
    p_.error = std::move(message);
    return false;
  }

  Plugin& p_;
  boost::dll::shared_library& library_;
  dlrt_plugin_api& api_;
  std::string load_path_;
};

const char* state_name(dlrt_plugin_state s) {
  switch (s) {
    case DLRT_PLUGIN_LOADED:
      return "loaded";
    case DLRT_PLUGIN_REFUSED:
      return "refused";
    case DLRT_PLUGIN_FAILED:
      return "failed";
  }
  return "?";
}

const char* phase_name(dlrt_plugin_phase p) {
  static const char* kNames[] = {"search", "open", "abi", "create", "devices", "ready"};
  return p >= 0 && p <= DLRT_PHASE_READY ? kNames[p] : "?";
}

}  // namespace

std::unique_ptr<Plugin> load_plugin(const PluginCandidate& candidate, const PluginOptions& options,
                                    const std::map<std::string, std::string>& names_taken,
                                    double isolate_timeout_s) {
  auto p = std::make_unique<Plugin>();
  p->path = candidate.path;
  p->origin = candidate.origin;
  IsolatedCheck isolated;  // OK unless the child-process check ran and failed
  if (candidate.code == DLRT_OK && isolate_timeout_s > 0) {
    log(DLRT_LOG_INFO, "loader", "loading {}: load and init in a child process first",
        candidate.path);
    isolated = check_plugin_in_child(candidate.path, isolate_timeout_s);
  }
  if (candidate.code != DLRT_OK) {  // refused by the search itself
    p->state = candidate.state;
    p->code = candidate.code;
    p->error = candidate.error;
    p->phase = DLRT_PHASE_SEARCH;
  } else if (isolated.code != DLRT_OK) {  // crashed, exited or hung in the child
    p->state = DLRT_PLUGIN_FAILED;
    p->code = isolated.code;
    p->error = isolated.message;
    p->phase = DLRT_PHASE_ABI;
  } else {
    const std::string load_path = load_path_for(candidate, &p->file_);
    Loading loading(*p, p->library_, p->api_, load_path);
    dlrt_plugin* instance = nullptr;
    if (loading.open() && loading.init(names_taken) && loading.create(options, &instance)) {
      p->instance_ = instance;
      p->created_ = true;
      p->loaded_ = true;
      loading.devices(instance);
    }
  }

  if (p->state == DLRT_PLUGIN_LOADED) {
    log(DLRT_LOG_INFO, "loader", "loaded plugin {} {} ({}, ABI {}.{}) from {}: {} device(s)",
        p->name, p->version, p->platform, p->abi_major, p->abi_minor, p->path, p->devices.size());
  } else {
    log(DLRT_LOG_WARNING, "loader", "plugin {} {} in phase {} ({}): {}", p->path,
        state_name(p->state), phase_name(p->phase), dlrt_code_name(p->code), p->error);
    // Nothing of a refused or failed plugin is kept alive but its record.
    unload_library(p->library_, p->path);
  }
  return p;
}

dlrt_device* Plugin::open_device(int32_t ordinal) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!usable()) fail(DLRT_FAILED_PRECONDITION, fmt::format("plugin {} is not loaded", path));
  auto it = open_devices_.find(ordinal);
  if (it != open_devices_.end()) return it->second;
  if (api_.device_open == nullptr)
    fail(DLRT_FAILED_PRECONDITION,
         fmt::format("plugin {} owns no devices (it offers collectives only); device {} cannot "
                     "be opened",
                     name, ordinal));
  dlrt_device* device = nullptr;
  StatusValue s =
      plugin_status("device_open", [&] { return api_.device_open(instance_, ordinal, &device); });
  if (!s.ok()) fail(s, fmt::format("plugin {} could not open device {}", name, ordinal));
  open_devices_[ordinal] = device;
  return device;
}

Plugin::~Plugin() {
  // Devices first, then the instance, then the code they all live in.
  for (auto& [ordinal, device] : open_devices_) {
    try {
      api_.device_close(device);
    } catch (...) {
      log(DLRT_LOG_ERROR, "loader", "plugin {}: device_close({}) threw; ignoring", name, ordinal);
    }
  }
  open_devices_.clear();
  if (created_) {
    try {
      api_.plugin_destroy(instance_);
    } catch (...) {
      log(DLRT_LOG_ERROR, "loader", "plugin {}: plugin_destroy threw; ignoring", name);
    }
  }
  unload_library(library_, path);
}

}  // namespace dlrt::core
