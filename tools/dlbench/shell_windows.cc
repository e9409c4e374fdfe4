// shell_windows.cc: shell.hpp on Windows. own_dir is the folder of dlbench.exe; the anchors'
// command lines are sh's, so nothing runs them here: each call fails saying why, and the
// comparisons (--compare-torch, infer --compare-ort) stay a Linux feature.
#include <windows.h>

#include <stdexcept>
#include <string>

#include "shell.hpp"

namespace dlbench {

namespace fs = std::filesystem;

fs::path own_dir() {
  std::wstring buf(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = ::GetModuleFileNameW(nullptr, buf.data(), static_cast<DWORD>(buf.size()));
    if (n == 0) return fs::current_path();
    if (n < buf.size()) {
      buf.resize(n);
      return fs::path(buf).parent_path();
    }
    buf.resize(buf.size() * 2);  // truncated: a longer path
  }
}

namespace {
[[noreturn]] void no_shell(const std::string& cmd) {
  throw std::runtime_error(
      "the Windows build of dlbench runs no comparison (PyTorch, onnxruntime): their command "
      "lines need a POSIX shell; run the comparison with the Linux build. Command: " + cmd);
}
}  // namespace

ShellRun run_shell(const std::string& cmd, bool) { no_shell(cmd); }

int shell_status(const std::string& cmd) { no_shell(cmd); }

}  // namespace dlbench
