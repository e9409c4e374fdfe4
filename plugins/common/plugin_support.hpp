// plugin_support.hpp: what every C++ plugin needs to keep its C ABI honest.
//
//  - `Error` carries a dlrt_code and a message through the plugin's C++ code;
//  - `guard(fn)` runs an entry's body and turns any exception into a dlrt_status* made by
//    the host (so no exception ever crosses the boundary), and `guard_void` does the same
//    for entries that return nothing (the error is logged instead);
//  - `Options` parses the plugin_create options and rejects unknown keys.
//
// The host API pointer is kept per plugin library (set by dlrt_plugin_init): every host that
// loads a plugin is libdlrt, whose table lives as long as any plugin instance of it.
// Not part of the SDK: internal to this repository's plugins.
#pragma once

#include <dlrt/plugin.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <map>
#include <new>
#include <set>
#include <string>
#include <utility>

namespace dlrt::plugin {

// The host's services, set once in dlrt_plugin_init. Inline variable: one per plugin .so.
inline const dlrt_host_api* g_host = nullptr;
// The plugin's short name, for log lines and error prefixes.
inline const char* g_plugin_name = "plugin";

// An error on its way to becoming a dlrt_status.
class Error : public std::exception {
 public:
  Error(dlrt_code code, std::string message) : code_(code), message_(std::move(message)) {}
  dlrt_code code() const noexcept { return code_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  dlrt_code code_;
  std::string message_;
};

[[noreturn]] inline void fail(dlrt_code code, const std::string& message) {
  throw Error(code, message);
}

// A status for the host; NULL if the host table is missing (cannot happen after init).
inline dlrt_status* make_status(dlrt_code code, const std::string& message) {
  if (g_host == nullptr || g_host->status_create == nullptr) return nullptr;
  return g_host->status_create(code, message.c_str());
}

inline void log(dlrt_log_level level, const std::string& message) {
  if (g_host != nullptr && g_host->log != nullptr)
    g_host->log(level, g_plugin_name, message.c_str());
}

// Runs `body` (returns void, reports failure by throwing) and converts what it throws.
template <typename Fn>
dlrt_status* guard(Fn&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (const Error& e) {
    return make_status(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return make_status(DLRT_RESOURCE_EXHAUSTED,
                       std::string(g_plugin_name) + ": out of host memory");
  } catch (const std::exception& e) {
    return make_status(DLRT_INTERNAL, std::string(g_plugin_name) + ": " + e.what());
  } catch (...) {
    return make_status(DLRT_INTERNAL, std::string(g_plugin_name) + ": unknown exception");
  }
}

// For entries that cannot return a status (destroy/free): errors are logged with their
// message (a dlrt_status is opaque to plugins, so the reason is taken from the exception
// before it would become one), never thrown.
template <typename Fn>
void guard_void(const char* entry, Fn&& body) noexcept {
  try {
    try {
      body();
    } catch (const std::exception& e) {
      log(DLRT_LOG_ERROR, std::string(entry) + " failed: " + e.what());
    } catch (...) {
      log(DLRT_LOG_ERROR, std::string(entry) + " failed: unknown exception");
    }
  } catch (...) {  // logging itself failed (out of memory): nothing more can be done
  }
}

// Throws INVALID_ARGUMENT if `p` is null, naming the argument.
template <typename T>
T* require(T* p, const char* what) {
  if (p == nullptr)
    fail(DLRT_INVALID_ARGUMENT, std::string(g_plugin_name) + ": " + what + " is NULL");
  return p;
}

// The checks every kernel_run starts with: `args` is present and at least as large as the
// ABI 1.0 dlrt_kernel_args (so rng_offset is there to read), and it carries exactly the
// operand counts of the descriptor the kernel was made for. `op` names the op in messages.
inline void check_kernel_args(const std::string& op, size_t num_inputs, size_t num_outputs,
                              const dlrt_kernel_args* args) {
  require(args, "args");
  if (!DLRT_HAS_FIELD(dlrt_kernel_args, rng_offset, args->struct_size))
    fail(DLRT_INVALID_ARGUMENT,
         std::string(g_plugin_name) + ": kernel_run args struct_size is " +
             std::to_string(args->struct_size) + ", expected at least " +
             std::to_string(offsetof(dlrt_kernel_args, rng_offset) + sizeof(uint64_t)) +
             " (ABI 1.0)");
  if (args->num_inputs != num_inputs || args->num_outputs != num_outputs)
    fail(DLRT_INVALID_ARGUMENT, std::string(g_plugin_name) + ": kernel_run of '" + op + "' got " +
                                    std::to_string(args->num_inputs) + " inputs and " +
                                    std::to_string(args->num_outputs) + " outputs, expected " +
                                    std::to_string(num_inputs) + " and " +
                                    std::to_string(num_outputs));
}

// Where a random kernel finds its offset (plugin.h, dlrt_kernel_args): the device pointer a
// host of ABI >= 1.1 gives, or NULL when the args stop before the field (a 1.0 host) or the
// host left it NULL (eager runs, variable initialisation). A kernel that runs on the device
// (CUDA) passes this pointer and args.rng_offset to the device code, which prefers the
// pointer; a kernel whose device memory is host memory calls rng_offset_at_execution.
inline const uint64_t* rng_offset_device(const dlrt_kernel_args& args) {
  return DLRT_HAS_FIELD(dlrt_kernel_args, rng_offset_device, args.struct_size)
             ? args.rng_offset_device
             : nullptr;
}

// The offset to draw with, read when the kernel executes: for host-memory devices only (cpu,
// reference), where the device pointer can be dereferenced on the host. Call it inside the
// work itself, never when enqueuing it, so a captured or deferred kernel sees the value the
// host wrote for the run being executed.
inline uint64_t rng_offset_at_execution(const dlrt_kernel_args& args) {
  const uint64_t* p = rng_offset_device(args);
  return p != nullptr ? *p : args.rng_offset;
}

// Options given to plugin_create, as key -> value. `known` lists the keys this plugin takes;
// any other key is an INVALID_ARGUMENT that names it and the accepted ones.
class Options {
 public:
  Options(const dlrt_plugin_create_args* args, const std::set<std::string>& known) {
    if (args == nullptr) return;
    for (size_t i = 0; i < args->num_options; ++i) {
      const dlrt_attr* a = args->options[i];
      if (a == nullptr || a->name == nullptr) continue;
      std::string key = a->name;
      if (known.count(key) == 0) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        fail(DLRT_INVALID_ARGUMENT, std::string(g_plugin_name) + ": unknown option '" + key +
                                        "' (accepted: " + (list.empty() ? "none" : list) + ")");
      }
      values_[key] = a->s != nullptr ? a->s : "";
    }
  }
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  std::string get(const std::string& key, const std::string& fallback = "") const {
    auto it = values_.find(key);
    return it == values_.end() ? fallback : it->second;
  }
  // An integer option in [lo, hi]; a malformed or out-of-range value names the key. 64-bit
  // on every system (long is 32 bits on Windows).
  int64_t get_int(const std::string& key, int64_t fallback, int64_t lo, int64_t hi) const {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    char* end = nullptr;
    const long long v = std::strtoll(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end != '\0' || v < lo || v > hi)
      fail(DLRT_INVALID_ARGUMENT, std::string(g_plugin_name) + ": option '" + key + "' is '" +
                                      it->second + "', expected an integer in [" +
                                      std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
  }

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace dlrt::plugin
