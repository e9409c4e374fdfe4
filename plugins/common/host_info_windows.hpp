// host_info_windows.hpp: host_info.hpp on Windows. The same functions as host_info_posix.hpp,
// so the plugins read the same facts: proc_field answers the /proc/cpuinfo fields the plugins
// ask for from the registry key where Windows describes the first CPU.
#pragma once

#include <windows.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace dlrt::plugin::host {

namespace detail {

// A value of HKLM\HARDWARE\DESCRIPTION\System\CentralProcessor\0 as text ("" if missing).
inline std::string cpu_registry_value(const wchar_t* name) {
  const wchar_t* key = L"HARDWARE\\DESCRIPTION\\System\\CentralProcessor\\0";
  DWORD type = 0, size = 0;
  if (::RegGetValueW(HKEY_LOCAL_MACHINE, key, name, RRF_RT_REG_SZ | RRF_RT_REG_DWORD, &type,
                     nullptr, &size) != ERROR_SUCCESS)
    return "";
  std::wstring buf(size / sizeof(wchar_t) + 1, L'\0');
  if (::RegGetValueW(HKEY_LOCAL_MACHINE, key, name, RRF_RT_REG_SZ | RRF_RT_REG_DWORD, &type,
                     buf.data(), &size) != ERROR_SUCCESS)
    return "";
  if (type == REG_DWORD) {
    DWORD v = 0;
    std::memcpy(&v, buf.data(), sizeof(v));
    return std::to_string(v);
  }
  buf.resize(wcsnlen(buf.c_str(), buf.size()));
  const int n = ::WideCharToMultiByte(CP_UTF8, 0, buf.c_str(), static_cast<int>(buf.size()),
                                      nullptr, 0, nullptr, nullptr);
  std::string out(static_cast<size_t>(n > 0 ? n : 0), '\0');
  if (n > 0)
    ::WideCharToMultiByte(CP_UTF8, 0, buf.c_str(), static_cast<int>(buf.size()), out.data(), n,
                          nullptr, nullptr);
  const size_t b = out.find_first_not_of(' ');
  const size_t e = out.find_last_not_of(' ');
  return b == std::string::npos ? "" : out.substr(b, e - b + 1);
}

}  // namespace detail

// Where proc_field("/proc/cpuinfo", "cpu MHz") comes from here (the cpu plugin's clock_source
// attribute): the registry's ~MHz, the processor's nominal clock, as /proc/cpuinfo's is on a VM.
constexpr const char* kCpuMhzSource = "registry ~MHz";

// The /proc/cpuinfo fields the plugins use, from the registry; "" for any other path or key.
inline std::string proc_field(const char* path, const std::string& key) {
  if (std::strcmp(path, "/proc/cpuinfo") != 0) return "";
  if (key == "model name") return detail::cpu_registry_value(L"ProcessorNameString");
  if (key == "vendor_id") return detail::cpu_registry_value(L"VendorIdentifier");
  if (key == "cpu MHz") return detail::cpu_registry_value(L"~MHz");
  return "";
}

inline uint64_t memory_total() {
  MEMORYSTATUSEX m{};
  m.dwLength = sizeof(m);
  return ::GlobalMemoryStatusEx(&m) ? m.ullTotalPhys : 0;
}

inline uint64_t memory_available() {
  MEMORYSTATUSEX m{};
  m.dwLength = sizeof(m);
  return ::GlobalMemoryStatusEx(&m) ? m.ullAvailPhys : 0;
}

// CPUs in this process's affinity mask (what start /affinity and job objects allow), not the
// machine's count; at least 1. (A process in more than one processor group sees its first.)
inline int affinity_cpu_count() {
  DWORD_PTR process = 0, system = 0;
  if (::GetProcessAffinityMask(::GetCurrentProcess(), &process, &system)) {
    int n = 0;
    for (DWORD_PTR m = process; m != 0; m &= m - 1) ++n;
    if (n > 0) return n;
  }
  return 1;
}

}  // namespace dlrt::plugin::host
