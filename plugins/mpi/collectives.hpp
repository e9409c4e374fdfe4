// collectives.hpp: the mpi plugin's collectives table (collectives.cc), for plugin.cc.
#pragma once

#include <dlrt/plugin.h>

namespace dlrt::mpi {

// Static storage; lives as long as the plugin library.
const dlrt_collective_api* collective_table();

}  // namespace dlrt::mpi
