// plugin_device_desc.hpp: the host's deep copy of a plugin's dlrt_device_desc. The plugin's
// strings and attributes may die with the plugin; DeviceDesc owns copies of them, valid after
// it is gone, and fields past an older plugin's struct_size read as zero.
#pragma once

#include <dlrt/dlrt.h>
#include <dlrt/plugin.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dlrt::core {

// A dlrt_attr with everything it points to owned by this object (stable address: hold it by
// unique_ptr, since `attr` points into the strings and vectors beside it).
struct OwnedAttr {
  std::string name;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  dlrt_attr attr{};
};

// A deep copy of dlrt_device_desc: valid after the plugin is gone, strings never NULL.
struct DeviceDesc {
  int32_t device_class = DLRT_DEVICE_CLASS_UNKNOWN;
  int32_t ordinal = 0;
  std::string type;  // upper case; derived from the class when the plugin left it empty
  std::string name, vendor, pci_bus_id, uuid;
  int32_t compute_capability_major = 0, compute_capability_minor = 0, core_count = 0;
  uint64_t memory_total = 0;
  std::string driver_version, library_versions;
  double peak_gflops = 0, memory_bandwidth_gbps = 0, launch_overhead_us = 0;
  std::vector<std::unique_ptr<OwnedAttr>> attrs;
  std::vector<const dlrt_attr*> attr_ptrs;  // what dlrt_device_info.attrs points at
};

// A copy of `d` for device `ordinal`: strings never NULL, the type upper case (derived from
// the device class when the plugin left it empty), every attribute deep-copied.
DeviceDesc copy_desc(const dlrt_device_desc& d, int32_t ordinal);

}  // namespace dlrt::core
