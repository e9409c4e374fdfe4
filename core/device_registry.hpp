// device_registry.hpp: the devices a context exposes, with TensorFlow names.
//
// Input: the physical devices of the loaded plugins, in plugin load order. Each gets a base
// name TYPE:n, n counting devices of that type across plugins (/device:CPU:0, /device:REF:1).
// Then, in this order:
//   1. visibility (option visible_devices, else DLRT_VISIBLE_DEVICES): a comma list of specs,
//      "CPU:0,GPU:1" or a bare type "GPU" (all of that type). Only the listed devices remain,
//      renumbered per type in list order. A malformed spec is INVALID_ARGUMENT; a spec that
//      names no device is NOT_FOUND listing the devices there are (a device asked for by name
//      that is missing is an error, never a silent switch to another device).
//   2. logical splits (dlrt_logical_device_config, naming devices as visibility numbered them):
//      one physical device becomes `count` logical ones with their own memory limits; they
//      take consecutive indices of that type and the later devices of the type shift up.
//
// The registry is plain data: it neither loads nor opens anything, which keeps it testable
// without plugins. The context maps its entries back to plugins.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dlrt::core {

struct PhysicalDevice {
  size_t plugin = 0;    // index of its plugin in the context's plugin list
  int32_t ordinal = 0;  // its ordinal inside that plugin
  std::string type;     // upper case, "CPU"
};

struct LogicalDevice {
  size_t physical = 0;  // index into DeviceRegistry::physical()
  std::string type;
  int32_t index = 0;          // the n of TYPE:n
  std::string name;           // "/device:GPU:0"
  std::string full_name;      // "/job:localhost/replica:0/task:0/device:GPU:0"
  int32_t logical_index = 0;  // which split of its physical device
  int32_t logical_count = 1;
  uint64_t memory_limit = 0;  // bytes, 0 = none
};

struct LogicalSplit {
  std::string physical_device;          // a device spec, "GPU:0"
  int32_t count = 1;                    // >= 1
  std::vector<uint64_t> memory_limits;  // empty, or `count` limits
};

class DeviceRegistry {
 public:
  DeviceRegistry() = default;

  // Throws Error: INVALID_ARGUMENT (malformed spec, bad split), NOT_FOUND (a visible-devices
  // spec naming no device). `visible_devices` "" means all.
  static DeviceRegistry build(std::vector<PhysicalDevice> physical,
                              std::string_view visible_devices,
                              const std::vector<LogicalSplit>& splits);

  const std::vector<PhysicalDevice>& physical() const { return physical_; }
  const std::vector<LogicalDevice>& devices() const { return devices_; }

  // The index of the device matching `spec` ("GPU:0", "/device:CPU:0", "cpu" = first CPU).
  // Throws INVALID_ARGUMENT (malformed, or no type), NOT_FOUND listing the devices there are.
  size_t find(std::string_view spec) const;

  // "/device:CPU:0, /device:GPU:0" or "none".
  std::string names() const;

  // True when a visible-devices list chose the devices: then the user named every device there
  // is (by type or TYPE:n), which is how a program asks for the reference plugin's devices
  // without a device scope (placement never picks those unless named; context.hpp).
  bool visibility_listed() const { return visibility_listed_; }

 private:
  std::vector<PhysicalDevice> physical_;
  std::vector<LogicalDevice> devices_;
  bool visibility_listed_ = false;
};

}  // namespace dlrt::core
