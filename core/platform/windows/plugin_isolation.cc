// windows/plugin_isolation.cc: the isolated plugin check (plugin_isolation.hpp) on Windows.
//
// Windows has no fork. The child is a small program, dlrt-plugin-check.exe, that sits beside
// libdlrt.dll (windows/plugin_check_main.cc): it loads the plugin with the loader's flags,
// calls dlrt_plugin_init and exits with kInitReturnedExitCode. It is started suspended and put
// in a job object before it runs a single instruction, so that killing the job on a timeout
// also ends anything the plugin started, and closing the job ends it all even if this
// process dies (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE). How the child ended tells the rest: its
// exit code is the NTSTATUS of a crash (0xC0000005, access violation), 3 for abort(), or what
// the plugin passed to exit().
#include <windows.h>

#include <fmt/format.h>

#include "platform/windows/plugin_check.hpp"
#include "platform/windows/text.hpp"
#include "plugin_isolation.hpp"

namespace dlrt::core {
namespace {

using platform::win::error_text;
using platform::win::narrow;
using platform::win::widen;

// The folder of the module holding this code (libdlrt.dll, or a test .exe linking the core).
std::wstring own_folder() {
  HMODULE self = nullptr;
  if (!::GetModuleHandleExW(
          GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
          reinterpret_cast<LPCWSTR>(&own_folder), &self))
    return L"";
  std::wstring name(32768, L'\0');
  const DWORD n = ::GetModuleFileNameW(self, name.data(), static_cast<DWORD>(name.size()));
  if (n == 0 || n >= name.size()) return L"";
  name.resize(n);
  const size_t slash = name.find_last_of(L"\\/");
  return slash == std::wstring::npos ? L"" : name.substr(0, slash);
}

// What a crash's exit code (an NTSTATUS) is called, for the message.
std::string exit_code_text(DWORD code) {
  switch (code) {
    case EXCEPTION_ACCESS_VIOLATION:
      return "EXCEPTION_ACCESS_VIOLATION (0xC0000005)";
    case EXCEPTION_ILLEGAL_INSTRUCTION:
      return "EXCEPTION_ILLEGAL_INSTRUCTION (0xC000001D)";
    case EXCEPTION_INT_DIVIDE_BY_ZERO:
      return "EXCEPTION_INT_DIVIDE_BY_ZERO (0xC0000094)";
    case EXCEPTION_STACK_OVERFLOW:
      return "EXCEPTION_STACK_OVERFLOW (0xC00000FD)";
    case 0xC0000409:
      return "STATUS_STACK_BUFFER_OVERRUN (0xC0000409, a fail-fast)";
    default:
      return fmt::format("exception 0x{:08X}", static_cast<unsigned>(code));
  }
}

// Closes a handle when it goes out of scope.
struct Handle {
  HANDLE h = nullptr;
  ~Handle() {
    if (h != nullptr && h != INVALID_HANDLE_VALUE) ::CloseHandle(h);
  }
};

}  // namespace

IsolatedCheck check_plugin_in_child(const std::string& path, double timeout_s) {
  auto unavailable = [&](const std::string& why) {
    return IsolatedCheck{DLRT_UNAVAILABLE,
                         fmt::format("plugin {}: cannot check it in a child process: {}", path, why)};
  };
  const std::wstring helper = own_folder() + L"\\" + platform::win::kPluginCheckProgram;
  if (::GetFileAttributesW(helper.c_str()) == INVALID_FILE_ATTRIBUTES)
    return unavailable(fmt::format("{} is missing ({}); it is installed beside libdlrt.dll",
                                   narrow(helper), error_text(::GetLastError())));

  Handle job{::CreateJobObjectW(nullptr, nullptr)};
  if (job.h == nullptr) return unavailable("CreateJobObjectW: " + error_text(::GetLastError()));
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags =
      JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
  if (!::SetInformationJobObject(job.h, JobObjectExtendedLimitInformation, &limits,
                                 sizeof(limits)))
    return unavailable("SetInformationJobObject: " + error_text(::GetLastError()));

  // "helper" "plugin path": quoted, so spaces in either are kept (neither may hold a '"').
  std::wstring command = L"\"" + helper + L"\" \"" + widen(path) + L"\"";
  STARTUPINFOW si{};
  si.cb = sizeof(si);
  PROCESS_INFORMATION pi{};
  if (!::CreateProcessW(helper.c_str(), command.data(), nullptr, nullptr, FALSE,
                        CREATE_SUSPENDED | CREATE_NO_WINDOW, nullptr, nullptr, &si, &pi))
    return unavailable("CreateProcessW: " + error_text(::GetLastError()));
  Handle process{pi.hProcess}, thread{pi.hThread};
  if (!::AssignProcessToJobObject(job.h, process.h)) {
    const DWORD err = ::GetLastError();
    ::TerminateProcess(process.h, 1);
    return unavailable("AssignProcessToJobObject: " + error_text(err));
  }
  ::ResumeThread(thread.h);

  constexpr const char* kWhere = "(checked in a child process; not loaded in this one)";
  const DWORD wait_ms = static_cast<DWORD>(timeout_s * 1000.0 + 0.5);
  const DWORD waited = ::WaitForSingleObject(process.h, wait_ms);
  if (waited == WAIT_TIMEOUT) {
    ::TerminateJobObject(job.h, 1);
    ::WaitForSingleObject(process.h, 5000);
    return {DLRT_DEADLINE_EXCEEDED,
            fmt::format("plugin {} did not return from init within {:.1f} s {}", path, timeout_s,
                        kWhere)};
  }
  if (waited != WAIT_OBJECT_0)
    return unavailable("WaitForSingleObject: " + error_text(::GetLastError()));
  DWORD code = 0;
  if (!::GetExitCodeProcess(process.h, &code))
    return unavailable("GetExitCodeProcess: " + error_text(::GetLastError()));
  if (code == platform::win::kInitReturnedExitCode) return {};
  if (code == platform::win::kNotLoadedExitCode) return {};  // the in-process load says why
  if ((code & 0xC0000000u) == 0xC0000000u)                   // an NTSTATUS error: a crash
    return {DLRT_INTERNAL,
            fmt::format("plugin {} crashed with {} in init {}", path, exit_code_text(code), kWhere)};
  // abort() ends a Windows process with exit code 3 too, so 3 cannot tell the two apart.
  if (code == 3)
    return {DLRT_INTERNAL, fmt::format("plugin {} exited with status 3 in init: it called abort() "
                                       "or exit(3) (a plugin must return a status, never end the "
                                       "process) {}",
                                       path, kWhere)};
  return {DLRT_INTERNAL, fmt::format("plugin {} exited with status {} in init (a plugin must "
                                     "return a status, never end the process) {}",
                                     path, code, kWhere)};
}

}  // namespace dlrt::core
