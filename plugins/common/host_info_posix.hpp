// host_info_posix.hpp: host_info.hpp on Linux: total/available RAM from /proc/meminfo, the
// CPUs this process may run on (sched_getaffinity), and fields of /proc/cpuinfo.
// Every function answers 0 or "" when the fact is unknown (e.g. /proc is not
// mounted in a container) and never throws anything but std::bad_alloc; callers decide what
// "unknown" means for them. Not part of the SDK: internal to this repository's plugins.
#pragma once

#include <sched.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

namespace dlrt::plugin::host {

// The value of the first line of `path` that reads "<key><spaces/tabs>: <value>", trimmed;
// "" if there is none. Works for /proc/cpuinfo ("model name\t: AMD EPYC") and /proc/meminfo
// ("MemTotal:       16318412 kB").
// Where proc_field("/proc/cpuinfo", "cpu MHz") comes from, as the cpu plugin reports it
// (its clock_source attribute).
constexpr const char* kCpuMhzSource = "/proc/cpuinfo";

inline std::string proc_field(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    size_t i = key.size();
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size() || line[i] != ':') continue;  // a longer key with the same prefix
    size_t b = line.find_first_not_of(" \t", i + 1);
    if (b == std::string::npos) return "";
    size_t e = line.find_last_not_of(" \t\r");
    return line.substr(b, e - b + 1);
  }
  return "";
}

// A /proc/meminfo entry ("MemTotal", "MemAvailable") in bytes; 0 if unknown. The file gives kB.
inline uint64_t meminfo_bytes(const std::string& key) {
  std::string v = proc_field("/proc/meminfo", key);
  if (v.empty()) return 0;
  return std::strtoull(v.c_str(), nullptr, 10) * 1024ull;
}

inline uint64_t memory_total() { return meminfo_bytes("MemTotal"); }
inline uint64_t memory_available() { return meminfo_bytes("MemAvailable"); }

// CPUs this process may run on (its affinity mask, which honours taskset, cgroups cpusets and
// container limits), not the machine's count; at least 1.
inline int affinity_cpu_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return 1;
}

}  // namespace dlrt::plugin::host
