// core/ops/ops_test_util.hpp: shorthands for the registry's tests.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "op_instance.hpp"
#include "status_matchers.hpp"

namespace dlrt::ops::testing {

inline TensorType f32(Dims dims) { return {DLRT_F32, std::move(dims)}; }
inline TensorType i32(Dims dims) { return {DLRT_I32, std::move(dims)}; }
inline TensorType i64(Dims dims) { return {DLRT_I64, std::move(dims)}; }

// Instantiates and returns the output dims of output `i`; fails the test (and returns {})
// when instantiate fails.
inline Dims out_dims(std::string_view op, const std::vector<TensorType>& inputs,
                     const AttrMap& attrs = {}, int i = 0) {
  Result<OpInstance> r = instantiate(op, inputs, attrs);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  if (!r.ok()) return {};
  return r->output(i).dims;
}

inline ::testing::AssertionResult invalid(std::string_view op,
                                          const std::vector<TensorType>& inputs,
                                          const AttrMap& attrs,
                                          std::initializer_list<std::string> parts) {
  return fails_with(instantiate(op, inputs, attrs), DLRT_INVALID_ARGUMENT, parts);
}

}  // namespace dlrt::ops::testing
