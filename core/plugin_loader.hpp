// plugin_loader.hpp: loading one plugin, in phases, recording exactly where and why it stopped.
//
//   OPEN     dlopen (Boost.DLL, RTLD_NOW | RTLD_LOCAL) and look up dlrt_plugin_init
//   ABI      call dlrt_plugin_init with the host table; check major, minor >= floor, the
//            struct_size, the required entries, and that the name is not taken
//   CREATE   plugin_create with this plugin's options
//   DEVICES  device_count, then device_get_desc for each device (deep-copied)
//
// Every outcome becomes a `Plugin` record (path, name, phase, state, code, message); nothing
// here throws for a broken plugin, so one broken plugin never stops the others. A plugin that
// cannot list devices (e.g. CUDA on a machine without a GPU) is LOADED with zero devices and
// that error as its reason.
//
// The parts each have a file: the options (plugin_options.hpp), the table checks of the ABI
// phase (plugin_abi_check.hpp), the device descriptions' copies (plugin_device_desc.hpp) and
// the library's dlopen name and unload (plugin_library.hpp).
//
// Ownership: a `Plugin` owns its library handle, its plugin instance and the devices opened on
// it; its destructor closes the devices, calls plugin_destroy, then unloads the library — in
// that order, because each needs the one after it still alive.
#pragma once

#include <dlrt/dlrt.h>
#include <dlrt/plugin.h>

#include <boost/dll/shared_library.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "plugin_device_desc.hpp"
#include "plugin_options.hpp"
#include "plugin_search.hpp"

namespace dlrt::core {

class Plugin {
 public:
  Plugin() = default;
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  // ---- the record (what dlrt_plugin_info shows) ----
  std::string path, origin, name, platform, version;
  dlrt_plugin_state state = DLRT_PLUGIN_LOADED;
  dlrt_plugin_phase phase = DLRT_PHASE_SEARCH;
  uint32_t abi_major = 0, abi_minor = 0;
  dlrt_code code = DLRT_OK;
  std::string error;
  int32_t device_count = 0;         // as the plugin reported it
  std::vector<DeviceDesc> devices;  // the ones it described, in ordinal order

  // ---- the live plugin (LOADED only) ----
  bool usable() const { return state == DLRT_PLUGIN_LOADED && loaded_; }
  // The host's copy of the plugin's table: every field past the plugin's struct_size is zero.
  const dlrt_plugin_api& api() const { return api_; }
  dlrt_plugin* instance() const { return instance_; }
  // Opens device `ordinal` on first use and returns the same handle afterwards. Thread-safe.
  // Throws Error with the plugin's code and message if device_open fails.
  dlrt_device* open_device(int32_t ordinal);

 private:
  friend std::unique_ptr<Plugin> load_plugin(const PluginCandidate&, const PluginOptions&,
                                             const std::map<std::string, std::string>&, double);
  // The descriptor the search checked and dlopen loaded (/proc/self/fd/N). Held while the
  // library is loaded (declared before library_, so it closes after the unload): the fd number
  // cannot be reused, so the name "/proc/self/fd/N" keeps meaning this file.
  std::shared_ptr<PluginFile> file_;
  boost::dll::shared_library library_;
  dlrt_plugin_api api_{};
  dlrt_plugin* instance_ = nullptr;
  bool created_ = false;
  bool loaded_ = false;
  std::mutex mutex_;
  std::map<int32_t, dlrt_device*> open_devices_;
};

// Runs the phases for one candidate. `names_taken` maps plugin names already claimed to the
// path that claimed them (a second plugin of the same name is refused). Never throws for
// anything the plugin does; may throw std::bad_alloc.
// isolate_timeout_s > 0: first check load + init in a child process with that timeout
// (plugin_isolation.hpp); a plugin that crashes, exits or hangs there is recorded FAILED in
// phase ABI and never loaded here. 0: load in-process directly.
std::unique_ptr<Plugin> load_plugin(const PluginCandidate& candidate, const PluginOptions& options,
                                    const std::map<std::string, std::string>& names_taken,
                                    double isolate_timeout_s = 0);

}  // namespace dlrt::core
