// log.hpp: libdlrt's logger. One process-wide level, lines to stderr:
//   [dlrt W] loader: plugin /x/libdlrt-foo.so refused: ...
// The level comes from DLRT_LOG_LEVEL (error|warning|info|debug, or 0-3; default warning),
// read on first use; a context created with options.log_level >= 0 sets it for the whole
// process (there is one stderr, and plugins log through one host table without a context).
#pragma once

#include <dlrt/types.h>

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>

namespace dlrt::core {

// "error"/"warning"/"info"/"debug" (any case, also "warn") or "0".."3"; nullopt otherwise.
std::optional<dlrt_log_level> parse_log_level(std::string_view text);
const char* log_level_name(dlrt_log_level level);

dlrt_log_level log_level();
void set_log_level(dlrt_log_level level);
bool log_enabled(dlrt_log_level level);

// Writes one line "[dlrt X] <who>: <message>" if `level` is enabled. Never throws.
void log_line(dlrt_log_level level, std::string_view who, std::string_view message) noexcept;

// fmt-style convenience: log(DLRT_LOG_INFO, "loader", "loaded {} from {}", name, path).
// Formatting happens only when the level is enabled.
template <typename... Args>
void log(dlrt_log_level level, std::string_view who, fmt::format_string<Args...> format,
         Args&&... args) noexcept {
  if (!log_enabled(level)) return;
  try {
    log_line(level, who, fmt::format(format, std::forward<Args>(args)...));
  } catch (...) {  // a log line is never worth failing for
  }
}

}  // namespace dlrt::core
