// plugin_call.hpp: calling one entry of a plugin's table and turning its answer into ours.
//
// A plugin returns a dlrt_status* (NULL = OK) made by our own dlrt_status_create, so the core
// reads and frees it here; an error becomes an `Error` with the plugin's code and a message
// prefixed by what we were doing ("conv2d on /device:CPU:0: kernel_create: ..."). plugin.h
// forbids exceptions across the boundary; one that arrives anyway (a plugin bug) is INTERNAL
// rather than a crash of the host.
#pragma once

#include <fmt/format.h>

#include <string_view>

#include "status.hpp"

namespace dlrt::core {

template <typename Fn>
void plugin_call(std::string_view what, Fn&& entry) {
  StatusValue s;
  try {
    s = take_status(entry());
  } catch (...) {
    fail(DLRT_INTERNAL, fmt::format("{}: the plugin threw an exception (plugins must return a "
                                    "status)", what));
  }
  if (!s.ok()) fail(s.code, fmt::format("{}: {}", what, s.message));
}

// The same for entries that return nothing (destroy/free): errors are impossible, an
// exception is swallowed, since these run on cleanup paths that must not throw.
template <typename Fn>
void plugin_call_noexcept(Fn&& entry) noexcept {
  try {
    entry();
  } catch (...) {
  }
}

}  // namespace dlrt::core
