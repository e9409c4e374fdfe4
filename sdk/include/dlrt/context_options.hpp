// dlrt/context_options.hpp: the options a Context is made with. A builder that owns its
// strings, turned into dlrt_context_options (which only points at them) when a Context is
// made. Unset fields keep the C defaults, which read the environment (DLRT_VISIBLE_DEVICES,
// DLRT_LOG_LEVEL, ...).
#ifndef DLRT_CONTEXT_OPTIONS_HPP_
#define DLRT_CONTEXT_OPTIONS_HPP_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dlrt/dlrt.h"

namespace dlrt {

class ContextOptions {
 public:
  struct LogicalDevices {
    std::string physical_device;  // "CPU:0"
    int32_t count = 1;
    std::vector<uint64_t> memory_limits;  // empty, or `count` limits in bytes (0 = none)
  };

  // A plugin file or folder searched before the default places (absolute path). Repeatable.
  ContextOptions& plugin_path(std::string path) {
    plugin_paths_.push_back(std::move(path));
    return *this;
  }
  // false: search only the plugin_path()s (not DLRT_PLUGIN_PATH, not the install tree).
  ContextOptions& search_default_paths(bool on) {
    search_default_paths_ = on ? 1 : 0;
    return *this;
  }
  // true: check each plugin's load + init in a child process first, waiting at most
  // timeout_s (0: 10 s); one that crashes, exits or hangs there is recorded FAILED with the
  // reason and never loaded into this process (dlrt_context_options.isolate_plugins).
  ContextOptions& isolate_plugins(bool on, double timeout_s = 0) {
    isolate_plugins_ = on ? 1 : 0;
    isolate_timeout_s_ = timeout_s;
    return *this;
  }
  // "CPU:0,GPU:1", "GPU", ...; overrides DLRT_VISIBLE_DEVICES.
  ContextOptions& visible_devices(std::string list) {
    visible_devices_ = std::move(list);
    return *this;
  }
  // "cpu:threads=2;reference:num_devices=3"; overrides DLRT_PLUGIN_OPTIONS.
  ContextOptions& plugin_options(std::string options) {
    plugin_options_ = std::move(options);
    return *this;
  }
  // Split `physical_device` into `count` logical devices. Repeatable, one per physical device.
  ContextOptions& logical_devices(std::string physical_device, int32_t count,
                                  std::vector<uint64_t> memory_limits = {}) {
    logical_.push_back({std::move(physical_device), count, std::move(memory_limits)});
    return *this;
  }
  // Overrides DLRT_LOG_LEVEL.
  ContextOptions& log_level(dlrt_log_level level) {
    log_level_ = level;
    return *this;
  }
  // TensorFlow's set_log_device_placement; overrides DLRT_LOG_DEVICE_PLACEMENT.
  ContextOptions& log_device_placement(bool on) {
    log_device_placement_ = on ? 1 : 0;
    return *this;
  }
  // true (default): a requested device that cannot run an op yields to one that can.
  ContextOptions& soft_placement(bool on) {
    soft_placement_ = on ? 1 : 0;
    return *this;
  }
  // GPU memory (TensorFlow's set_memory_growth / memory_limit): growth on (default) takes
  // memory as needed; off reserves `fraction` (0 = 0.9) of free memory at first use. Override
  // DLRT_GPU_ALLOW_GROWTH.
  ContextOptions& memory_growth(bool on, double fraction = 0.0) {
    memory_growth_ = on ? 1 : 0;
    memory_fraction_ = fraction;
    return *this;
  }
  // Limit in bytes per GPU-class logical device; overrides DLRT_GPU_MEMORY_LIMIT_MB.
  ContextOptions& gpu_memory_limit(uint64_t bytes) {
    gpu_memory_limit_ = bytes;
    return *this;
  }

  // The C view: dlrt_context_options pointing into this object and into the view's own
  // arrays, valid while both live and neither changes. Context's constructor uses it.
  struct CView {
    dlrt_context_options options;
    std::vector<const char*> paths;
    std::vector<dlrt_logical_device_config> logical;
  };
  void to_c(CView* view) const {
    dlrt_context_options_init(&view->options);
    dlrt_context_options& o = view->options;
    view->paths.clear();
    for (const std::string& p : plugin_paths_) view->paths.push_back(p.c_str());
    o.plugin_paths = view->paths.empty() ? nullptr : view->paths.data();
    o.num_plugin_paths = view->paths.size();
    if (search_default_paths_) o.search_default_paths = *search_default_paths_;
    o.isolate_plugins = isolate_plugins_;
    o.isolate_timeout_s = isolate_timeout_s_;
    if (log_level_) o.log_level = *log_level_;
    if (visible_devices_) o.visible_devices = visible_devices_->c_str();
    if (plugin_options_) o.plugin_options = plugin_options_->c_str();
    view->logical.clear();
    for (const LogicalDevices& l : logical_) {
      dlrt_logical_device_config c{};
      c.struct_size = DLRT_STRUCT_SIZE(dlrt_logical_device_config);
      c.physical_device = l.physical_device.c_str();
      c.count = l.count;
      c.memory_limits = l.memory_limits.empty() ? nullptr : l.memory_limits.data();
      view->logical.push_back(c);
    }
    o.logical_devices = view->logical.empty() ? nullptr : view->logical.data();
    o.num_logical_devices = view->logical.size();
    if (log_device_placement_) o.log_device_placement = *log_device_placement_;
    if (soft_placement_) o.soft_placement = *soft_placement_;
    if (memory_growth_) o.memory_growth = *memory_growth_;
    o.memory_fraction = memory_fraction_;
    o.gpu_memory_limit = gpu_memory_limit_;
  }

 private:
  std::vector<std::string> plugin_paths_;
  std::optional<int32_t> search_default_paths_;
  int32_t isolate_plugins_ = 0;
  double isolate_timeout_s_ = 0;
  std::optional<std::string> visible_devices_;
  std::optional<std::string> plugin_options_;
  std::vector<LogicalDevices> logical_;
  std::optional<int32_t> log_level_;
  std::optional<int32_t> log_device_placement_;
  std::optional<int32_t> soft_placement_;
  std::optional<int32_t> memory_growth_;
  double memory_fraction_ = 0.0;
  uint64_t gpu_memory_limit_ = 0;
};

}  // namespace dlrt

#endif  // DLRT_CONTEXT_OPTIONS_HPP_
