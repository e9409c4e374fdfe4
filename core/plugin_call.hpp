// plugin_call.hpp: calling one entry of a plugin's table and turning its answer into ours.
// The one place in the core that does this; every call into a plugin goes through it.
//
// A plugin returns a dlrt_status* (NULL = OK) made by our own dlrt_status_create, so the core
// reads and frees it here. plugin.h forbids exceptions across the boundary; one that arrives
// anyway (a plugin bug) becomes INTERNAL rather than a crash of the host.
//
// Three forms, by what the caller does with an error:
//   plugin_status(entry, fn)  -> StatusValue: the answer as a value, never throws (loader
//                                phases that record a failure, op_supported "no" answers,
//                                an allocation retried after a cache flush);
//   plugin_call(what, fn)     -> throws Error with the plugin's code and a message prefixed by
//                                what we were doing ("conv2d on /device:CPU:0: kernel_create:
//                                ..."). `what` is a string, or a callable returning one so
//                                that a per-step path formats nothing unless the entry fails;
//   plugin_call_noexcept(fn)  -> for entries that return nothing (destroy/free).
#pragma once

#include <fmt/format.h>

#include <exception>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "status.hpp"

namespace dlrt::core {

// Runs `fn` (which returns the plugin's dlrt_status*) and returns its answer. `entry` names
// the entry ("mem_alloc") in the message made when the plugin throws.
template <typename Fn>
StatusValue plugin_status(std::string_view entry, Fn&& fn) {
  try {
    return take_status(fn());
  } catch (const std::exception& e) {
    return {DLRT_INTERNAL, fmt::format("{} threw a C++ exception ({}); plugins must return a "
                                       "status, never throw",
                                       entry, e.what())};
  } catch (...) {
    return {DLRT_INTERNAL,
            fmt::format("{} threw an exception; plugins must return a status, never throw", entry)};
  }
}

namespace detail {
template <typename What>
std::string describe(What&& what) {
  if constexpr (std::is_invocable_v<What&>) return std::string(what());
  else return std::string(std::forward<What>(what));
}
}  // namespace detail

// Runs `fn`; an error becomes an Error "<what>: <the plugin's message>" with the plugin's
// code. `what` is a string or a callable returning one, evaluated only on failure.
template <typename What, typename Fn>
void plugin_call(What&& what, Fn&& fn) {
  StatusValue s = plugin_status("the plugin entry", std::forward<Fn>(fn));
  if (!s.ok()) fail(s, detail::describe(what));
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
