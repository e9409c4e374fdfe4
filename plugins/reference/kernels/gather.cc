// gather.cc: gather (rows of params picked by ids, axis 0) and scatter_add (its transpose),
// core/ops/infer_gather.cc. The oracle: plain loops, sums in double, in index order.
//
// An id outside [0, R) is INVALID_ARGUMENT naming the id, its position and R; the check runs
// over every id before anything is written, so a failed run leaves the output untouched.
#include <cstring>
#include <string>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

// Every id of `ids` (n of them, i32|i64) lies in [0, rows), or INVALID_ARGUMENT.
void check_ids(const OpView& op, const void* ids, int32_t dtype, int64_t n, int64_t rows) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = load_index(ids, dtype, i);
    if (r < 0 || r >= rows)
      op.invalid("indices[" + std::to_string(i) + "] (flat) is " + std::to_string(r) +
                 ", outside [0, " + std::to_string(rows) + ") (the number of rows)");
  }
}

// params: (R, D...), indices: (I...) -> y: (I..., D...); y[i] = params[indices[i]] (rows of
// any dtype are bytes).
void run_gather(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const TensorView& params = op.input(0);
  const TensorView& ids = op.input(1);
  const int64_t rows = params.dims[0];
  const size_t row_bytes = params.bytes / static_cast<size_t>(rows);
  check_ids(op, in[1], ids.dtype, ids.numel, rows);
  const auto* src = static_cast<const unsigned char*>(in[0]);
  auto* dst = static_cast<unsigned char*>(out[0]);
  for (int64_t i = 0; i < ids.numel; ++i)
    std::memcpy(dst + i * row_bytes, src + load_index(in[1], ids.dtype, i) * row_bytes,
                row_bytes);
}

// indices: (I...), updates: (I..., D...) -> out: (R, D...); out[r] = sum over i in index
// order of updates[i] where indices[i] == r (in double, stored once).
void run_scatter_add(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const TensorView& ids = op.input(0);
  const TensorView& upd = op.input(1);
  const TensorView& y = op.output(0);
  const int64_t rows = y.dims[0];
  const int64_t d = y.numel / rows;  // elements per row
  check_ids(op, in[0], ids.dtype, ids.numel, rows);
  with_float(upd.dtype, [&](auto t) {
    using T = decltype(t);
    const T* u = static_cast<const T*>(in[1]);
    std::vector<double> acc(static_cast<size_t>(y.numel), 0.0);
    for (int64_t i = 0; i < ids.numel; ++i) {
      const int64_t r = load_index(in[0], ids.dtype, i);
      for (int64_t k = 0; k < d; ++k) acc[size_t(r * d + k)] += static_cast<double>(u[i * d + k]);
    }
    T* o = static_cast<T*>(out[0]);
    for (int64_t j = 0; j < y.numel; ++j) o[j] = static_cast<T>(acc[size_t(j)]);
  });
}

void check_scatter_add(const OpView& op) { expect_float(op, op.input(1), "updates"); }

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"gather", run_gather, nullptr});
  t.push_back({"scatter_add", run_scatter_add, check_scatter_add});
}

}  // namespace dlrt::reference::detail
