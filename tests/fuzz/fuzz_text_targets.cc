// tests/fuzz/fuzz_text_targets.cc: the text parsers under random input, which they must refuse
// with an error, never a crash:
// device specs, plugin option strings and settings values. See fuzz_targets.hpp.
#include <dlrt/dlrt.h>

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

#include "device_spec.hpp"
#include "echo_text.hpp"
#include "fuzz_targets.hpp"
#include "log.hpp"
#include "plugin_loader.hpp"
#include "settings.hpp"
#include "status.hpp"

namespace dlrt::fuzz {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::logic_error("fuzz invariant broken: " + what);
}

// Every message that echoes input cuts it (echo_text.hpp): a message may quote a few pieces
// of the input, each at most kEchoMaxChars, plus its own words.
void require_short_message(const core::Error& e, const char* target) {
  const size_t limit = 4 * core::kEchoMaxChars + 1000;
  require(std::string_view(e.what()).size() <= limit,
          std::string(target) + ": an error message of " +
              std::to_string(std::string_view(e.what()).size()) + " bytes echoes its input uncut");
}

}  // namespace

int device_spec_one_input(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  core::DeviceSpec spec;
  try {
    spec = core::parse_device_spec(text);
  } catch (const core::Error& e) {
    require_short_message(e, "device_spec");
    return 0;
  }
  // The canonical form parses back to the same spec.
  const std::string canonical = core::format_device_spec(spec);
  core::DeviceSpec again = core::parse_device_spec(canonical);
  require(core::format_device_spec(again) == canonical,
          "device_spec: '" + canonical + "' does not format back to itself");
  return 1;
}

int plugin_options_one_input(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  core::PluginOptions options;
  try {
    options = core::parse_plugin_options(text);
  } catch (const core::Error& e) {
    require_short_message(e, "plugin_options");
    return 0;
  }
  for (const auto& [plugin, items] : options) {
    require(!plugin.empty(), "plugin_options: an empty plugin name was accepted");
    for (size_t i = 0; i < items.size(); ++i) {
      require(!items[i].first.empty(), "plugin_options: an empty key was accepted");
      for (size_t j = 0; j < i; ++j)
        require(items[i].first != items[j].first, "plugin_options: a duplicate key was accepted");
    }
  }
  return 1;
}

int settings_one_input(const uint8_t* data, size_t size) {
  // The input, cut at the first NUL (an environment value cannot hold one), as the value of
  // every variable at once.
  std::string value(reinterpret_cast<const char*>(data), size);
  value = value.substr(0, value.find('\0'));
  const core::EnvLookup env = [&value](const char*) -> const char* { return value.c_str(); };
  dlrt_context_options o;
  dlrt_context_options_init(&o);
  core::set_log_level(DLRT_LOG_ERROR);  // the warnings for bad values are expected here
  try {
    core::Settings s = core::Settings::resolve(o, "/opt/dlrt/lib/dlrt/plugins", env);
    require(s.collective_timeout_ms() >= 1, "settings: a collective timeout below 1 ms");
    const std::string& limit = s.value("DLRT_GPU_MEMORY_LIMIT_MB");
    require(limit != "18446744073709551615", "settings: strtoull's saturated value was used");
  } catch (const core::Error& e) {
    // Only DLRT_COLLECTIVE_TIMEOUT's bad value is an error; the rest are logged and ignored.
    require(std::string_view(e.what()).find("DLRT_COLLECTIVE_TIMEOUT") != std::string_view::npos,
            std::string("settings: an error other than DLRT_COLLECTIVE_TIMEOUT's: ") + e.what());
    require_short_message(e, "settings");
    return 0;
  }
  return 1;
}

}  // namespace dlrt::fuzz
