// context.hpp: what a dlrt_context is inside: settings, the loaded plugins, the device registry.
//
// Ownership: the context owns every Plugin (and through them the libraries, plugin instances
// and opened devices) and every string it hands out in info structs; all of it lives until
// dlrt_context_destroy. Plugins are destroyed in reverse load order.
//
// Threads: after create, the context is read-only except for lazily opened devices, which the
// Plugin guards with its own mutex, and its Eager state (tensor memory, kernel caches,
// streams), which guards itself (see eager.hpp); so queries may come from any thread.
//
// Memory: one DeviceArena per registry (logical) device, made at its first use (arena()):
// every byte the core takes from a device goes through it (memory/arena.hpp).
//
// Destruction: the Eager state first (kernels, workspaces, streams), then the arenas (what
// they still hold goes back to the plugins), then the plugins (each closes its devices before
// plugin_destroy). Tensors, graphs and executables must be gone by then.
#pragma once

#include <dlrt/dlrt.h>
#include <dlrt/plugin.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "device_registry.hpp"
#include "memory/arena.hpp"
#include "plugin_loader.hpp"
#include "settings.hpp"

namespace dlrt::core {

// dlrt_context_options with every field present: the caller's fields (as far as its
// struct_size reaches) over the defaults. Throws INVALID_ARGUMENT for a bad struct_size.
dlrt_context_options complete_options(const dlrt_context_options* options);

class Eager;

class Context {
 public:
  // Loads plugins and builds the registry. Throws Error for bad options (see dlrt.h); a plugin
  // that fails to load is recorded, never thrown. `env` stands in for getenv in tests.
  explicit Context(const dlrt_context_options* options, const EnvLookup& env = nullptr);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Settings& settings() const { return settings_; }
  const std::vector<std::unique_ptr<Plugin>>& plugins() const { return plugins_; }
  const DeviceRegistry& registry() const { return registry_; }

  // The plugin and physical description behind registry device `index` (< device count).
  const Plugin& plugin_of(size_t index) const;
  const DeviceDesc& desc_of(size_t index) const;

  // For the executor and the memory arenas: the plugin table and the opened device
  // behind registry device `index`. Opens the physical device on first use; logical devices of
  // one physical device share one handle. Throws OUT_OF_RANGE, or the plugin's open error.
  std::pair<const dlrt_plugin_api*, dlrt_device*> device_handle(size_t index);

  // OUT_OF_RANGE unless `index` names a visible device.
  void check_device(size_t index) const;

  // Why a device the user asked for may be missing, for the errors and placement details that
  // say a request matches no device: every plugin that loaded without devices because its
  // platform is unusable (UNAVAILABLE, plugin.h's "no driver / no device", e.g. "plugin cuda
  // has no devices: cuda: no CUDA device: cudaErrorInsufficientDriver ...") and every plugin
  // that failed to load or was refused, with its recorded reason; "; "-separated, "" if none.
  // Plugins that simply have no devices for another reason (the null skeleton) are left out.
  std::string why_devices_missing() const;
  // The reference plugin's devices are the numerical oracle: every op, double accumulation, no
  // speed (a 2 s training job takes over a minute). Automatic placement (op priority, compile's
  // auto device, the default devices of a strategy) never picks one unless the user named it:
  // by a device scope or request that matches it ("/device:REF:0"), or by a visible-devices
  // list (option visible_devices or DLRT_VISIBLE_DEVICES, e.g. "REF"). A refused cpu plugin
  // must not silently turn a job into an oracle run.
  bool is_oracle(size_t index) const;
  // "" when automatic placement may pick registry device `index`; otherwise why not, in words
  // that tell the user how to ask for it ("REF:0 is the reference plugin's device ...").
  std::string why_not_automatic(size_t index) const;
  bool automatic_candidate(size_t index) const { return why_not_automatic(index).empty(); }
  // "/device:CPU:0" for registry device `index` (< device count).
  const std::string& device_name(size_t index) const;

  // Eager execution and tensor memory (eager.hpp).
  Eager& eager() { return *eager_; }

  // The memory arena of registry device `index`, made (and its device opened) on first use.
  // Its options: CPU-class devices always grow; GPU-class devices follow the settings
  // (gpu_allow_growth, memory_fraction, gpu_memory_limit); a logical device config's non-zero
  // limit wins over gpu_memory_limit. Throws OUT_OF_RANGE, or the plugin's open error.
  // Thread-safe; the reference stays valid until the context is destroyed.
  DeviceArena& arena(size_t index);
  // The options arena(index) is (or will be) made with; no device is opened.
  ArenaOptions arena_options(size_t index) const;

 private:
  Settings settings_;
  std::vector<std::unique_ptr<Plugin>> plugins_;
  DeviceRegistry registry_;
  std::mutex arenas_mu_;
  std::vector<std::unique_ptr<DeviceArena>> arenas_;  // by registry device; null until used
  std::map<size_t, uint64_t> physical_free_;          // free bytes per physical device, growth off
  std::unique_ptr<Eager> eager_;  // after registry_: built from it, destroyed before plugins_
};

}  // namespace dlrt::core

// The opaque handle of dlrt.h is the Context itself.
struct dlrt_context : dlrt::core::Context {
  using dlrt::core::Context::Context;
};
