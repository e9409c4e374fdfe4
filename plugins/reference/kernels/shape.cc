// shape.cc: ops that move elements without arithmetic: copy, reshape, flatten, transpose,
// broadcast_to. They work on bytes, so they take every dtype (f16/bf16 included); input and
// output dtypes must match.
#include <cstring>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

// ---- copy, reshape, flatten: same bytes, new dims ---------------------------------------

void run_bytes(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  if (op.output(0).bytes > 0 && out[0] != in[0]) std::memmove(out[0], in[0], op.output(0).bytes);
}

// ---- transpose ---------------------------------------------------------------------------

// perm with negative entries counted from the end (the schema checked it is a permutation).
std::vector<int> permutation(const OpView& op) {
  std::vector<int> p;
  for (int64_t v : op.get_ints("perm"))
    p.push_back(plugin::normalize_axis(v, op.input(0).rank(), op.name()));
  return p;
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

// x: X -> y: shape, with X broadcast to it (NumPy rules)
void run_broadcast_to(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const auto& dims = op.output(0).dims;
  gather_copy(dims, plugin::broadcast_strides(op.input(0).dims, dims, op.name()),
              plugin::dtype_size(op.input(0).dtype), in[0], out[0]);
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"copy", run_bytes, nullptr});
  t.push_back({"stop_gradient", run_bytes, nullptr});  // a copy; only autodiff tells them apart
  t.push_back({"reshape", run_bytes, nullptr});
  t.push_back({"flatten", run_bytes, nullptr});
  t.push_back({"transpose", run_transpose, nullptr});
  t.push_back({"broadcast_to", run_broadcast_to, nullptr});
}

}  // namespace dlrt::reference::detail
