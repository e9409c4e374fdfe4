// compare.cc: the comparisons equal, not_equal, less, less_equal, greater, greater_equal
// (a, b broadcast -> c BOOL, one byte per element: 1 or 0) and where(cond, x, y) (cond BOOL,
// the three broadcast together). IEEE comparisons: anything with a NaN is false, except
// not_equal, which is true.
#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

bool compare(const std::string& op, double a, double b) {
  if (op == "equal") return a == b;
  if (op == "not_equal") return a != b;
  if (op == "less") return a < b;
  if (op == "less_equal") return a <= b;
  if (op == "greater") return a > b;
  return a >= b;  // "greater_equal"
}

void check_comparison(const OpView& op) {
  expect_arity(op, 2, 1);
  const TensorView &a = op.input(0), &b = op.input(1), &c = op.output(0);
  expect_float(op, a, "a");
  expect_same_dtype(op, a, "a", b, "b");
  if (c.dtype != DLRT_BOOL)
    op.invalid(std::string("c: dtype ") + plugin::dtype_name(c.dtype) + ", expected bool");
  expect_dims(op, c, plugin::broadcast_shape(a.dims, b.dims, op.name()), "c");
}

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
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* a = static_cast<const T*>(in[0]);
    const T* b = static_cast<const T*>(in[1]);
    uint8_t* c = static_cast<uint8_t*>(out[0]);
    for (int64_t i = 0; i < op.output(0).numel; ++i) {
      int64_t off[2];
      offsets(dims, s, i, off);
      c[i] = compare(op.name(), double(a[off[0]]), double(b[off[1]])) ? 1 : 0;
    }
  });
}

void check_where(const OpView& op) {
  expect_arity(op, 3, 1);
  const TensorView &cond = op.input(0), &x = op.input(1), &y = op.input(2), &z = op.output(0);
  if (cond.dtype != DLRT_BOOL)
    op.invalid(std::string("cond: dtype ") + plugin::dtype_name(cond.dtype) + ", expected bool");
  expect_float(op, x, "x");
  expect_same_dtype(op, x, "x", y, "y");
  expect_same_dtype(op, x, "x", z, "z");
  const auto xy = plugin::broadcast_shape(x.dims, y.dims, op.name());
  expect_dims(op, z, plugin::broadcast_shape(cond.dims, xy, op.name()), "z");
}

// cond: C (bool), x: X, y: Y -> z: broadcast(C, X, Y); z = cond ? x : y (any nonzero byte is
// true)
void run_where(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const auto& dims = op.output(0).dims;
  const std::vector<int64_t> s[3] = {plugin::broadcast_strides(op.input(0).dims, dims, op.name()),
                                     plugin::broadcast_strides(op.input(1).dims, dims, op.name()),
                                     plugin::broadcast_strides(op.input(2).dims, dims, op.name())};
  with_float(op.input(1).dtype, [&](auto t) {
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

void add_compare_kernels(KernelTable& t) {
  for (const char* name : {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"})
    t.push_back({name, run_comparison, check_comparison});
  t.push_back({"where", run_where, check_where});
}

}  // namespace dlrt::reference::detail
