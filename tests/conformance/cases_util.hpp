// tests/conformance/cases_util.hpp: small helpers the cases_*.cc files share: TF's
// SAME/VALID output sizes (docs/ops.md, Conventions) and NHWC/NCHW image dims, so the
// backward cases can give dy exactly the forward op's output shape.
#pragma once

#include <string>

#include "case.hpp"

namespace dlrt::conformance::detail {

inline int64_t window_out(const std::string& padding, int64_t in, int64_t k, int64_t stride,
                          int64_t dilation) {
  if (padding == "SAME") return (in + stride - 1) / stride;
  return (in - (k - 1) * dilation - 1) / stride + 1;
}

// (N,H,W,C) or (N,C,H,W).
inline Dims image(const std::string& format, int64_t n, int64_t h, int64_t w, int64_t c) {
  return format == "NCHW" ? Dims{n, c, h, w} : Dims{n, h, w, c};
}

inline TensorSpec f32(std::string name, Dims dims, Fill fill) {
  return TensorSpec{std::move(name), DLRT_F32, std::move(dims), std::move(fill)};
}
inline TensorSpec typed(std::string name, dlrt_dtype dtype, Dims dims, Fill fill) {
  return TensorSpec{std::move(name), dtype, std::move(dims), std::move(fill)};
}

}  // namespace dlrt::conformance::detail
