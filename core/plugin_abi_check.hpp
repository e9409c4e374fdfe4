// plugin_abi_check.hpp: what the ABI phase checks in the table a plugin's dlrt_plugin_init
// filled: which entries it must set (a plugin without devices that offers collectives may
// leave every device entry NULL), and the words of the refusals that name ABI versions.
#pragma once

#include <dlrt/plugin.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dlrt::core {

// One slot of dlrt_plugin_api: its field name and byte offset.
struct PluginEntry {
  const char* name;
  size_t offset;
};

// Whether the pointer in the slot at `offset` is non-NULL.
bool slot_is_set(const dlrt_plugin_api& api, size_t offset);

// The slots `api` must set: name, platform, plugin_create, plugin_destroy, and every device
// entry unless `api` is a transport without devices (all device entries NULL, a collectives
// table set). `api` must already be zeroed past the plugin's struct_size.
std::vector<PluginEntry> required_entries(const dlrt_plugin_api& api);

// "1.4"
std::string abi_text(uint32_t major, uint32_t minor);
// "this libdlrt speaks 1.4 and accepts 1.0 and newer 1.x": the end of every version refusal.
std::string accepted_text();

}  // namespace dlrt::core
