// shape.cc: ops that move elements without arithmetic: copy, reshape, flatten, transpose,
// broadcast_to. They work on bytes, so they take every dtype (f16/bf16 included); input and
// output dtypes must match.
#include <cstring>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

void expect_move(const OpView& op) {
  expect_arity(op, 1, 1);
  expect_same_dtype(op, op.input(0), "x", op.output(0), "y");
}

// ---- copy, reshape, flatten: same bytes, new dims ---------------------------------------

// reshape's "shape" with its -1 resolved against x's element count.
std::vector<int64_t> reshape_dims(const OpView& op) {
  std::vector<int64_t> dims = op.get_ints("shape");
  int64_t known = 1, unknown = -1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == -1) {
      if (unknown >= 0) op.invalid("shape " + plugin::dims_string(dims) + " has more than one -1");
      unknown = static_cast<int64_t>(d);
    } else if (dims[d] < 0) {
      op.invalid("shape " + plugin::dims_string(dims) + " has a negative dim");
    } else {
      known *= dims[d];
    }
  }
  const int64_t n = op.input(0).numel;
  if (unknown >= 0) {
    if (known == 0 || n % known != 0)
      op.invalid("cannot infer the -1 of shape " + plugin::dims_string(dims) + " for " +
                 std::to_string(n) + " elements");
    dims[unknown] = n / known;
  } else if (known != n) {
    op.invalid("shape " + plugin::dims_string(dims) + " holds " + std::to_string(known) +
               " elements, x has " + std::to_string(n));
  }
  return dims;
}

void check_reshape(const OpView& op) {
  expect_move(op);
  expect_dims(op, op.output(0), reshape_dims(op), "y");
}

// x: (N,d1,...,dk) -> y: (N, d1*...*dk); a rank-1 x gives (N,1)
void check_flatten(const OpView& op) {
  expect_move(op);
  const TensorView& x = op.input(0);
  if (x.rank() < 1) op.invalid("x is a scalar; flatten needs a batch dim");
  expect_dims(op, op.output(0), {x.dims[0], x.dims[0] == 0 ? 0 : x.numel / x.dims[0]}, "y");
}

void check_copy(const OpView& op) {
  expect_move(op);
  expect_dims(op, op.output(0), op.input(0).dims, "y");
}

void run_bytes(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  if (op.output(0).bytes > 0 && out[0] != in[0]) std::memmove(out[0], in[0], op.output(0).bytes);
}

// ---- transpose ---------------------------------------------------------------------------

std::vector<int> permutation(const OpView& op) {
  const int rank = op.input(0).rank();
  const auto& perm = op.get_ints("perm");
  if (static_cast<int>(perm.size()) != rank)
    op.invalid("perm has " + std::to_string(perm.size()) + " entries, x has rank " +
               std::to_string(rank));
  std::vector<int> p;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t v : perm) {
    int d = plugin::normalize_axis(v, rank, op.name());
    if (seen[d]) op.invalid("perm " + plugin::dims_string(perm) + " is not a permutation");
    seen[d] = true;
    p.push_back(d);
  }
  return p;
}

void check_transpose(const OpView& op) {
  expect_move(op);
  std::vector<int> p = permutation(op);
  std::vector<int64_t> dims;
  for (int d : p) dims.push_back(op.input(0).dims[d]);
  expect_dims(op, op.output(0), dims, "y");
}

// Copies element by element: y[idx] = x[src(idx)], `esize` bytes each, where src(idx) is the
// offset given by per-output-dim source strides `ss`.
void gather_copy(const std::vector<int64_t>& out_dims, const std::vector<int64_t>& ss, size_t esize,
                 const void* x, void* y) {
  const auto* src = static_cast<const unsigned char*>(x);
  auto* dst = static_cast<unsigned char*>(y);
  const int64_t n = plugin::product(out_dims);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = 0;
    for (size_t d = out_dims.size(); d-- > 0;) {
      off += (rem % out_dims[d]) * ss[d];
      rem /= out_dims[d];
    }
    std::memcpy(dst + i * esize, src + off * esize, esize);
  }
}

// x: (d0,...,dr) -> y: (d[perm[0]],...,d[perm[r]])
void run_transpose(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  std::vector<int> p = permutation(op);
  std::vector<int64_t> xs = plugin::row_major_strides(op.input(0).dims), ss;
  for (int d : p) ss.push_back(xs[d]);
  gather_copy(op.output(0).dims, ss, plugin::dtype_size(op.input(0).dtype), in[0], out[0]);
}

// ---- broadcast_to ------------------------------------------------------------------------

void check_broadcast_to(const OpView& op) {
  expect_move(op);
  const auto& shape = op.get_ints("shape");
  expect_dims(op, op.output(0), shape, "y (shape)");
  plugin::broadcast_strides(op.input(0).dims, shape, op.name());
}

// x: X -> y: shape, with X broadcast to it (NumPy rules)
void run_broadcast_to(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const auto& dims = op.output(0).dims;
  gather_copy(dims, plugin::broadcast_strides(op.input(0).dims, dims, op.name()),
              plugin::dtype_size(op.input(0).dtype), in[0], out[0]);
}

}  // namespace

void add_shape_kernels(KernelTable& t) {
  t.push_back({"copy", run_bytes, check_copy});
  t.push_back({"reshape", run_bytes, check_reshape});
  t.push_back({"flatten", run_bytes, check_flatten});
  t.push_back({"transpose", run_transpose, check_transpose});
  t.push_back({"broadcast_to", run_broadcast_to, check_broadcast_to});
}

}  // namespace dlrt::reference::detail
