// settings.cc: see settings.hpp. One function per kind of setting keeps the precedence rule
// (API, then environment, then default) written out once.
#include "settings.hpp"

#include "passes/passes.hpp"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include <fmt/format.h>

#include "echo_text.hpp"
#include "log.hpp"
#include "platform/platform.hpp"
#include "status.hpp"

namespace dlrt::core {

std::optional<bool> parse_bool(std::string_view text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "1" || lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower == "0" || lower == "false" || lower == "no" || lower == "off") return false;
  return std::nullopt;
}

std::optional<int64_t> parse_timeout_seconds(std::string_view text) {
  const std::string s(text);
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  char* end = nullptr;
  const double seconds = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || !std::isfinite(seconds) || seconds <= 0.0 ||
      seconds > 1e9)
    return std::nullopt;
  const auto ms = static_cast<int64_t>(std::llround(seconds * 1000.0));
  return ms < 1 ? 1 : ms;
}

std::vector<std::string> split_nonempty(std::string_view text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

namespace {

// The environment value of `name`, or nullopt when unset. (Set but empty counts as unset:
// `DLRT_X= prog` is how shells clear a variable for one command.)
std::optional<std::string> env_value(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

Setting text_setting(const EnvLookup& env, const char* name, const char* api_value,
                     std::string help) {
  Setting s{name, "", DLRT_SOURCE_DEFAULT, std::move(help)};
  if (api_value != nullptr) {
    s.value = api_value;
    s.source = DLRT_SOURCE_API;
  } else if (auto v = env_value(env, name)) {
    s.value = *v;
    s.source = DLRT_SOURCE_ENVIRONMENT;
  }
  return s;
}

// A boolean: api_value -1 means "not given through the API".
Setting bool_setting(const EnvLookup& env, const char* name, int32_t api_value, bool fallback,
                     std::string help) {
  Setting s{name, fallback ? "1" : "0", DLRT_SOURCE_DEFAULT, std::move(help)};
  if (api_value >= 0) {
    s.value = api_value != 0 ? "1" : "0";
    s.source = DLRT_SOURCE_API;
  } else if (auto v = env_value(env, name)) {
    if (auto b = parse_bool(*v)) {
      s.value = *b ? "1" : "0";
      s.source = DLRT_SOURCE_ENVIRONMENT;
    } else {
      log(DLRT_LOG_WARNING, "settings",
          "{}='{}' is not a boolean; expected 1/0, true/false, yes/no or on/off; using {}", name,
          truncated_for_message(*v), s.value);
    }
  }
  return s;
}

// A non-negative integer from the environment only; "" (unset) by default.
Setting count_setting(const EnvLookup& env, const char* name, std::string help) {
  Setting s{name, "", DLRT_SOURCE_DEFAULT, std::move(help)};
  if (auto v = env_value(env, name)) {
    char* end = nullptr;
    errno = 0;
    unsigned long long n = std::strtoull(v->c_str(), &end, 10);
    if (errno == ERANGE) {
      // strtoull saturates at ULLONG_MAX: without this check the value would be shown (and
      // used) as 18446744073709551615.
      log(DLRT_LOG_WARNING, "settings",
          "{}='{}' is larger than the largest 64-bit value {}; ignoring it (no limit)", name,
          truncated_for_message(*v), ULLONG_MAX);
    } else if (!v->empty() && std::isdigit(static_cast<unsigned char>((*v)[0])) && *end == '\0') {
      s.value = std::to_string(n);
      s.source = DLRT_SOURCE_ENVIRONMENT;
    } else {
      log(DLRT_LOG_WARNING, "settings",
          "{}='{}' is not a non-negative integer; ignoring it (no limit)", name,
          truncated_for_message(*v));
    }
  }
  return s;
}

// DLRT_GPU_MEMORY_LIMIT_MB: the API value (bytes, 0 = not given) first, then the variable
// (MiB). Shown in MiB; *bytes gets the limit (0 = none). A bad variable is logged and ignored.
Setting memory_limit_setting(const EnvLookup& env, uint64_t api_bytes, uint64_t* bytes) {
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  const char* help =
      "limit on the memory dlrt takes per GPU-class logical device, in MiB "
      "(0 or unset: none; a logical device's own limit wins)";
  *bytes = 0;
  if (api_bytes != 0) {
    *bytes = api_bytes;
    std::string text =
        api_bytes % kMiB == 0
            ? std::to_string(api_bytes / kMiB)
            : fmt::format("{:.3f} ({} bytes)", static_cast<double>(api_bytes) / kMiB, api_bytes);
    return Setting{"DLRT_GPU_MEMORY_LIMIT_MB", text, DLRT_SOURCE_API, help};
  }
  Setting s = count_setting(env, "DLRT_GPU_MEMORY_LIMIT_MB", help);
  if (s.source == DLRT_SOURCE_ENVIRONMENT) {
    const unsigned long long mb = std::strtoull(s.value.c_str(), nullptr, 10);
    if (mb > UINT64_MAX / kMiB) {
      log(DLRT_LOG_WARNING, "settings",
          "DLRT_GPU_MEMORY_LIMIT_MB='{}' does not fit in 64 bits "
          "of bytes; ignoring it (no limit)",
          s.value);
      return Setting{s.name, "", DLRT_SOURCE_DEFAULT, help};
    }
    *bytes = mb * kMiB;
  }
  return s;
}

// DLRT_COLLECTIVE_TIMEOUT: the environment or 300 s; *ms gets the value. Unlike the others, a
// bad value is an error (settings.hpp says why).
Setting collective_timeout_setting(const EnvLookup& env, int64_t* ms) {
  Setting s{"DLRT_COLLECTIVE_TIMEOUT", "300", DLRT_SOURCE_DEFAULT,
            "seconds a collective of a strategy waits for its peers before failing with "
            "DEADLINE_EXCEEDED (decimals allowed; a strategy's timeout_ms wins)"};
  *ms = kDefaultCollectiveTimeoutMs;
  if (auto v = env_value(env, "DLRT_COLLECTIVE_TIMEOUT")) {
    std::optional<int64_t> parsed = parse_timeout_seconds(*v);
    if (!parsed)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("DLRT_COLLECTIVE_TIMEOUT='{}' is not a timeout; expected seconds > 0 "
                       "(decimals allowed, e.g. 30 or 0.5), at most 1e9",
                       truncated_for_message(*v)));
    *ms = *parsed;
    s.value = *v;
    s.source = DLRT_SOURCE_ENVIRONMENT;
  }
  return s;
}

}  // namespace

Settings Settings::resolve(const dlrt_context_options& options,
                           const std::string& default_plugin_dir, const EnvLookup& env) {
  Settings out;

  // DLRT_PLUGIN_PATH: shown as the whole effective search list, in search order.
  {
    Setting s{"DLRT_PLUGIN_PATH", "", DLRT_SOURCE_DEFAULT,
              "plugin files or folders searched after API paths (colon list, absolute paths)"};
    std::string list;
    // Joined and split with the system's list separator (':' on POSIX, ';' on Windows).
    auto add = [&list](const std::string& p) {
      if (!list.empty()) list += platform::kPathListSeparator;
      list += p;
    };
    for (size_t i = 0; i < options.num_plugin_paths; ++i)
      if (options.plugin_paths != nullptr && options.plugin_paths[i] != nullptr)
        add(options.plugin_paths[i]);
    if (!list.empty()) s.source = DLRT_SOURCE_API;
    if (options.search_default_paths != 0) {
      if (auto v = env_value(env, "DLRT_PLUGIN_PATH")) {
        out.env_plugin_path_ = split_nonempty(*v, platform::kPathListSeparator);
        for (const auto& p : out.env_plugin_path_) add(p);
        if (s.source == DLRT_SOURCE_DEFAULT) s.source = DLRT_SOURCE_ENVIRONMENT;
      }
      add(default_plugin_dir);
    }
    s.value = list;
    out.settings_.push_back(std::move(s));
  }

  out.settings_.push_back(text_setting(
      env, "DLRT_VISIBLE_DEVICES", options.visible_devices,
      "devices to expose, e.g. CPU:0,GPU:1 or GPU; renumbered per type in list order"));

  // DLRT_LOG_LEVEL: the logger reads the variable itself (it must work before any context);
  // here we only report what applies, and the API value when one was given.
  {
    Setting s{"DLRT_LOG_LEVEL", "warning", DLRT_SOURCE_DEFAULT,
              "error, warning, info or debug (or 0-3)"};
    out.log_level_ = DLRT_LOG_WARNING;
    if (options.log_level >= DLRT_LOG_ERROR && options.log_level <= DLRT_LOG_DEBUG) {
      out.log_level_ = static_cast<dlrt_log_level>(options.log_level);
      s.source = DLRT_SOURCE_API;
    } else if (auto v = env_value(env, "DLRT_LOG_LEVEL")) {
      if (auto level = parse_log_level(*v)) {
        out.log_level_ = *level;
        s.source = DLRT_SOURCE_ENVIRONMENT;
      }
    }
    s.value = log_level_name(out.log_level_);
    out.settings_.push_back(std::move(s));
  }

  out.soft_placement_ = options.soft_placement != 0;
  out.settings_.push_back(bool_setting(env, "DLRT_LOG_DEVICE_PLACEMENT",
                                       options.log_device_placement, false,
                                       "log which device runs each op"));
  // Device memory (the arenas, core/memory): options memory_growth and gpu_memory_limit over
  // the two variables; memory_fraction has no variable (0 = 0.9).
  out.settings_.push_back(bool_setting(env, "DLRT_GPU_ALLOW_GROWTH", options.memory_growth, true,
                                       "grow GPU memory on demand (1, default) or reserve "
                                       "memory_fraction of it at first use (0)"));
  out.gpu_allow_growth_ = out.settings_.back().value == "1";
  out.memory_fraction_ = options.memory_fraction > 0.0 ? options.memory_fraction : 0.9;
  out.settings_.push_back(
      memory_limit_setting(env, options.gpu_memory_limit, &out.gpu_memory_limit_));
  out.settings_.push_back(
      bool_setting(env, "DLRT_CHECK_NUMERICS", -1, false, "fail on NaN or Inf in op outputs"));
  out.settings_.push_back(
      text_setting(env, "DLRT_TRACE_FILE", nullptr, "write a Chrome trace of execution here"));
  out.settings_.push_back(text_setting(
      env, "DLRT_GRAPH_PASSES", nullptr,
      "graph passes at compile: default, none, or a list such as default,-fold_constants"));
  try {
    passes::PassSet::parse(out.settings_.back().value);
  } catch (const Error& e) {
    log(DLRT_LOG_WARNING, "settings", "{}; using every pass", e.message());
    out.settings_.back().value.clear();
    out.settings_.back().source = DLRT_SOURCE_DEFAULT;
  }
  out.settings_.push_back(
      text_setting(env, "DLRT_PLUGIN_OPTIONS", options.plugin_options,
                   "per-plugin options, e.g. cpu:threads=2;reference:num_devices=3"));
  out.settings_.push_back(text_setting(env, "CUDA_VISIBLE_DEVICES", nullptr,
                                       "GPUs the CUDA runtime shows (read by the CUDA plugin)"));
  out.settings_.push_back(text_setting(
      env, "DLRT_CPU_CALIBRATE", nullptr,
      "auto, redo or skip: the cpu plugin's kernel choices measured once and cached, measured "
      "again, or left to its rules (read by the cpu plugin; its option calibrate wins)"));
  out.settings_.push_back(collective_timeout_setting(env, &out.collective_timeout_ms_));
  return out;
}

const Setting* Settings::find(std::string_view name) const {
  for (const auto& s : settings_)
    if (s.name == name) return &s;
  return nullptr;
}

const std::string& Settings::value(std::string_view name) const {
  static const std::string kEmpty;
  const Setting* s = find(name);
  return s != nullptr ? s->value : kEmpty;
}

}  // namespace dlrt::core
