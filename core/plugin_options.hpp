// plugin_options.hpp: the options a host gives plugins (DLRT_PLUGIN_OPTIONS, the context's
// plugin_options), parsed from "cpu:threads=2;reference:num_devices=3" into one ordered list
// of key/value strings per plugin name; plugin_create receives its plugin's list.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dlrt::core {

// Options per plugin name, in the order given: "cpu:threads=2;reference:num_devices=3".
using PluginOptions = std::map<std::string, std::vector<std::pair<std::string, std::string>>>;
// Throws Error(INVALID_ARGUMENT) naming the malformed item.
PluginOptions parse_plugin_options(std::string_view text);

}  // namespace dlrt::core
