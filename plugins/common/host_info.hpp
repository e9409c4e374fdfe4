// host_info.hpp: facts about the host machine, for the plugins whose device memory is host
// memory (reference, cpu): total and available RAM, the CPUs this process may run on, and the
// CPU's description (the fields /proc/cpuinfo names "model name", "vendor_id", "cpu MHz").
//
// One header per system, chosen here at build time: host_info_posix.hpp (Linux: /proc,
// sched_getaffinity) and host_info_windows.hpp (GlobalMemoryStatusEx, the process affinity
// mask, the registry's CPU description). Every function answers 0 or "" when the fact is
// unknown and never throws anything but std::bad_alloc; callers decide what "unknown" means
// for them. Not part of the SDK: internal to this repository's plugins.
#pragma once

#if defined(_WIN32)
#include "host_info_windows.hpp"
#else
#include "host_info_posix.hpp"
#endif
