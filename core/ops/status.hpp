// core/ops/status.hpp: errors as values for the op registry.
//
// `Status` is a dlrt_code plus a message (OK when the code is DLRT_OK); `Result<T>` is a T
// or a non-OK Status. Nothing in dlrt::ops throws across its API: every failure the caller
// can cause comes back as INVALID_ARGUMENT (or NOT_FOUND for an unknown op) with a message
// that names the op, the operand and what was expected.
//
// This is the registry's own small type, not the C dlrt_status handle: the core converts
// with `dlrt_status_create(s.code(), s.message().c_str())` where it crosses the C boundary.
#pragma once

#include <dlrt/status.h>
#include <fmt/format.h>

#include <string>
#include <utility>
#include <variant>

namespace dlrt::ops {

class Status {
 public:
  Status() = default;  // OK
  Status(dlrt_code code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == DLRT_OK; }
  dlrt_code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: conv2d: ..." (just "OK" when ok).
  std::string to_string() const;

 private:
  dlrt_code code_ = DLRT_OK;
  std::string message_;
};

// "OK", "INVALID_ARGUMENT", ... (the registry cannot call libdlrt's dlrt_code_name: it is
// linked into libdlrt and also into tests that do not load it).
const char* code_name(dlrt_code code);

template <typename... Args>
Status invalid_argument(fmt::format_string<Args...> format, Args&&... args) {
  return Status(DLRT_INVALID_ARGUMENT, fmt::format(format, std::forward<Args>(args)...));
}

// A value or the reason there is none. Constructing one from an OK Status is a bug and
// yields INTERNAL, so `ok()` always means "has a value".
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design, like absl::StatusOr
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    if (std::get<1>(v_).ok()) v_ = Status(DLRT_INTERNAL, "Result built from an OK status");
  }

  bool ok() const { return v_.index() == 0; }
  // The error; an OK status when there is a value.
  Status status() const { return ok() ? Status() : std::get<1>(v_); }

  // Precondition: ok().
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace dlrt::ops

// Returns the Status of `expr` from the enclosing function when it is not OK.
#define DLRT_OPS_RETURN_IF_ERROR(expr)                   \
  do {                                                   \
    ::dlrt::ops::Status dlrt_ops_status_ = (expr);       \
    if (!dlrt_ops_status_.ok()) return dlrt_ops_status_; \
  } while (0)
