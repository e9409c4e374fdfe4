// status.hpp: libdlrt's private side of status.h — the definition of the opaque dlrt_status,
// and the C++ error type the core uses internally.
//
// Inside the core, failures travel as `dlrt::core::Error` exceptions (a code and a message);
// at the C boundary (c_api.cc) every exported function catches them and returns a
// dlrt_status*. Statuses that plugins hand us were made by our own dlrt_status_create (through
// the host table), so `take_status` can read and free them here.
//
// `fail` is the core's one way from an error value to an exception: a code and a message, a
// StatusValue (a dlrt_status* after take_status), or the op registry's ops::Status, the last
// two optionally after "<context>: ". The public C++ SDK has its own bridge (dlrt::check in
// dlrt/error.hpp), one layer up: it turns the statuses the C API returns into dlrt::Error.
#pragma once

#include <dlrt/status.h>

#include <exception>
#include <string>
#include <string_view>
#include <utility>

// The opaque handle of status.h. Heap-allocated by dlrt_status_create, except for the one
// static out-of-memory status (see status.cc), which dlrt_status_free recognises and keeps.
struct dlrt_status {
  dlrt_code code;
  std::string message;
};

namespace dlrt::ops {
class Status;
}  // namespace dlrt::ops

namespace dlrt::core {

// An error on its way to the C boundary.
class Error : public std::exception {
 public:
  Error(dlrt_code code, std::string message) : code_(code), message_(std::move(message)) {}
  dlrt_code code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  dlrt_code code_;
  std::string message_;
};

[[noreturn]] inline void fail(dlrt_code code, std::string message) {
  throw Error(code, std::move(message));
}

// A status's code and message, copied out of a dlrt_status* that was then freed.
struct StatusValue {
  dlrt_code code = DLRT_OK;
  std::string message;
  bool ok() const { return code == DLRT_OK; }
};

// Throws a failed status as an Error with its code and its message, "<context>: <message>"
// when `context` is not empty. Precondition: !s.ok().
[[noreturn]] void fail(const StatusValue& s, std::string_view context = {});
[[noreturn]] void fail(const ops::Status& s, std::string_view context = {});

// Takes ownership of `status` (a plugin's return value, or one of ours), frees it and returns
// its contents. NULL gives {DLRT_OK, ""}.
StatusValue take_status(dlrt_status* status);

// Turns the exception currently being handled into a new dlrt_status*. Call only inside a
// catch block. Never throws.
dlrt_status* status_from_current_exception() noexcept;

}  // namespace dlrt::core
