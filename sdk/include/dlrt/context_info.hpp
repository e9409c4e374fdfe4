// dlrt/context_info.hpp: what a Context reports about its plugins, devices and settings, as
// plain values (Attr, PluginInfo, MemoryStats, DeviceInfo, Setting). Their strings and numbers
// are copied out of the C structs, so they stay valid after the context is gone.
#ifndef DLRT_CONTEXT_INFO_HPP_
#define DLRT_CONTEXT_INFO_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dlrt/error.hpp"

namespace dlrt {

// One typed attribute of a device, as its plugin reports it (op attributes are OpAttr,
// op_attr.hpp). `type` says which value fields mean something, as in dlrt_attr.
struct Attr {
  std::string name;
  dlrt_attr_type type = DLRT_ATTR_NONE;
  int64_t i = 0;               // INT, BOOL (0/1), DTYPE (a dlrt_dtype)
  double f = 0.0;              // FLOAT
  std::string s;               // STRING
  std::vector<int64_t> ints;   // INTS
  std::vector<double> floats;  // FLOATS

  static Attr from_c(const dlrt_attr& c) {
    Attr a;
    a.name = detail::str(c.name);
    a.type = static_cast<dlrt_attr_type>(c.type);
    a.i = c.i;
    a.f = c.f;
    a.s = detail::str(c.s);
    if (c.type == DLRT_ATTR_INTS && c.ints != nullptr) a.ints.assign(c.ints, c.ints + c.count);
    if (c.type == DLRT_ATTR_FLOATS && c.floats != nullptr)
      a.floats.assign(c.floats, c.floats + c.count);
    return a;
  }
};

// What the context knows about one plugin file it found, loaded or not.
struct PluginInfo {
  std::string path;      // absolute canonical path
  std::string name;      // "" if the plugin never said
  std::string platform;  // "" if the plugin never said
  std::string version;
  dlrt_plugin_state state = DLRT_PLUGIN_FAILED;
  dlrt_plugin_phase phase = DLRT_PHASE_SEARCH;  // reached; where it stopped if not loaded
  uint32_t abi_major = 0;                       // declared by the plugin; 0 if unknown
  uint32_t abi_minor = 0;
  dlrt_code error_code = DLRT_OK;  // why it failed, or why a loaded plugin has no devices
  int32_t device_count = 0;        // before visibility filtering
  std::string error;               // "" if none

  bool loaded() const { return state == DLRT_PLUGIN_LOADED; }

  static PluginInfo from_c(const dlrt_plugin_info& c) {
    PluginInfo p;
    p.path = detail::str(c.path);
    p.name = detail::str(c.name);
    p.platform = detail::str(c.platform);
    p.version = detail::str(c.version);
    p.state = static_cast<dlrt_plugin_state>(c.state);
    p.phase = static_cast<dlrt_plugin_phase>(c.phase);
    p.abi_major = c.abi_major;
    p.abi_minor = c.abi_minor;
    p.error_code = static_cast<dlrt_code>(c.error_code);
    p.device_count = c.device_count;
    p.error = detail::str(c.error);
    return p;
  }
};

// A device's memory arena (dlrt_memory_stats): bytes asked for by live allocations, their
// peak, bytes held from the plugin, the limit (0 = none), and mem_alloc calls so far.
struct MemoryStats {
  uint64_t in_use = 0;
  uint64_t peak = 0;
  uint64_t reserved = 0;
  uint64_t limit = 0;
  uint64_t num_allocs = 0;
};

// One visible (possibly logical) device, with its plugin's description.
struct DeviceInfo {
  std::string name;       // "/device:GPU:0"
  std::string full_name;  // "/job:localhost/replica:0/task:0/device:GPU:0"
  std::string type;       // "GPU"
  int32_t index = 0;      // N in TYPE:N
  dlrt_device_class device_class = DLRT_DEVICE_CLASS_UNKNOWN;
  std::string platform;  // "cuda"
  std::string plugin;    // plugin name
  int32_t plugin_ordinal = 0;
  int32_t logical_index = 0;
  int32_t logical_count = 1;
  uint64_t memory_total = 0;  // bytes of the physical device
  uint64_t memory_limit = 0;  // this logical device's limit; 0 = none
  std::string model;
  std::string vendor;
  std::string pci_bus_id;
  std::string uuid;
  int32_t compute_capability_major = 0;
  int32_t compute_capability_minor = 0;
  int32_t core_count = 0;
  std::string driver_version;
  std::string library_versions;
  double peak_gflops = 0.0;
  double memory_bandwidth_gbps = 0.0;
  double launch_overhead_us = 0.0;
  std::vector<Attr> attrs;

  // The attribute called `attr_name`, if the plugin reported one.
  std::optional<Attr> attr(const std::string& attr_name) const {
    for (const Attr& a : attrs)
      if (a.name == attr_name) return a;
    return std::nullopt;
  }

  static DeviceInfo from_c(const dlrt_device_info& c) {
    DeviceInfo d;
    d.name = detail::str(c.name);
    d.full_name = detail::str(c.full_name);
    d.type = detail::str(c.type);
    d.index = c.index;
    d.device_class = static_cast<dlrt_device_class>(c.device_class);
    d.platform = detail::str(c.platform);
    d.plugin = detail::str(c.plugin);
    d.plugin_ordinal = c.plugin_ordinal;
    d.logical_index = c.logical_index;
    d.logical_count = c.logical_count;
    d.memory_total = c.memory_total;
    d.memory_limit = c.memory_limit;
    d.model = detail::str(c.model);
    d.vendor = detail::str(c.vendor);
    d.pci_bus_id = detail::str(c.pci_bus_id);
    d.uuid = detail::str(c.uuid);
    d.compute_capability_major = c.compute_capability_major;
    d.compute_capability_minor = c.compute_capability_minor;
    d.core_count = c.core_count;
    d.driver_version = detail::str(c.driver_version);
    d.library_versions = detail::str(c.library_versions);
    d.peak_gflops = c.peak_gflops;
    d.memory_bandwidth_gbps = c.memory_bandwidth_gbps;
    d.launch_overhead_us = c.launch_overhead_us;
    if (c.attrs != nullptr) {
      d.attrs.reserve(c.num_attrs);
      for (size_t k = 0; k < c.num_attrs; ++k)
        if (c.attrs[k] != nullptr) d.attrs.push_back(Attr::from_c(*c.attrs[k]));
    }
    return d;
  }
};

// One configuration setting and where its effective value came from (dlprobe --env).
struct Setting {
  std::string name;   // "DLRT_LOG_LEVEL"
  std::string value;  // effective value as text; "" when unset
  dlrt_setting_source source = DLRT_SOURCE_DEFAULT;
  std::string help;

  static Setting from_c(const dlrt_setting& c) {
    Setting s;
    s.name = detail::str(c.name);
    s.value = detail::str(c.value);
    s.source = static_cast<dlrt_setting_source>(c.source);
    s.help = detail::str(c.help);
    return s;
  }
};

}  // namespace dlrt

#endif  // DLRT_CONTEXT_INFO_HPP_
