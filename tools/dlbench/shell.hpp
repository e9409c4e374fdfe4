// shell.hpp: what dlbench asks of the operating system to run its anchors (PyTorch's twins,
// onnxruntime) beside dlrt: its own folder, and sh command lines with their output. One file
// per system: shell_posix.cc (popen, sh), shell_windows.cc (the anchors are not run there:
// their command lines are sh's, and the cross-built dlbench.exe is tested under Wine, where no
// PyTorch is installed; each function says so in its error).
#pragma once

#include <filesystem>
#include <string>

namespace dlbench {

// The folder of this executable (the twins' scripts are copied next to it).
std::filesystem::path own_dir();

// One sh command line, run to its end.
struct ShellRun {
  int status = -1;   // 0: it exited with status 0
  std::string out;   // its stdout
  std::string err;   // its stderr (when asked to keep it), else passed through
  std::string how;   // "exit status 2", "killed by signal 9", ...: for messages
};

// Runs `cmd` with sh; stdout is captured, stderr too when keep_stderr (through a temporary
// file), else it goes to dlbench's. Throws std::runtime_error when it cannot be started.
ShellRun run_shell(const std::string& cmd, bool keep_stderr);

// std::system(cmd) through sh: the exit status (0 = success).
int shell_status(const std::string& cmd);

}  // namespace dlbench
