// windows/plugin_check.hpp: what windows/plugin_isolation.cc and the child program it starts
// (windows/plugin_check_main.cc, dlrt-plugin-check.exe) agree on.
#pragma once

#include <windows.h>

namespace dlrt::core::platform::win {

// Installed beside libdlrt.dll.
inline constexpr const wchar_t* kPluginCheckProgram = L"dlrt-plugin-check.exe";

// Exit codes of the child. Neither is a small number a plugin's exit() would pass, nor an
// NTSTATUS (0xC.......).
inline constexpr DWORD kInitReturnedExitCode = 0x444C0001;  // dlrt_plugin_init returned
inline constexpr DWORD kNotLoadedExitCode = 0x444C0002;     // no such DLL or no init symbol

}  // namespace dlrt::core::platform::win
