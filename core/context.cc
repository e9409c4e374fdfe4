// context.cc: see context.hpp. Creation is a straight line: options -> settings -> search ->
// load each plugin -> registry. Only bad options (malformed device lists, plugin options,
// logical configs) make it fail; a failed create destroys what it built (members unwind).
#include "context.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <string_view>

#include "eager.hpp"
#include "log.hpp"
#include "plugin_call.hpp"
#include "platform/platform.hpp"
#include "plugin_search.hpp"
#include "status.hpp"

namespace dlrt::core {

dlrt_context_options complete_options(const dlrt_context_options* options) {
  dlrt_context_options out;
  dlrt_context_options_init(&out);
  if (options == nullptr) return out;
  if (options->struct_size < sizeof(size_t))
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("dlrt_context_options.struct_size is {}; initialise the options with "
                     "dlrt_context_options_init",
                     options->struct_size));
  // Fields past the caller's struct_size keep their defaults (an older caller never set them).
  size_t n = options->struct_size < sizeof out ? options->struct_size : sizeof out;
  std::memcpy(&out, options, n);
  out.struct_size = sizeof out;
  if (out.num_plugin_paths > 0 && out.plugin_paths == nullptr)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("options.num_plugin_paths is {} but plugin_paths is "
                                            "NULL",
                                            out.num_plugin_paths));
  if (out.num_logical_devices > 0 && out.logical_devices == nullptr)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("options.num_logical_devices is {} but "
                                            "logical_devices is NULL",
                                            out.num_logical_devices));
  if (out.log_level < -1 || out.log_level > DLRT_LOG_DEBUG)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("options.log_level is {}; expected -1 (from "
                                            "DLRT_LOG_LEVEL) or 0 (error) .. 3 (debug)",
                                            out.log_level));
  if (out.memory_growth < -1 || out.memory_growth > 1)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("options.memory_growth is {}; expected -1 (from "
                                            "DLRT_GPU_ALLOW_GROWTH), 0 (off) or 1 (on)",
                                            out.memory_growth));
  if (!(out.memory_fraction >= 0.0 && out.memory_fraction <= 1.0))
    fail(DLRT_INVALID_ARGUMENT, fmt::format("options.memory_fraction is {}; expected 0 (the "
                                            "default, 0.9) or a fraction in (0, 1]",
                                            out.memory_fraction));
  if (out.isolate_plugins != 0 && out.isolate_plugins != 1)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("options.isolate_plugins is {}; expected 0 (load "
                                            "in-process) or 1 (check in a child process first)",
                                            out.isolate_plugins));
  if (!(out.isolate_timeout_s >= 0.0 && out.isolate_timeout_s <= 3600.0))
    fail(DLRT_INVALID_ARGUMENT, fmt::format("options.isolate_timeout_s is {}; expected 0 (the "
                                            "default, 10 s) or seconds up to 3600",
                                            out.isolate_timeout_s));
  return out;
}

