// windows/text.hpp: UTF-8 <-> UTF-16 and GetLastError text, for the core's Windows files.
//
// The core keeps every path and message in UTF-8 std::string, as on POSIX; only at a Windows
// call is a path widened (the *W functions take UTF-16), so names outside the ANSI code page
// work. The narrow *A functions and std::filesystem::path(std::string) would use the ANSI
// code page instead and mangle such names.
#pragma once

#include <windows.h>

#include <string>

namespace dlrt::core::platform::win {

std::wstring widen(const std::string& utf8);
std::string narrow(const std::wstring& utf16);
std::string narrow(const wchar_t* utf16);

// The system's text for error `code` (GetLastError), with the number: "Access is denied.
// (error 5)". Every Windows error the core reports goes through this.
std::string error_text(DWORD code);

// A path as users write it: "\\?\C:\x" -> "C:\x", "\\?\UNC\srv\share" -> "\\srv\share".
std::wstring without_long_prefix(const std::wstring& path);

}  // namespace dlrt::core::platform::win
