// core/ops/status_matchers.hpp: a gtest check on Result<T> errors, for the registry's tests.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

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

}  // namespace dlrt::ops::testing
