// compare.cc: the comparisons equal, not_equal, less, less_equal, greater, greater_equal
// (a, b broadcast -> c BOOL, one byte per element: 1 or 0) and where(cond, x, y) (cond BOOL,
// the three broadcast together). IEEE comparisons: anything with a NaN is false, except
// not_equal, which is true.
#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

// In the operands' own type: i64 beyond 2^53 compares exactly (a double would round it).
template <typename T>
bool compare(const std::string& op, T a, T b) {
  if (op == "equal") return a == b;
  if (op == "not_equal") return a != b;
  if (op == "less") return a < b;
  if (op == "less_equal") return a <= b;
  if (op == "greater") return a > b;
  return a >= b;  // "greater_equal"
}

void check_comparison(const OpView& op) { expect_numeric(op, op.input(0), "a"); }

// Offsets into each source of output element i (row-major over `dims`), broadcast strides.
template <size_t K>
void offsets(const std::vector<int64_t>& dims, const std::vector<int64_t> (&s)[K], int64_t i,
             int64_t (&off)[K]) {
  for (size_t k = 0; k < K; ++k) off[k] = 0;
  for (size_t d = dims.size(); d-- > 0;) {
    const int64_t coord = i % dims[d];
    i /= dims[d];
    for (size_t k = 0; k < K; ++k) off[k] += coord * s[k][d];
  }
}

// a: A, b: B -> c: broadcast(A, B) of bool
void run_comparison(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const auto& dims = op.output(0).dims;
  const std::vector<int64_t> s[2] = {plugin::broadcast_strides(op.input(0).dims, dims, op.name()),
                                     plugin::broadcast_strides(op.input(1).dims, dims, op.name())};
  with_numeric(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* a = static_cast<const T*>(in[0]);
    const T* b = static_cast<const T*>(in[1]);
    uint8_t* c = static_cast<uint8_t*>(out[0]);
    for (int64_t i = 0; i < op.output(0).numel; ++i) {
      int64_t off[2];
      offsets(dims, s, i, off);
      c[i] = compare<T>(op.name(), a[off[0]], b[off[1]]) ? 1 : 0;
    }
  });
}

// cond: C (bool), x: X, y: Y -> z: broadcast(C, X, Y); z = cond ? x : y (any nonzero byte is
// true). x and y of any dtype: elements are moved, never read as numbers, so the element's size
// is the only type that matters.
void run_where(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const auto& dims = op.output(0).dims;
  const std::vector<int64_t> s[3] = {plugin::broadcast_strides(op.input(0).dims, dims, op.name()),
                                     plugin::broadcast_strides(op.input(1).dims, dims, op.name()),
                                     plugin::broadcast_strides(op.input(2).dims, dims, op.name())};
  with_element_size(op.input(1).dtype, [&](auto t) {
    using T = decltype(t);
    const uint8_t* cond = static_cast<const uint8_t*>(in[0]);
    const T* x = static_cast<const T*>(in[1]);
    const T* y = static_cast<const T*>(in[2]);
    T* z = static_cast<T*>(out[0]);
    for (int64_t i = 0; i < op.output(0).numel; ++i) {
      int64_t off[3];
      offsets(dims, s, i, off);
      z[i] = cond[off[0]] != 0 ? x[off[1]] : y[off[2]];
    }
  });
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  for (const char* name : {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"})
    t.push_back({name, run_comparison, check_comparison});
  t.push_back({"where", run_where, nullptr});
}

}  // namespace dlrt::reference::detail
