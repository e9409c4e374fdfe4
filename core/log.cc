// log.cc: see log.hpp. Lines are written whole under a mutex so that lines from plugin
// threads and host threads do not interleave.
#include "log.hpp"

#include <fmt/core.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace dlrt::core {
namespace {

// -1 = not read from the environment yet.
std::atomic<int> g_level{-1};
std::mutex g_write_mutex;

int level_from_environment() {
  const char* text = std::getenv("DLRT_LOG_LEVEL");
  if (text == nullptr || *text == '\0') return DLRT_LOG_WARNING;
  if (auto level = parse_log_level(text)) return *level;
  // Said once, at the level that is always shown, so a typo does not go unnoticed.
  std::fprintf(stderr,
               "[dlrt W] settings: DLRT_LOG_LEVEL='%s' is not a log level; expected error, "
               "warning, info, debug or 0-3; using warning\n",
               text);
  return DLRT_LOG_WARNING;
}

}  // namespace

std::optional<dlrt_log_level> parse_log_level(std::string_view text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "error" || lower == "0") return DLRT_LOG_ERROR;
  if (lower == "warning" || lower == "warn" || lower == "1") return DLRT_LOG_WARNING;
  if (lower == "info" || lower == "2") return DLRT_LOG_INFO;
  if (lower == "debug" || lower == "3") return DLRT_LOG_DEBUG;
  return std::nullopt;
}

const char* log_level_name(dlrt_log_level level) {
  switch (level) {
    case DLRT_LOG_ERROR:
      return "error";
    case DLRT_LOG_WARNING:
      return "warning";
    case DLRT_LOG_INFO:
      return "info";
    case DLRT_LOG_DEBUG:
      return "debug";
  }
  return "warning";
}

dlrt_log_level log_level() {
  int level = g_level.load(std::memory_order_relaxed);
  if (level < 0) {
    int expected = -1;
    level = level_from_environment();
    // Another thread may have won the race (or set_log_level ran): keep its value.
    if (!g_level.compare_exchange_strong(expected, level)) level = expected;
  }
  return static_cast<dlrt_log_level>(level);
}

void set_log_level(dlrt_log_level level) { g_level.store(level, std::memory_order_relaxed); }

bool log_enabled(dlrt_log_level level) { return level <= log_level(); }

void log_line(dlrt_log_level level, std::string_view who, std::string_view message) noexcept {
  if (!log_enabled(level)) return;
  static constexpr char kLetter[] = {'E', 'W', 'I', 'D'};
  char letter = (level >= 0 && level <= 3) ? kLetter[level] : '?';
  try {
    std::lock_guard<std::mutex> lock(g_write_mutex);
    fmt::print(stderr, "[dlrt {}] {}: {}\n", letter, who, message);
    std::fflush(stderr);
  } catch (...) {
  }
}

}  // namespace dlrt::core
