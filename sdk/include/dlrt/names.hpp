// dlrt/names.hpp: names of the C enums, as dlprobe prints them. Out-of-range values (a newer
// library or plugin) give "UNKNOWN(<n>)" rather than failing.
#ifndef DLRT_NAMES_HPP_
#define DLRT_NAMES_HPP_

#include <cstdint>
#include <string>

#include "dlrt/error.hpp"

namespace dlrt {

inline std::string unknown_name(int32_t value) { return "UNKNOWN(" + std::to_string(value) + ")"; }

inline std::string code_name(dlrt_code code) { return detail::str(dlrt_code_name(code)); }

inline std::string device_class_name(dlrt_device_class c) {
  switch (c) {
    case DLRT_DEVICE_CLASS_UNKNOWN:
      return "UNKNOWN";
    case DLRT_DEVICE_CLASS_CPU:
      return "CPU";
    case DLRT_DEVICE_CLASS_GPU:
      return "GPU";
    case DLRT_DEVICE_CLASS_ACCEL:
      return "ACCEL";
  }
  return unknown_name(c);
}

inline std::string plugin_state_name(dlrt_plugin_state s) {
  switch (s) {
    case DLRT_PLUGIN_LOADED:
      return "loaded";
    case DLRT_PLUGIN_REFUSED:
      return "refused";
    case DLRT_PLUGIN_FAILED:
      return "failed";
  }
  return unknown_name(s);
}

inline std::string plugin_phase_name(dlrt_plugin_phase p) {
  switch (p) {
    case DLRT_PHASE_SEARCH:
      return "search";
    case DLRT_PHASE_OPEN:
      return "open";
    case DLRT_PHASE_ABI:
      return "abi";
    case DLRT_PHASE_CREATE:
      return "create";
    case DLRT_PHASE_DEVICES:
      return "devices";
    case DLRT_PHASE_READY:
      return "ready";
  }
  return unknown_name(p);
}

inline std::string setting_source_name(dlrt_setting_source s) {
  switch (s) {
    case DLRT_SOURCE_DEFAULT:
      return "default";
    case DLRT_SOURCE_ENVIRONMENT:
      return "environment";
    case DLRT_SOURCE_API:
      return "api";
  }
  return unknown_name(s);
}

// An attribute type's word in the op schema (docs/ops.md, error messages, the Python
// package's signatures): "int", "float", "string", "bool", "dtype", "ints", "floats"; "none"
// for DLRT_ATTR_NONE and for a value this header does not know.
inline const char* attr_type_name(int32_t type) {
  switch (type) {
    case DLRT_ATTR_INT:
      return "int";
    case DLRT_ATTR_FLOAT:
      return "float";
    case DLRT_ATTR_STRING:
      return "string";
    case DLRT_ATTR_BOOL:
      return "bool";
    case DLRT_ATTR_DTYPE:
      return "dtype";
    case DLRT_ATTR_INTS:
      return "ints";
    case DLRT_ATTR_FLOATS:
      return "floats";
    default:
      return "none";
  }
}

inline std::string dtype_name(dlrt_dtype t) {
  if (const char* name = dlrt_dtype_name(t)) return name;
  if (t == DLRT_DTYPE_INVALID) return "invalid";
  return unknown_name(t);
}

}  // namespace dlrt

#endif  // DLRT_NAMES_HPP_
