// plugins/mpi: libdlrt-mpi.so, collectives over MPI for multi-worker CPU runs (docs/design.md
// section 7). It owns no device: its one offer is the collectives table (collectives.cc), with
// communicators over host memory (plugin.h, DLRT_COLLECTIVES_HOST_MEMORY). Every device,
// memory, stream and kernel entry is NULL, as plugin.h allows a device-less transport since
// ABI 1.2: the host lists no devices for it and never calls those entries.
//
// Loading it costs nothing: plugin_create does not touch MPI (every dlrt program loads every
// plugin, and most are not MPI jobs). MPI is initialised by the first comm_create and
// finalised by the last plugin_destroy when that is safe (runtime.hpp).
#include <dlrt/plugin.h>

#include <string>

#include "collectives.hpp"
#include "plugin_support.hpp"
#include "runtime.hpp"

namespace {

using dlrt::plugin::guard;
using dlrt::plugin::guard_void;

constexpr const char* kName = "mpi";
constexpr const char* kPlatform = "mpi";

}  // namespace

// One plugin instance. MPI state is per process, not per instance (runtime.hpp), so the
// instance itself holds nothing.
struct dlrt_plugin {
  int unused = 0;
};

namespace {

// ---- plugin lifetime -----------------------------------------------------------------------

dlrt_status* plugin_create(const dlrt_plugin_create_args* args, dlrt_plugin** out_plugin) {
  if (out_plugin != nullptr) *out_plugin = nullptr;
  return guard([&] {
    dlrt::plugin::require(out_plugin, "out_plugin");
    dlrt::plugin::Options options(args, {});  // no options
    *out_plugin = new dlrt_plugin{};
    dlrt::mpi::instance_created();
  });
}

void plugin_destroy(dlrt_plugin* plugin) {
  guard_void("plugin_destroy", [&] {
    if (plugin == nullptr) return;
    delete plugin;
    dlrt::mpi::instance_destroyed();  // MPI_Finalize, when ours and safe
  });
}

}  // namespace

// The one exported symbol. Phase one of loading: fill the table, touch nothing else (no MPI).
extern "C" DLRT_PLUGIN_EXPORT dlrt_status* dlrt_plugin_init(const dlrt_host_api* host,
                                                            dlrt_plugin_api* api) {
  dlrt::plugin::g_host = host;
  dlrt::plugin::g_plugin_name = kName;
  return guard([&] {
    dlrt::plugin::require(host, "host");
    dlrt::plugin::require(api, "api");
    static const dlrt_plugin_api filled = {
        .struct_size = sizeof(dlrt_plugin_api),
        .abi_major = DLRT_ABI_MAJOR,
        .abi_minor = DLRT_ABI_MINOR,
        .name = kName,
        .platform = kPlatform,
        .version = "0.1.0",
        .plugin_create = plugin_create,
        .plugin_destroy = plugin_destroy,
        // No devices: every entry from device_count to kernel_destroy is left NULL.
        .capture = nullptr,  // optional: no graph capture
        .collectives = dlrt::mpi::collective_table(),
    };
    dlrt_plugin_api_fill(api, &filled);
  });
}