namespace {

std::vector<LogicalSplit> logical_splits(const dlrt_context_options& o) {
  std::vector<LogicalSplit> out;
  for (size_t i = 0; i < o.num_logical_devices; ++i) {
    // Read each config only as far as its own struct_size reaches.
    dlrt_logical_device_config c{};
    const dlrt_logical_device_config& given = o.logical_devices[i];
    if (given.struct_size < sizeof(size_t))
      fail(DLRT_INVALID_ARGUMENT, fmt::format("logical_devices[{}].struct_size is {}; set it "
                                              "with DLRT_STRUCT_SIZE(dlrt_logical_device_config)",
                                              i, given.struct_size));
    std::memcpy(&c, &given, given.struct_size < sizeof c ? given.struct_size : sizeof c);
    if (c.physical_device == nullptr)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("logical_devices[{}].physical_device is NULL; expected a device spec "
                       "such as GPU:0",
                       i));
    LogicalSplit s;
    s.physical_device = c.physical_device;
    s.count = c.count;
    if (c.memory_limits != nullptr && c.count > 0 && c.count <= 1024)
      s.memory_limits.assign(c.memory_limits, c.memory_limits + c.count);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

Context::Context(const dlrt_context_options* given, const EnvLookup& env_in) {
  // trusted_getenv (secure_getenv on POSIX): in a setuid/setgid process the environment is
  // the caller's, and DLRT_PLUGIN_PATH there would let any user choose the code this process
  // runs.
  EnvLookup env = env_in ? env_in : EnvLookup([](const char* n) -> const char* {
    return platform::trusted_getenv(n);
  });
  dlrt_context_options options = complete_options(given);

  std::string default_dir = options.search_default_paths != 0 ? default_plugin_dir() : "";
  settings_ = Settings::resolve(options, default_dir, env);
  if (options.log_level >= 0) set_log_level(static_cast<dlrt_log_level>(options.log_level));

  // Bad option text fails the create before anything is loaded.
  PluginOptions plugin_options = parse_plugin_options(settings_.value("DLRT_PLUGIN_OPTIONS"));
  std::vector<LogicalSplit> splits = logical_splits(options);

  SearchRequest request;
  for (size_t i = 0; i < options.num_plugin_paths; ++i)
    request.api_paths.push_back(options.plugin_paths[i] != nullptr ? options.plugin_paths[i] : "");
  if (options.search_default_paths != 0) {
    request.env_paths = settings_.env_plugin_path();
    request.default_dir = default_dir;
  }

  // Child-process check of each plugin's init first (plugin_isolation.hpp), when asked.
  const double isolate_s = options.isolate_plugins == 0    ? 0.0
                           : options.isolate_timeout_s > 0 ? options.isolate_timeout_s
                                                           : 10.0;
  std::map<std::string, std::string> names_taken;  // plugin name -> path that claimed it
  for (const PluginCandidate& candidate : find_plugin_candidates(request)) {
    std::unique_ptr<Plugin> p = load_plugin(candidate, plugin_options, names_taken, isolate_s);
    // A name is claimed once the plugin passed its ABI checks, even if it failed later: a
    // second copy of a plugin that failed is more likely a mistake than a fallback.
    if (!p->name.empty() && p->phase > DLRT_PHASE_ABI) names_taken.emplace(p->name, p->path);
    plugins_.push_back(std::move(p));
  }
  for (const auto& [name, opts] : plugin_options)
    if (names_taken.count(name) == 0)
      log(DLRT_LOG_WARNING, "context",
          "options were given for plugin '{}', but no plugin of "
          "that name was loaded",
          name);

  std::vector<PhysicalDevice> physical;
  for (size_t i = 0; i < plugins_.size(); ++i) {
    if (!plugins_[i]->usable()) continue;
    for (const DeviceDesc& d : plugins_[i]->devices) physical.push_back({i, d.ordinal, d.type});
  }
  try {
    registry_ =
        DeviceRegistry::build(std::move(physical), settings_.value("DLRT_VISIBLE_DEVICES"), splits);
  } catch (const Error& e) {
    // A visible-devices entry naming no device: say why devices may be missing too.
    const std::string why = why_devices_missing();
    if (e.code() != DLRT_NOT_FOUND || why.empty()) throw;
    fail(e.code(), fmt::format("{}; {}", e.message(), why));
  }
  arenas_.resize(registry_.devices().size());
  eager_ = std::make_unique<Eager>(*this);
  log(DLRT_LOG_INFO, "context", "{} plugin(s) found, {} device(s): {}", plugins_.size(),
      registry_.devices().size(), registry_.names());
}

Context::~Context() {
  if (eager_) {
    // Tensors hold a pointer to this context; they cannot be freed from here without the
    // caller's handles, so say so (their memory goes with the devices).
    if (size_t live = eager_->live_tensors(); live > 0)
      log(DLRT_LOG_WARNING, "context",
          "destroyed with {} tensor(s) still alive; destroy tensors "
          "before their context (their handles are now invalid)",
          live);
    eager_.reset();  // kernels, workspaces, streams: before the devices close
  }
  arenas_.clear();  // what the arenas hold goes back before the devices close
  // Reverse load order, as for any stack of libraries that may depend on each other.
  while (!plugins_.empty()) plugins_.pop_back();
}

std::string Context::why_devices_missing() const {
  std::vector<std::string> why;
  for (const auto& p : plugins_) {
    const std::string name = p->name.empty() ? p->path : p->name;
    if (p->state == DLRT_PLUGIN_LOADED) {
      if (p->devices.empty() && p->code == DLRT_UNAVAILABLE) {
        // The loader records "no devices: <the plugin's words>".
        constexpr std::string_view kPrefix = "no devices: ";
        std::string_view words = p->error;
        if (words.substr(0, kPrefix.size()) == kPrefix) words.remove_prefix(kPrefix.size());
        why.push_back(fmt::format("plugin {} has no devices: {}", name, words));
      }
    } else {
      why.push_back(fmt::format("plugin {} {}: {}", name,
                                p->state == DLRT_PLUGIN_REFUSED ? "was refused" : "failed to load",
                                p->error));
    }
  }
  return fmt::format("{}", fmt::join(why, "; "));
}

const Plugin& Context::plugin_of(size_t index) const {
  return *plugins_.at(registry_.physical().at(registry_.devices().at(index).physical).plugin);
}

// By capability, not by plugin name: the device says it is a numerical oracle (plugin.h,
// "Device attributes the host reads").
bool Context::is_oracle(size_t index) const {
  for (const dlrt_attr* a : desc_of(index).attr_ptrs)
    if (a != nullptr && a->name != nullptr && std::string_view(a->name) == "oracle")
      return (a->type == DLRT_ATTR_BOOL || a->type == DLRT_ATTR_INT) && a->i != 0;
  return false;
}

std::string Context::why_not_automatic(size_t index) const {
  if (!is_oracle(index) || registry_.visibility_listed()) return "";
  const std::string& name = registry_.devices().at(index).name;
  return fmt::format(
      "{} is the reference plugin's device (the slow numerical oracle), which automatic "
      "placement never picks; name it to use it (a device scope {}, or visible devices "
      "listing it)",
      name, name);
}

const DeviceDesc& Context::desc_of(size_t index) const {
  const PhysicalDevice& ph = registry_.physical().at(registry_.devices().at(index).physical);
  for (const DeviceDesc& d : plugins_.at(ph.plugin)->devices)
    if (d.ordinal == ph.ordinal) return d;
  fail(DLRT_INTERNAL, fmt::format("device {} has no description", index));
}

void Context::check_device(size_t index) const {
  if (index >= registry_.devices().size())
    fail(DLRT_OUT_OF_RANGE, fmt::format("device index {} is out of range; the context has {} "
                                        "device(s): {}",
                                        index, registry_.devices().size(), registry_.names()));
}

const std::string& Context::device_name(size_t index) const {
  return registry_.devices().at(index).name;
}

std::pair<const dlrt_plugin_api*, dlrt_device*> Context::device_handle(size_t index) {
  check_device(index);
  const PhysicalDevice& ph = registry_.physical()[registry_.devices()[index].physical];
  Plugin& plugin = *plugins_[ph.plugin];
  return {&plugin.api(), plugin.open_device(ph.ordinal)};
}

ArenaOptions Context::arena_options(size_t index) const {
  check_device(index);
  const LogicalDevice& dev = registry_.devices()[index];
  ArenaOptions o;
  o.limit = dev.memory_limit;
  o.share = dev.logical_count;
  if (desc_of(index).device_class == DLRT_DEVICE_CLASS_GPU) {
    o.allow_growth = settings_.gpu_allow_growth();
    o.preallocate_fraction = settings_.memory_fraction();
    if (o.limit == 0) o.limit = settings_.gpu_memory_limit();
  }
  return o;
}

DeviceArena& Context::arena(size_t index) {
  check_device(index);
  std::lock_guard<std::mutex> lock(arenas_mu_);
  if (!arenas_[index]) {
    ArenaOptions options = arena_options(index);
    auto [api, handle] = device_handle(index);
    if (!options.allow_growth) {
      // Measured once per physical device, before any of its logical devices reserves, so
      // each of them takes the same share.
      const size_t physical = registry_.devices()[index].physical;
      auto it = physical_free_.find(physical);
      if (it == physical_free_.end()) {
        uint64_t free_bytes = 0, total = 0;
        plugin_call(fmt::format("{}: memory_info", device_name(index)),
                    [&] { return api->memory_info(handle, &free_bytes, &total); });
        it = physical_free_.emplace(physical, free_bytes).first;
      }
      options.physical_free = it->second;
    }
    arenas_[index] = std::make_unique<DeviceArena>(device_name(index), api, handle, options);
  }
  return *arenas_[index];
}

}  // namespace dlrt::core
