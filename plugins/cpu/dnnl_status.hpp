// dnnl_status.hpp: oneDNN errors -> dlrt errors. The one place the cpu plugin maps
// dnnl_status_t onto dlrt_code; every oneDNN call that can throw goes through dnnl_call().
//
//   auto engine = dnnl_call("create the CPU engine", __FILE__, __LINE__,
//                           [] { return dnnl::engine(dnnl::engine::kind::cpu, 0); });
//
// oneDNN's C++ API reports failure by throwing dnnl::error (a status and a message); the
// resulting dlrt error names what we were doing, oneDNN's status and message, and where.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/dnnl/dnnl_debug.h>

#include <string>

#include "plugin_support.hpp"

namespace dlrt::cpu {

inline dlrt_code to_code(dnnl_status_t s) {
  switch (s) {
    case dnnl_success:
      return DLRT_OK;
    case dnnl_out_of_memory:
      return DLRT_RESOURCE_EXHAUSTED;
    case dnnl_invalid_arguments:
      return DLRT_INVALID_ARGUMENT;
    case dnnl_unimplemented:
      return DLRT_UNIMPLEMENTED;  // no primitive for this shape/dtype
    case dnnl_iterator_ends:
      return DLRT_OUT_OF_RANGE;
    default:
      return DLRT_INTERNAL;  // runtime_error, not_required, and anything newer
  }
}

// Runs `fn` (returning whatever it returns); a dnnl::error becomes a plugin::Error.
template <typename Fn>
auto dnnl_call(const char* what, const char* file, int line, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const dnnl::error& e) {
    plugin::fail(to_code(e.status), std::string(plugin::g_plugin_name) + ": " + what + ": oneDNN " +
                                        dnnl_status2str(e.status) + ": " + e.what() + " (" + file +
                                        ":" + std::to_string(line) + ")");
  }
}

}  // namespace dlrt::cpu
