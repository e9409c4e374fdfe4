// shell_posix.cc: shell.hpp on Linux: /proc/self/exe, popen and sh.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "shell.hpp"

namespace dlbench {

namespace fs = std::filesystem;

fs::path own_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

ShellRun run_shell(const std::string& cmd, bool keep_stderr) {
  std::string full = cmd;
  char path[] = "/tmp/dlbench_stderr_XXXXXX";
  if (keep_stderr) {
    const int fd = mkstemp(path);
    if (fd < 0) throw std::runtime_error("cannot make a temporary file in /tmp for: " + cmd);
    close(fd);
    // `path` is mkstemp's: letters and digits only, safe unquoted.
    full += std::string(" 2>") + path;
  }
  ShellRun r;
  FILE* p = popen(full.c_str(), "r");
  if (p != nullptr) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    r.status = pclose(p);
  }
  if (keep_stderr) {
    std::ifstream f(path);
    std::ostringstream s;
    s << f.rdbuf();
    r.err = s.str();
    std::remove(path);
  }
  if (p == nullptr) throw std::runtime_error("cannot run: " + cmd);
  r.how = WIFEXITED(r.status)     ? "exit status " + std::to_string(WEXITSTATUS(r.status))
          : WIFSIGNALED(r.status) ? "killed by signal " + std::to_string(WTERMSIG(r.status))
                                  : "status " + std::to_string(r.status);
  return r;
}

int shell_status(const std::string& cmd) { return std::system(cmd.c_str()); }

}  // namespace dlbench
