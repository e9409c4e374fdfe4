// core/ops/status_matchers.hpp: test support for Result<T>: a gtest check on its errors, and
// the one way a test helper that expects success turns a failed Result into an exception.
// (libdlrt itself converts with core::fail, core/status.hpp, which keeps the code.)
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include "status.hpp"

namespace dlrt::ops::testing {

// Passes when `r` failed with `code` and its message contains every one of `parts`.
template <typename T>
::testing::AssertionResult fails_with(const Result<T>& r, dlrt_code code,
                                      std::initializer_list<std::string> parts) {
  if (r.ok()) return ::testing::AssertionFailure() << "succeeded, expected " << code_name(code);
  const Status s = r.status();
  if (s.code() != code)
    return ::testing::AssertionFailure()
           << "got " << s.to_string() << ", expected code " << code_name(code);
  for (const std::string& p : parts)
    if (s.message().find(p) == std::string::npos)
      return ::testing::AssertionFailure()
             << "message \"" << s.message() << "\" lacks \"" << p << "\"";
  return ::testing::AssertionSuccess();
}

// The value of `r`; a failed `r` throws std::runtime_error whose what() is
// r.status().to_string() ("INVALID_ARGUMENT: conv2d: ..."), after "<context>: " when given.
template <typename T>
T value_or_throw(Result<T> r, const std::string& context = {}) {
  if (!r.ok()) {
    const std::string status = r.status().to_string();
    throw std::runtime_error(context.empty() ? status : context + ": " + status);
  }
  return std::move(r).value();
}

}  // namespace dlrt::ops::testing
