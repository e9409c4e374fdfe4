// dlrt/device_spec.hpp: device specs, TensorFlow's
// "/job:localhost/replica:0/task:0/device:GPU:0" with every part optional ("GPU:0",
// "/device:CPU:0", "cpu", ...). Parsing and formatting are libdlrt's; DeviceSpec is a plain
// value that copies the parts out of dlrt_device_spec.
#ifndef DLRT_DEVICE_SPEC_HPP_
#define DLRT_DEVICE_SPEC_HPP_

#include <cstddef>
#include <cstdint>
#include <string>

#include "dlrt/error.hpp"

namespace dlrt {

struct DeviceSpec {
  std::string job;  // "" when absent
  int32_t replica = -1;
  int32_t task = -1;
  std::string type;    // "CPU", "GPU", ... (upper-case); "" when absent
  int32_t index = -1;  // -1: any device of that type

  // Throws Error(DLRT_INVALID_ARGUMENT) naming the malformed part.
  static DeviceSpec parse(const std::string& text) {
    dlrt_device_spec c{};
    c.struct_size = DLRT_STRUCT_SIZE(dlrt_device_spec);
    check(dlrt_device_spec_parse(text.c_str(), &c));
    return from_c(c);
  }

  static DeviceSpec from_c(const dlrt_device_spec& c) {
    DeviceSpec s;
    s.job = std::string(c.job, strnlen_(c.job, sizeof c.job));
    s.replica = c.replica;
    s.task = c.task;
    s.type = std::string(c.type, strnlen_(c.type, sizeof c.type));
    s.index = c.index;
    return s;
  }

  // The C struct; strings longer than its fixed buffers are truncated (libdlrt's parser
  // never produces such a spec; a hand-built one should keep job < 64, type < 32 chars).
  dlrt_device_spec to_c() const {
    dlrt_device_spec c{};
    c.struct_size = DLRT_STRUCT_SIZE(dlrt_device_spec);
    job.copy(c.job, sizeof c.job - 1);
    c.replica = replica;
    c.task = task;
    type.copy(c.type, sizeof c.type - 1);
    c.index = index;
    return c;
  }

  // The canonical full form, e.g. "/job:localhost/replica:0/task:0/device:GPU:0".
  std::string to_string() const {
    const dlrt_device_spec c = to_c();
    std::string buf(128, '\0');
    size_t need = dlrt_device_spec_format(&c, &buf[0], buf.size());
    if (need >= buf.size()) {  // the library says how much it needs: ask once more
      buf.assign(need + 1, '\0');
      need = dlrt_device_spec_format(&c, &buf[0], buf.size());
    }
    buf.resize(need < buf.size() ? need : buf.size() - 1);
    return buf;
  }

 private:
  static size_t strnlen_(const char* s, size_t max) {
    size_t n = 0;
    while (n < max && s[n] != '\0') ++n;
    return n;
  }
};

}  // namespace dlrt

#endif  // DLRT_DEVICE_SPEC_HPP_
