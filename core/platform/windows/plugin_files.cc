// windows/plugin_files.cc: the plugin search's system part on Windows (plugin_search.hpp,
// platform.hpp; docs/windows.md).
//
// The POSIX rules in Windows terms:
//   - absolute paths only ("C:\..." or "\\server\share\..."), never the current folder;
//   - canonical = the final path of the opened file (GetFinalPathNameByHandleW: links and
//     junctions resolved), so a file reached twice is loaded once;
//   - the plugin file is opened once, without following a reparse point (O_NOFOLLOW), with
//     FILE_SHARE_READ only: while PluginFile holds that handle nobody can write, delete or
//     rename the file, so the file checked is the file LoadLibraryExW maps from that path;
//   - the file, its folder and every folder above it are checked with the ACL rule of
//     windows/acl.hpp (Everyone/Users/Authenticated Users must not be able to change them);
//   - the file and its folder are owned by this user, SYSTEM, Administrators or TrustedInstaller
//     (windows/acl.hpp's owner rule; POSIX: this user or root).
// Paths are UTF-8 in the core and UTF-16 at every Windows call (windows/text.hpp).
#include <windows.h>

#include <aclapi.h>

#include <algorithm>
#include <cctype>
#include <vector>
#include <fmt/format.h>

#include "log.hpp"
#include "platform/platform.hpp"
#include "platform/windows/acl.hpp"
#include "platform/windows/text.hpp"
#include "plugin_search.hpp"

