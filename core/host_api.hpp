// host_api.hpp: the services table libdlrt hands to every plugin (dlrt_host_api).
#pragma once

#include <dlrt/plugin.h>

namespace dlrt::core {

// One static table for the whole process: it must outlive every plugin instance, and nothing
// in it depends on a context. Statuses are made and freed by status.cc, so the host always
// frees what it receives with its own allocator.
const dlrt_host_api* host_api();

}  // namespace dlrt::core
