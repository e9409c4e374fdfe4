// host_tensor.hpp: HostTensor, a dense row-major tensor in host memory, the importer's form of
// an ONNX initializer, a Constant node's value, or a value it folded at import time (shapes,
// weights made by ConstantOfShape). It owns its bytes.
#pragma once

#include <dlrt/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "status.hpp"

namespace dlrt::onnx_import {

// The importer throws core Errors (status.hpp); c_api_onnx.cc turns them into statuses.
using core::Error;
using core::fail;

struct HostTensor {
  dlrt_dtype dtype = DLRT_F32;
  std::vector<int64_t> dims;   // empty: a scalar
  std::vector<uint8_t> bytes;  // element_count() * dlrt_dtype_size(dtype)

  // Product of dims (1 for a scalar); the dims were checked not to overflow when made.
  int64_t element_count() const;
  // The elements as int64 (integer or bool dtypes, and float ones truncated): shape inputs.
  std::vector<int64_t> as_int64s() const;
  // The elements as double (any dtype but f16/bf16, which are converted).
  std::vector<double> as_doubles() const;

  static HostTensor from_int64s(const std::vector<int64_t>& values, std::vector<int64_t> dims);
  static HostTensor from_floats(const std::vector<float>& values, std::vector<int64_t> dims);
  // `values` converted to `dtype` (any dlrt dtype but f16/bf16).
  static HostTensor from_doubles(dlrt_dtype dtype, const std::vector<double>& values,
                                 std::vector<int64_t> dims);
};

// Product of `dims`, refusing a negative dim or a product above `limit` (the message names
// `what` and the dims); the importer's one overflow check.
int64_t checked_element_count(const std::vector<int64_t>& dims, int64_t limit,
                              const std::string& what);

std::string dims_text(const std::vector<int64_t>& dims);  // "(2,3,4)", "()" for a scalar

}  // namespace dlrt::onnx_import