namespace dlrt::core {
namespace {

using platform::win::AclObject;
using platform::win::error_text;
using platform::win::narrow;
using platform::win::widen;

bool is_slash(char c) { return c == '\\' || c == '/'; }

// The final path of an open handle, in the user's form (no "\\?\" prefix); "" on failure.
std::wstring final_path(HANDLE h) {
  std::wstring buf(MAX_PATH, L'\0');
  for (int tries = 0; tries < 2; ++tries) {
    const DWORD n = ::GetFinalPathNameByHandleW(h, buf.data(), static_cast<DWORD>(buf.size()),
                                                FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
    if (n == 0) return L"";
    if (n < buf.size()) {
      buf.resize(n);
      return platform::win::without_long_prefix(buf);
    }
    buf.assign(n + 1, L'\0');  // too small: n is the size needed
  }
  return L"";
}

// The folder holding `path` ("C:\a\b.dll" -> "C:\a"); the root keeps its slash ("C:\").
std::string parent_of(const std::string& path) {
  size_t slash = path.find_last_of("\\/");
  if (slash == std::string::npos) return path;
  std::string dir = path.substr(0, slash);
  if (dir.size() == 2 && dir[1] == ':') dir += '\\';  // "C:" alone means "C:'s current folder"
  return dir;
}

bool is_root(const std::string& dir) {
  if (dir.size() == 3 && dir[1] == ':' && is_slash(dir[2])) return true;  // "C:\\" or "C:/"
  // \\server\share (or \\server\share\) is the root of a network path.
  if (dir.size() > 2 && is_slash(dir[0]) && is_slash(dir[1])) {
    size_t slashes = std::count_if(dir.begin() + 2, dir.end(), is_slash);
    return slashes <= 1 || (slashes == 2 && is_slash(dir.back()));
  }
  return false;
}

// The DACL of the named file or folder, checked with the ACL rule.
// The SID of the user running this program (its process token's user), read once; nullptr if
// it cannot be read (then only the system's own accounts pass owner_problem).
const SID* current_user_sid() {
  static const std::vector<BYTE> sid = [] {
    std::vector<BYTE> out;
    HANDLE token = nullptr;
    if (!::OpenProcessToken(::GetCurrentProcess(), TOKEN_QUERY, &token)) return out;
    DWORD size = 0;
    ::GetTokenInformation(token, TokenUser, nullptr, 0, &size);
    std::vector<BYTE> buf(size);
    if (size != 0 && ::GetTokenInformation(token, TokenUser, buf.data(), size, &size)) {
      PSID user = reinterpret_cast<const TOKEN_USER*>(buf.data())->User.Sid;
      const BYTE* bytes = static_cast<const BYTE*>(user);
      out.assign(bytes, bytes + ::GetLengthSid(user));
    }
    ::CloseHandle(token);
    return out;
  }();
  return sid.empty() ? nullptr : reinterpret_cast<const SID*>(sid.data());
}

// The DACL rule for `path` (acl.hpp), and for the plugin file and its folder the owner rule,
// from one security descriptor: either read by name, or from the open handle `h`.
std::string security_problem(const std::string& path, AclObject what, HANDLE h = nullptr) {
  const bool owned = what != AclObject::kAncestorFolder;
  const SECURITY_INFORMATION asked =
      DACL_SECURITY_INFORMATION | (owned ? OWNER_SECURITY_INFORMATION : 0);
  PACL dacl = nullptr;
  PSID owner = nullptr;
  PSECURITY_DESCRIPTOR sd = nullptr;
  const DWORD rc =
      h != nullptr
          ? ::GetSecurityInfo(h, SE_FILE_OBJECT, asked, &owner, nullptr, &dacl, nullptr, &sd)
          : ::GetNamedSecurityInfoW(widen(path).c_str(), SE_FILE_OBJECT, asked, &owner, nullptr,
                                    &dacl, nullptr, &sd);
  if (rc != ERROR_SUCCESS)
    return fmt::format("cannot read the {} of {}: {}", owned ? "owner and ACL" : "ACL", path,
                       error_text(rc));
  std::string problem =
      owned ? platform::win::owner_problem(static_cast<SID*>(owner), current_user_sid(), what, path)
            : "";
  if (problem.empty()) problem = platform::win::acl_write_problem(dacl, what, path);
  ::LocalFree(sd);
  return problem;
}

}  // namespace

namespace platform {

bool is_absolute_path(const std::string& path) {
  if (path.size() >= 3 && std::isalpha(static_cast<unsigned char>(path[0])) && path[1] == ':' &&
      is_slash(path[2]))
    return true;                                                     // C:\x or C:/x
  return path.size() > 2 && is_slash(path[0]) && is_slash(path[1]);  // \\server\share\x
}

std::string canonical_path(const std::string& path, std::string* error) {
  // FILE_FLAG_BACKUP_SEMANTICS: needed to open a folder; no access rights asked, so this
  // works on files others hold open.
  HANDLE h =
      ::CreateFileW(widen(path).c_str(), 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                    nullptr, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (h == INVALID_HANDLE_VALUE) {
    if (error != nullptr) *error = error_text(::GetLastError());
    return "";
  }
  std::wstring out = final_path(h);
  if (out.empty() && error != nullptr) *error = error_text(::GetLastError());
  ::CloseHandle(h);
  return narrow(out);
}

bool is_directory(const std::string& canonical) {
  const DWORD attrs = ::GetFileAttributesW(widen(canonical).c_str());
  return attrs != INVALID_FILE_ATTRIBUTES && (attrs & FILE_ATTRIBUTE_DIRECTORY) != 0;
}

std::vector<std::string> plugin_files_in(const std::string& dir) {
  std::vector<std::string> names;
  WIN32_FIND_DATAW found{};
  HANDLE h = ::FindFirstFileW(widen(dir + "\\libdlrt-*.dll").c_str(), &found);
  if (h == INVALID_HANDLE_VALUE) return {};
  do {
    // The pattern also matches short (8.3) names, e.g. "libdlrt-x.dllold"; keep exact ones.
    std::string name = narrow(found.cFileName);
    if ((found.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) == 0 && name.size() > 4 &&
        _stricmp(name.c_str() + name.size() - 4, ".dll") == 0)
      names.push_back(std::move(name));
  } while (::FindNextFileW(h, &found));
  ::FindClose(h);
  std::sort(names.begin(), names.end());
  std::vector<std::string> files;
  for (const auto& n : names) files.push_back(dir + "\\" + n);
  return files;
}

}  // namespace platform

PluginFile::~PluginFile() {
  if (fd_ != nullptr && fd_ != INVALID_HANDLE_VALUE) ::CloseHandle(fd_);
}

std::string PluginFile::load_path() const { return narrow(final_path(fd_)); }

std::string ancestor_folder_problem(const std::string& folder) {
  // From the plugin's folder's parent up to the root: whoever may rename an entry of one of
  // these folders can swap the whole subtree, plugin included.
  std::string dir = folder;
  while (!is_root(dir)) {
    std::string up = parent_of(dir);
    if (up == dir) break;
    dir = up;
    std::string problem = security_problem(dir, AclObject::kAncestorFolder);
    if (!problem.empty())
      return fmt::format("{} (an ancestor of plugin folder {})", problem, folder);
  }
  return "";
}

std::string check_plugin_file(const std::string& path, std::shared_ptr<PluginFile>* opened) {
  // Deny-write sharing (FILE_SHARE_READ only) holds the file as it is while the handle lives;
  // FILE_FLAG_OPEN_REPARSE_POINT opens a symbolic link itself instead of its target.
  HANDLE h = ::CreateFileW(widen(path).c_str(), GENERIC_READ | READ_CONTROL, FILE_SHARE_READ,
                           nullptr, OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (h == INVALID_HANDLE_VALUE)
    return fmt::format("cannot open plugin {}: {}", path, error_text(::GetLastError()));
  auto file = std::make_shared<PluginFile>(h);
  BY_HANDLE_FILE_INFORMATION info{};
  if (!::GetFileInformationByHandle(h, &info))
    return fmt::format("cannot read the attributes of plugin {}: {}", path,
                       error_text(::GetLastError()));
  if ((info.dwFileAttributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT)) != 0)
    return fmt::format("plugin {} is not a regular file", path);
  std::string problem = security_problem(path, AclObject::kPluginFile, h);
  if (!problem.empty()) return problem;
  const std::string dir = parent_of(path);
  problem = security_problem(dir, AclObject::kPluginFolder);
  if (!problem.empty()) return problem;
  problem = ancestor_folder_problem(dir);
  if (!problem.empty()) return problem;
  if (opened != nullptr) *opened = std::move(file);
  return "";
}

std::string default_plugin_dir() {
  // The module this function was compiled into: libdlrt.dll itself (or a test .exe that links
  // the core statically), wherever it was installed or built.
  HMODULE self = nullptr;
  if (!::GetModuleHandleExW(
          GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
          reinterpret_cast<LPCWSTR>(&default_plugin_dir), &self)) {
    log(DLRT_LOG_WARNING, "loader",
        "cannot find libdlrt's own location ({}); skipping the default plugin folder",
        error_text(::GetLastError()));
    return "";
  }
  std::wstring name(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = ::GetModuleFileNameW(self, name.data(), static_cast<DWORD>(name.size()));
    if (n == 0) {
      log(DLRT_LOG_WARNING, "loader",
          "cannot find libdlrt's own location ({}); skipping the default plugin folder",
          error_text(::GetLastError()));
      return "";
    }
    if (n < name.size()) {
      name.resize(n);
      break;
    }
    name.resize(name.size() * 2);  // truncated: try a longer buffer
  }
  return parent_of(narrow(platform::win::without_long_prefix(name))) + "\\dlrt\\plugins";
}

}  // namespace dlrt::core
