// device_registry.cc: see device_registry.hpp.
#include "device_registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "device_spec.hpp"
#include "settings.hpp"
#include "status.hpp"

namespace dlrt::core {
namespace {

// A device of some stage: which physical device, and its TYPE:n name at that stage.
struct Named {
  size_t physical;
  std::string type;
  int32_t index;
};

std::string list_of(const std::vector<Named>& devices) {
  std::string out;
  for (const auto& d : devices)
    out += (out.empty() ? "" : ", ") + short_device_name(d.type, d.index);
  return out.empty() ? "none (no plugin reported a device)" : out;
}

// Numbers `devices` per type in their current order.
void renumber(std::vector<Named>& devices) {
  std::map<std::string, int32_t> next;
  for (auto& d : devices) d.index = next[d.type]++;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Positions in `devices` matching `spec` (all of the type when it has no index).
std::vector<size_t> matches(const std::vector<Named>& devices, const DeviceSpec& spec) {
  std::vector<size_t> out;
  if (!spec.is_local()) return out;
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].type == spec.type && (spec.index < 0 || devices[i].index == spec.index))
      out.push_back(i);
  return out;
}

DeviceSpec parse_typed(std::string_view text, const char* what) {
  DeviceSpec spec = parse_device_spec(text);
  if (spec.type.empty())
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{} '{}' names no device type; expected e.g. GPU:0, CPU or /device:CPU:0",
                     what, text));
  return spec;
}

}  // namespace

DeviceRegistry DeviceRegistry::build(std::vector<PhysicalDevice> physical,
                                     std::string_view visible_devices,
                                     const std::vector<LogicalSplit>& splits) {
  DeviceRegistry reg;
  reg.physical_ = std::move(physical);

  // Base names, in plugin load order.
  std::vector<Named> all;
  for (size_t i = 0; i < reg.physical_.size(); ++i) all.push_back({i, reg.physical_[i].type, 0});
  renumber(all);

  // 1. Visibility.
  std::vector<Named> visible;
  std::string list = trim(visible_devices);
  if (list.empty()) {
    visible = all;
  } else {
    reg.visibility_listed_ = true;
    std::vector<bool> taken(all.size(), false);
    for (const std::string& item : split_nonempty(list, ',')) {
      std::string text = trim(item);
      if (text.empty()) continue;
      DeviceSpec spec = parse_typed(text, "visible device");
      std::vector<size_t> found = matches(all, spec);
      if (found.empty())
        fail(DLRT_NOT_FOUND,
             fmt::format("visible devices '{}': '{}' matches no device; devices there are: {}",
                         list, text, list_of(all)));
      // A device listed twice ("GPU:1,GPU") keeps its first place.
      for (size_t i : found)
        if (!taken[i]) {
          taken[i] = true;
          visible.push_back(all[i]);
        }
    }
    renumber(visible);
  }

  // 2. Logical splits, named as visibility numbered the devices.
  struct Split {
    int32_t count = 1;
    std::vector<uint64_t> limits;
  };
  std::map<size_t, Split> split_of;  // position in `visible` -> split
  for (const auto& s : splits) {
    DeviceSpec spec = parse_typed(s.physical_device, "logical device config");
    if (spec.index < 0) spec.index = -2;  // "GPU" alone is ambiguous: require an index
    std::vector<size_t> found = matches(visible, spec);
    if (spec.index == -2 || found.size() != 1)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("logical device config '{}' must name exactly one visible device; "
                       "devices there are: {}",
                       s.physical_device, list_of(visible)));
    if (s.count < 1 || s.count > 1024)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("logical device config '{}': count is {}, expected 1..1024",
                       s.physical_device, s.count));
    if (!s.memory_limits.empty() && s.memory_limits.size() != static_cast<size_t>(s.count))
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("logical device config '{}': {} memory limits for {} devices",
                       s.physical_device, s.memory_limits.size(), s.count));
    if (split_of.count(found[0]) != 0)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("logical device config '{}': device {} is split twice", s.physical_device,
                       short_device_name(visible[found[0]].type, visible[found[0]].index)));
    split_of[found[0]] = Split{s.count, s.memory_limits};
  }

  // Expand in place, then number per type: split devices get consecutive indices and every
  // later device of the type moves up.
  std::vector<LogicalDevice> out;
  for (size_t pos = 0; pos < visible.size(); ++pos) {
    auto it = split_of.find(pos);
    int32_t count = it == split_of.end() ? 1 : it->second.count;
    for (int32_t k = 0; k < count; ++k) {
      LogicalDevice d;
      d.physical = visible[pos].physical;
      d.type = visible[pos].type;
      d.logical_index = k;
      d.logical_count = count;
      if (it != split_of.end() && !it->second.limits.empty()) d.memory_limit = it->second.limits[k];
      out.push_back(std::move(d));
    }
  }
  std::map<std::string, int32_t> next;
  for (auto& d : out) {
    d.index = next[d.type]++;
    d.name = short_device_name(d.type, d.index);
    d.full_name = full_device_name(d.type, d.index);
  }
  reg.devices_ = std::move(out);
  return reg;
}

size_t DeviceRegistry::find(std::string_view text) const {
  DeviceSpec spec = parse_typed(text, "device spec");
  if (spec.is_local()) {
    for (size_t i = 0; i < devices_.size(); ++i)
      if (devices_[i].type == spec.type && (spec.index < 0 || devices_[i].index == spec.index))
        return i;
    fail(DLRT_NOT_FOUND,
         fmt::format("no device matches '{}'; devices there are: {}", text, names()));
  }
  fail(DLRT_NOT_FOUND, fmt::format("no device matches '{}': this context is a single process "
                                   "(/job:localhost/replica:0/task:0); devices there are: {}",
                                   text, names()));
}

std::string DeviceRegistry::names() const {
  std::string out;
  for (const auto& d : devices_) out += (out.empty() ? "" : ", ") + d.name;
  return out.empty() ? "none (no plugin reported a device)" : out;
}

}  // namespace dlrt::core
