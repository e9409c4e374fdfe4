// plugin_abi_check.cc: the required entries of a plugin's table and the ABI version words
// (plugin_abi_check.hpp).
#include "plugin_abi_check.hpp"

#include <fmt/format.h>

#include <cstring>
#include <iterator>

namespace dlrt::core {
namespace {

#define DLRT_ENTRY(field) \
  PluginEntry { #field, offsetof(dlrt_plugin_api, field) }
// The slots every plugin of ABI 1.x fills (pointers: the strings and the functions).
constexpr PluginEntry kRequired[] = {
    DLRT_ENTRY(name),
    DLRT_ENTRY(platform),
    DLRT_ENTRY(plugin_create),
    DLRT_ENTRY(plugin_destroy),
};
// The device entries: required too, except that a plugin without devices that offers
// collectives may leave all of them NULL together (plugin.h, ABI 1.2).
constexpr PluginEntry kDeviceEntries[] = {
    DLRT_ENTRY(device_count),
    DLRT_ENTRY(device_get_desc),
    DLRT_ENTRY(device_open),
    DLRT_ENTRY(device_close),
    DLRT_ENTRY(memory_info),
    DLRT_ENTRY(mem_alloc),
    DLRT_ENTRY(mem_free),
    DLRT_ENTRY(memcpy_h2d),
    DLRT_ENTRY(memcpy_d2h),
    DLRT_ENTRY(memcpy_d2d),
    DLRT_ENTRY(memset),
    DLRT_ENTRY(stream_create),
    DLRT_ENTRY(stream_destroy),
    DLRT_ENTRY(stream_synchronize),
    DLRT_ENTRY(event_create),
    DLRT_ENTRY(event_destroy),
    DLRT_ENTRY(event_record),
    DLRT_ENTRY(stream_wait_event),
    DLRT_ENTRY(event_synchronize),
    DLRT_ENTRY(op_supported),
    DLRT_ENTRY(kernel_create),
    DLRT_ENTRY(kernel_run),
    DLRT_ENTRY(kernel_destroy),
};
#undef DLRT_ENTRY

// A plugin that owns no devices: every device entry NULL, and a collectives table to offer.
// `api` is already zeroed past the plugin's struct_size, so absent slots read as NULL.
bool is_deviceless_transport(const dlrt_plugin_api& api) {
  for (const PluginEntry& e : kDeviceEntries)
    if (slot_is_set(api, e.offset)) return false;
  return api.collectives != nullptr;
}

}  // namespace

// Both function and data pointers are pointer-sized here (POSIX guarantees dlsym's round
// trip), so one check serves both kinds of slot.
bool slot_is_set(const dlrt_plugin_api& api, size_t offset) {
  void* p = nullptr;
  std::memcpy(&p, reinterpret_cast<const unsigned char*>(&api) + offset, sizeof p);
  return p != nullptr;
}

std::vector<PluginEntry> required_entries(const dlrt_plugin_api& api) {
  std::vector<PluginEntry> required(std::begin(kRequired), std::end(kRequired));
  if (!is_deviceless_transport(api))
    required.insert(required.end(), std::begin(kDeviceEntries), std::end(kDeviceEntries));
  return required;
}

std::string abi_text(uint32_t major, uint32_t minor) { return fmt::format("{}.{}", major, minor); }

std::string accepted_text() {
  return fmt::format("this libdlrt speaks {} and accepts {} and newer {}.x",
                     abi_text(DLRT_ABI_MAJOR, DLRT_ABI_MINOR),
                     abi_text(DLRT_ABI_MAJOR, DLRT_ABI_MINOR_FLOOR), DLRT_ABI_MAJOR);
}

}  // namespace dlrt::core
