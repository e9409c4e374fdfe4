// testing/status_checks.hpp: GoogleTest checks for plugin tests that call a plugin's C table
// through fake_host.hpp. A plugin call returns a dlrt_status* (NULL = OK) that the caller
// owns; take_status frees it and hands back (code, message), which these checks compare:
//   ASSERT_OK(api.device_open(inst, 0, &device));   // fails with "<call>: <message>"
//   EXPECT_TRUE(contains(message, "named part"));
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "testing/fake_host.hpp"

#define EXPECT_OK(expr)                                 \
  do {                                                  \
    auto [c_, m_] = ::dlrt::testing::take_status(expr); \
    EXPECT_EQ(c_, DLRT_OK) << #expr << ": " << m_;      \
  } while (0)

#define ASSERT_OK(expr)                                 \
  do {                                                  \
    auto [c_, m_] = ::dlrt::testing::take_status(expr); \
    ASSERT_EQ(c_, DLRT_OK) << #expr << ": " << m_;      \
  } while (0)

namespace dlrt::testing {

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace dlrt::testing
