// settings.hpp: the effective configuration of one context, and where each value came from.
//
// docs/design.md section 8: API options first, then environment variables, then defaults. Every
// variable of that section is here (plus DLRT_PLUGIN_OPTIONS and CUDA_VISIBLE_DEVICES), so
// `dlprobe --env` (dlrt_context_setting*) can show them all. Values are normalised: booleans
// become "1"/"0", log levels their name; an environment value that does not parse is logged
// and the default used instead (a typo in a variable must not stop a program, but it must not
// go unnoticed either).
//
// One exception to "logged and ignored": DLRT_COLLECTIVE_TIMEOUT. A bad value there fails
// context creation (INVALID_ARGUMENT naming the variable), because the fallback would be to
// wait 300 s for a dead worker when the user asked for, say, 10: a setting that exists to
// bound failures must not silently stop doing so.
//
// This is not the place that acts on the settings: the loader, registry and executor
// read the typed accessors below.
#pragma once

#include <dlrt/dlrt.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlrt::core {

// DLRT_COLLECTIVE_TIMEOUT's default: 300 s, as NCCL's and torch.distributed's watchdogs are
// of that order (long enough for a slow first step, short enough to notice a dead worker).
inline constexpr int64_t kDefaultCollectiveTimeoutMs = 300'000;

struct Setting {
  std::string name;
  std::string value;  // effective value as text; "" when unset
  dlrt_setting_source source = DLRT_SOURCE_DEFAULT;
  std::string help;
};

// getenv, or a stand-in for tests. Returns NULL for unset.
using EnvLookup = std::function<const char*(const char*)>;

class Settings {
 public:
  // `options` must already be complete (defaults filled past the caller's struct_size).
  // `default_plugin_dir` is `<folder of libdlrt.so>/dlrt/plugins`, shown as the last entry of
  // the effective DLRT_PLUGIN_PATH when default paths are searched.
  static Settings resolve(const dlrt_context_options& options,
                          const std::string& default_plugin_dir, const EnvLookup& env);

  const std::vector<Setting>& all() const { return settings_; }
  // The setting called `name`; nullptr if there is none.
  const Setting* find(std::string_view name) const;
  // Its value; "" if unknown.
  const std::string& value(std::string_view name) const;

  // Typed views used by the rest of the core.
  dlrt_log_level log_level() const { return log_level_; }
  bool log_device_placement() const { return value("DLRT_LOG_DEVICE_PLACEMENT") == "1"; }
  // The context option soft_placement (no environment variable): true unless it is 0.
  bool soft_placement() const { return soft_placement_; }
  // Device memory of GPU-class devices: growth on (DLRT_GPU_ALLOW_GROWTH, option
  // memory_growth; default on), the fraction reserved when it is off (option memory_fraction,
  // default 0.9), the limit per logical device in bytes (option gpu_memory_limit, else
  // DLRT_GPU_MEMORY_LIMIT_MB; 0 = none).
  bool gpu_allow_growth() const { return gpu_allow_growth_; }
  double memory_fraction() const { return memory_fraction_; }
  uint64_t gpu_memory_limit() const { return gpu_memory_limit_; }
  // How long a collective of a strategy (core/distribute) may wait for its peers, in
  // milliseconds: DLRT_COLLECTIVE_TIMEOUT (seconds, decimals allowed, > 0), else 300 s. A
  // strategy's own options->timeout_ms wins over it.
  int64_t collective_timeout_ms() const { return collective_timeout_ms_; }
  // DLRT_PLUGIN_PATH split on ':' (environment only; API paths are kept apart by the caller).
  const std::vector<std::string>& env_plugin_path() const { return env_plugin_path_; }

 private:
  std::vector<Setting> settings_;
  dlrt_log_level log_level_ = DLRT_LOG_WARNING;
  bool soft_placement_ = true;
  bool gpu_allow_growth_ = true;
  double memory_fraction_ = 0.9;
  uint64_t gpu_memory_limit_ = 0;
  int64_t collective_timeout_ms_ = kDefaultCollectiveTimeoutMs;
  std::vector<std::string> env_plugin_path_;
};

// "1"/"true"/"yes"/"on" -> true, "0"/"false"/"no"/"off" -> false (any case); nullopt otherwise.
std::optional<bool> parse_bool(std::string_view text);

// DLRT_COLLECTIVE_TIMEOUT's text (seconds: "30", "0.5", "1e3") as milliseconds, rounded to
// the nearest and at least 1; nullopt unless it is a finite number > 0 of at most 10^9 s.
std::optional<int64_t> parse_timeout_seconds(std::string_view text);

// Splits `text` on `sep`, dropping empty pieces ("a::b:" -> {"a", "b"}).
std::vector<std::string> split_nonempty(std::string_view text, char sep);

}  // namespace dlrt::core
