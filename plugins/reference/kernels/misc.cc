// misc.cc: the ops that are neither arithmetic layers nor shape moves: fill, cast (every pair
// of f32/f64/i8/i16/i32/i64/u8/u16/u32/u64/bool), gather_rows (batches from an on-device
// dataset), argmax and equal_count (accuracy).
#include <cmath>
#include <cstring>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

void expect_plain(const OpView& op, const TensorView& t, const char* what) {
  if (!is_plain_dtype(t.dtype))
    op.unimplemented(std::string(what) + ": dtype " + plugin::dtype_name(t.dtype) +
                     " is not handled (f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, bool)");
}

// ---- fill --------------------------------------------------------------------------------

// fill and cast store through load/store_double|int, which know the plain dtypes only.
void check_fill(const OpView& op) { expect_plain(op, op.output(0), "y"); }

// -> y: shape, every element `value` converted as cast converts a double
void run_fill(const OpView& op, const void* const*, void* const* out, uint64_t) {
  const double v = op.get_float("value");
  for (int64_t i = 0; i < op.output(0).numel; ++i) store_double(out[0], op.output(0).dtype, i, v);
}

// ---- cast --------------------------------------------------------------------------------

void check_cast(const OpView& op) {
  expect_plain(op, op.input(0), "x");
  expect_plain(op, op.output(0), "y");
}

// x: any -> y: same dims, dtype attribute. Integers convert exactly (saturating), floats to
// integers truncate toward zero (saturating, NaN -> 0), anything to bool is != 0.
void run_cast(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const int32_t from = op.input(0).dtype, to = op.output(0).dtype;
  const int64_t n = op.input(0).numel;
  if (from == to) {
    if (in[0] != out[0]) std::memmove(out[0], in[0], op.output(0).bytes);
    return;
  }
  // Elements may grow (u8 -> f32), so a cast in place would overwrite unread input:
  // run() gives this kernel scratch memory whenever the buffers overlap.
  for (int64_t i = 0; i < n; ++i) {
    if (from == DLRT_U64) store_u64(out[0], to, i, load_u64(in[0], i));  // beyond int64
    else if (plugin::dtype_is_float(from)) store_double(out[0], to, i, load_double(in[0], from, i));
    else store_int(out[0], to, i, load_int(in[0], from, i));
  }
}

// ---- gather_rows -------------------------------------------------------------------------

// params: (R,...), indices: (B) -> y: (B,...); y[b] = params[indices[b]], a zero row when the
// index is outside [0,R)
void run_gather_rows(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const TensorView& params = op.input(0);
  const int64_t rows = params.dims[0];
  const size_t row_bytes = rows == 0 ? 0 : params.bytes / static_cast<size_t>(rows);
  const auto* src = static_cast<const unsigned char*>(in[0]);
  auto* dst = static_cast<unsigned char*>(out[0]);
  for (int64_t b = 0; b < op.input(1).dims[0]; ++b) {
    const int64_t r = load_index(in[1], op.input(1).dtype, b);
    if (r >= 0 && r < rows) std::memcpy(dst + b * row_bytes, src + r * row_bytes, row_bytes);
    else std::memset(dst + b * row_bytes, 0, row_bytes);
  }
}

// ---- argmax ------------------------------------------------------------------------------

// x: (outer, K, inner) around axis -> y: (outer, inner), the first index of the max along K;
// a NaN counts as the max (NumPy's rule), its first occurrence wins.
void run_argmax(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const TensorView& x = op.input(0);
  const int axis = plugin::normalize_axis(op.get_int("axis"), x.rank(), op.name());
  int64_t outer = 1, k = x.dims[axis], inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.dims[d];
  for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dims[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      double best_v = load_double(in[0], x.dtype, o * k * inner + i);
      for (int64_t j = 1; j < k && !std::isnan(best_v); ++j) {
        double v = load_double(in[0], x.dtype, (o * k + j) * inner + i);
        if (v > best_v || std::isnan(v)) best = j, best_v = v;
      }
      store_int(out[0], op.output(0).dtype, o * inner + i, best);
    }
}

// ---- equal_count -------------------------------------------------------------------------

// a: (N), b: (N), i32|i64 each -> count: () f32, the number of i with a[i] == b[i]
void run_equal_count(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  int64_t n = 0;
  for (int64_t i = 0; i < op.input(0).numel; ++i)
    n += load_index(in[0], op.input(0).dtype, i) == load_index(in[1], op.input(1).dtype, i);
  *static_cast<float*>(out[0]) = static_cast<float>(n);
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"fill", run_fill, check_fill});
  t.push_back({"cast", run_cast, check_cast});
  t.push_back({"gather_rows", run_gather_rows, nullptr});
  t.push_back({"argmax", run_argmax, check_float});
  t.push_back({"equal_count", run_equal_count, nullptr});
}

}  // namespace dlrt::reference::detail
