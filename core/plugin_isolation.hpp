// plugin_isolation.hpp: try a plugin's load and init in a child process before the host
// loads it (plugin_isolation.cc).
//
// Why: a plugin runs in the host's process, so one that segfaults, aborts, calls exit() or
// never returns in dlrt_plugin_init takes the host with it, and nobody says which plugin it
// was. With isolation on (dlrt_context_options.isolate_plugins, dlprobe's default), the
// loader first forks; the child dlopens the file and calls dlrt_plugin_init, then reports
// back over a pipe. Only a plugin whose init returned in the child is loaded in-process.
//
// What it does not cover: plugin_create and later calls (only load + init run in the child),
// and a plugin that misbehaves only sometimes. Fork in a host with other threads is safe
// here only because the child does nothing but dlopen, the init call and _exit.
#pragma once

#include <string>

#include <dlrt/status.h>

namespace dlrt::core {

struct IsolatedCheck {
  dlrt_code code = DLRT_OK;  // OK: init returned in the child (success or an error status)
  // Otherwise why the plugin is not loaded, e.g. "plugin /p/libdlrt-x.so crashed with
  // SIGSEGV in init (checked in a child process; not loaded in this one)" or "... did not
  // return from init within 10.0 s ...". INTERNAL for a crash or an exit, DEADLINE_EXCEEDED
  // for a hang, UNAVAILABLE when the child could not be started.
  std::string message;
};

// Runs dlopen + dlrt_plugin_init of `path` in a child process and waits at most `timeout_s`
// (> 0) seconds for it; a child that overruns is killed (SIGKILL) and reaped.
IsolatedCheck check_plugin_in_child(const std::string& path, double timeout_s);

}  // namespace dlrt::core
