// seq.cc: the oracle's kernels for the sequence ops of core/ops/infer_seq.cc: plain loops.
//
//   one_hot  y[i, d] = on_value if indices[i] == d else off_value; an id outside [0, D)
//            gives a row of off_value (TF's behaviour; docs/ops.md)
//   cumsum   x seen as (outer, K, inner) around the axis; each (outer, inner) line summed
//            in double (integers: in their unsigned type, wrapping) in scan order (from the end when reverse), the running sum stored
//            before (exclusive) or after (inclusive) adding x
//   top_k    per row, a stable sort of all N positions by "ranks before" (larger value
//            first, NaN above every number, equal values by lower index); the first k, then
//            re-sorted by index when sorted = false
#include <algorithm>
#include <numeric>
#include <string>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

// indices: (I...) -> y: (I..., D) of f32|i32|i64 (on/off values converted as cast does)
void run_one_hot(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const TensorView& ids = op.input(0);
  const TensorView& y = op.output(0);
  const int64_t depth = op.get_int("depth");
  const double on = op.get_float("on_value"), off = op.get_float("off_value");
  for (int64_t i = 0; i < ids.numel; ++i) {
    const int64_t id = load_index(in[0], ids.dtype, i);
    for (int64_t d = 0; d < depth; ++d) store_double(out[0], y.dtype, i * depth + d, id == d ? on : off);
  }
}

void check_one_hot(const OpView& op) {
  const int32_t t = op.output(0).dtype;
  if (t != DLRT_F32 && t != DLRT_F64 && t != DLRT_I32 && t != DLRT_I64)
    op.unimplemented(std::string("y: dtype ") + plugin::dtype_name(t) +
                     " is not handled (f32, f64, i32, i64)");
}

void check_cumsum(const OpView& op) { expect_numeric(op, op.input(0), "x"); }

// x: (outer, K, inner) around `axis` -> y: same
void run_cumsum(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const TensorView& x = op.input(0);
  const int axis = plugin::normalize_axis(op.get_int("axis"), x.rank(), op.name());
  const bool exclusive = op.get_bool("exclusive"), reverse = op.get_bool("reverse");
  int64_t outer = 1, k = x.dims[axis], inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.dims[d];
  for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dims[d];
  with_numeric(x.dtype, [&](auto t) {
    using T = decltype(t);
    using Sum = typename ScanSum<T>::type;
    const T* src = static_cast<const T*>(in[0]);
    T* y = static_cast<T*>(out[0]);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        Sum sum = 0;
        for (int64_t step = 0; step < k; ++step) {
          const int64_t j = reverse ? k - 1 - step : step;
          const int64_t at = (o * k + j) * inner + i;
          if (exclusive) {
            y[at] = static_cast<T>(sum);
            sum += static_cast<Sum>(src[at]);
          } else {
            sum += static_cast<Sum>(src[at]);
            y[at] = static_cast<T>(sum);
          }
        }
      }
  });
}

// x: (rows, N) -> values, indices: (rows, k)
void run_top_k(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const TensorView& x = op.input(0);
  const int64_t n = x.dims.back(), rows = x.numel / n, k = op.get_int("k");
  const bool sorted = op.get_bool("sorted");
  with_float(x.dtype, [&](auto t) {
    using T = decltype(t);
    const T* src = static_cast<const T*>(in[0]);
    T* values = static_cast<T*>(out[0]);
    int64_t* indices = static_cast<int64_t*>(out[1]);
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = src + r * n;
      std::iota(order.begin(), order.end(), int64_t{0});
      // Stable: among equal values (and among NaNs) the lower index stays first.
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const bool na = std::isnan(double(row[a])), nb = std::isnan(double(row[b]));
        if (na || nb) return na && !nb;
        return row[a] > row[b];
      });
      if (!sorted) std::sort(order.begin(), order.begin() + k);
      for (int64_t j = 0; j < k; ++j) {
        values[r * k + j] = row[order[size_t(j)]];
        indices[r * k + j] = order[size_t(j)];
      }
    }
  });
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"one_hot", run_one_hot, check_one_hot});
  t.push_back({"cumsum", run_cumsum, check_cumsum});
  t.push_back({"top_k", run_top_k, check_float});
}

}  // namespace dlrt::reference::detail
