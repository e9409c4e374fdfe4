// plugin_options.cc: parse_plugin_options (plugin_options.hpp). Every message quotes the
// malformed item and the text shortened (echo_text.hpp), so a huge value is never repeated.
#include "plugin_options.hpp"

#include <fmt/format.h>

#include <cctype>

#include "echo_text.hpp"
#include "status.hpp"

namespace dlrt::core {
namespace {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace

PluginOptions parse_plugin_options(std::string_view text) {
  PluginOptions out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    std::string item = trim(text.substr(start, end - start));
    start = end + 1;
    if (item.empty()) continue;
    size_t colon = item.find(':');
    size_t eq = item.find('=');
    if (colon == std::string::npos || eq == std::string::npos || eq < colon || colon == 0 ||
        eq == colon + 1)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("bad plugin option '{}' in '{}': expected <plugin>:<key>=<value> items "
                       "separated by ';', e.g. cpu:threads=2;reference:num_devices=3",
                       truncated_for_message(item), truncated_for_message(text)));
    std::string plugin = trim(item.substr(0, colon));
    std::string key = trim(item.substr(colon + 1, eq - colon - 1));
    std::string value = trim(item.substr(eq + 1));
    // Checked after trimming: " cpu : =2" has a colon and an '=' but no key (found by the
    // plugin_options fuzz target).
    if (plugin.empty() || key.empty())
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("bad plugin option '{}' in '{}': the {} is empty; expected "
                       "<plugin>:<key>=<value>, e.g. cpu:threads=2",
                       truncated_for_message(item), truncated_for_message(text),
                       plugin.empty() ? "plugin name" : "key"));
    auto& list = out[plugin];
    for (const auto& [k, v] : list)
      if (k == key)
        fail(DLRT_INVALID_ARGUMENT,
             fmt::format("plugin option '{}:{}' is given twice in '{}'",
                         truncated_for_message(plugin), truncated_for_message(key),
                         truncated_for_message(text)));
    list.emplace_back(key, value);
  }
  return out;
}

}  // namespace dlrt::core
