// device_spec.hpp: TensorFlow's device-spec grammar, parsed and formatted.
//
//   /job:<name>/replica:<n>/task:<n>/device:<TYPE>:<n>
//
// Every part is optional; parts come in that order, each at most once. Short forms accepted:
// "/GPU:0", "GPU:0", "gpu:0", "/device:GPU:0", "GPU" (no index: "any device of that type"),
// "cpu", and an index of "*" (also "any"). Types are case-insensitive and stored upper-case.
//
// Why the short form TYPE:<n> takes only upper-case types (or cpu/gpu in any case): without
// the "device:" keyword a part is only recognisable as a device by its look, and "/foo:1" is
// far more likely a typo of a key than a device of type FOO. "/device:foo:1" is accepted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dlrt::core {

struct DeviceSpec {
  std::string job;       // "" when absent
  int32_t replica = -1;  // -1 when absent
  int32_t task = -1;     // -1 when absent
  std::string type;      // upper case; "" when absent
  int32_t index = -1;    // -1 when absent

  // True when job/replica/task are absent or name this process (localhost/0/0).
  bool is_local() const;
};

// Limits that match the fixed-size fields of dlrt_device_spec (with room for the NUL).
inline constexpr size_t kMaxJobLength = 63;
inline constexpr size_t kMaxTypeLength = 31;

// Parses `text`; throws Error(INVALID_ARGUMENT) naming the bad part and what was expected.
DeviceSpec parse_device_spec(std::string_view text);

// "/job:localhost/replica:0/task:0/device:GPU:0"; absent job/replica/task/index take the
// defaults localhost/0/0/0. An absent type leaves the device part out.
std::string format_device_spec(const DeviceSpec& spec);

// "/device:GPU:0" and "/job:localhost/replica:0/task:0/device:GPU:0".
std::string short_device_name(const std::string& type, int32_t index);
std::string full_device_name(const std::string& type, int32_t index);

}  // namespace dlrt::core
