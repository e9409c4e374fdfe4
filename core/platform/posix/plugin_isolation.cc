// posix/plugin_isolation.cc: fork, dlopen + dlrt_plugin_init in the child, a one-byte report over a
// pipe, and the parent's bounded wait (plugin_isolation.hpp).
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dlrt/plugin.h>
#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "host_api.hpp"
#include "plugin_isolation.hpp"

namespace dlrt::core {
namespace {

constexpr char kInitReturned = 'R';  // the child's one-byte report: init returned

// The child's whole life: never returns. Whether init succeeded does not matter here (the
// in-process load reports that, with the plugin's message); only that it returned.
[[noreturn]] void child_main(const std::string& path, int report_fd) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr) {
    auto init = reinterpret_cast<dlrt_plugin_init_fn>(dlsym(handle, DLRT_PLUGIN_INIT_SYMBOL));
    if (init != nullptr) {
      // Room to spare, as the in-process loader gives (a newer plugin may write past it).
      struct alignas(dlrt_plugin_api) Padded {
        unsigned char bytes[sizeof(dlrt_plugin_api) + 1024];
      } table{};
      auto* api = reinterpret_cast<dlrt_plugin_api*>(&table);
      api->struct_size = sizeof(dlrt_plugin_api);
      // A plugin that calls exit() here ends the child as _exit below does, with its status:
      // registered last, this handler runs first and skips every other one — the host's and
      // the plugin's atexit handlers, the parent's stdio buffers (flushed twice otherwise),
      // and under LeakSanitizer its end-of-process scan of the parent's whole heap copy, which
      // can outlast the check's timeout on a loaded machine.
      on_exit([](int status, void*) { _exit(status); }, nullptr);
      try {
        (void)init(host_api(), api);  // its status is leaked: the child is about to end
      } catch (...) {
        // A throwing init is reported by the in-process load (it catches the same).
      }
    }
  }
  // dlopen failures and missing symbols are the in-process load's to report, too.
  (void)!write(report_fd, &kInitReturned, 1);
  _exit(0);  // no atexit handlers, no static destructors of the plugin or the host
}

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

}  // namespace

IsolatedCheck check_plugin_in_child(const std::string& path, double timeout_s) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return {DLRT_UNAVAILABLE, fmt::format("plugin {}: cannot check it in a child process: pipe: {}",
                                          path, std::strerror(errno))};
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return {DLRT_UNAVAILABLE, fmt::format("plugin {}: cannot check it in a child process: fork: {}",
                                          path, std::strerror(errno))};
  }
  if (pid == 0) {
    close(fds[0]);
    child_main(path, fds[1]);
  }
  close(fds[1]);

  // Wait for the report or the end of the pipe (the child died), at most timeout_s.
  using Clock = std::chrono::steady_clock;
  const auto give_up = Clock::now() + std::chrono::duration<double>(timeout_s);
  char report = 0;
  bool reported = false, timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int n = poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) continue;  // the clock decides at the top
    ssize_t got = read(fds[0], &report, 1);
    if (got < 0 && errno == EINTR) continue;
    reported = got == 1 && report == kInitReturned;
    break;  // a report, or end of file: the child is gone
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }

  constexpr const char* kWhere = "(checked in a child process; not loaded in this one)";
  if (timed_out)
    return {DLRT_DEADLINE_EXCEEDED,
            fmt::format("plugin {} did not return from init within {:.1f} s {}", path, timeout_s,
                        kWhere)};
  if (reported) return {};
  if (WIFSIGNALED(status))
    return {DLRT_INTERNAL, fmt::format("plugin {} crashed with {} in init {}", path,
                                       signal_text(WTERMSIG(status)), kWhere)};
  if (WIFEXITED(status))
    return {DLRT_INTERNAL, fmt::format("plugin {} exited with status {} in init (a plugin must "
                                       "return a status, never end the process) {}",
                                       path, WEXITSTATUS(status), kWhere)};
  return {DLRT_INTERNAL, fmt::format("plugin {} ended abnormally in init {}", path, kWhere)};
}

}  // namespace dlrt::core
