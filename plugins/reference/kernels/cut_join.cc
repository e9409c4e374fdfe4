// cut_join.cc: the ops that cut, join and frame tensors: concat, split, slice, slice_grad,
// pad, pad_grad. concat/split/slice move bytes (every dtype); slice_grad, pad and pad_grad
// are float ops (f32, f64), pad_grad summing in double.
//
// The core hands these ops their normalised attributes (core/ops/infer_shape_ops.cc): axis
// in 0..rank-1, split's sizes spelled out, slice's begin (the first index taken) and strides
// on every axis. The checks here accept nothing else, and make sure that every index the
// kernels compute lies inside its buffer.
#include <cstring>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

using Dims = std::vector<int64_t>;

int64_t prod(const Dims& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= d[i];
  return p;
}

// The multi-index of flat element i of `dims`, row-major.
Dims unravel(int64_t i, const Dims& dims) {
  Dims idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = i % dims[d];
    i /= dims[d];
  }
  return idx;
}

int64_t ravel(const Dims& idx, const Dims& dims) {
  int64_t off = 0;
  for (size_t d = 0; d < dims.size(); ++d) off = off * dims[d] + idx[d];
  return off;
}

void expect_dense(const OpView& op) {
  for (const auto* list : {&op.inputs(), &op.outputs()})
    for (const TensorView& t : *list) {
      if (!t.dense()) op.unimplemented("layout " + std::to_string(t.layout) + " is not dense");
      if (plugin::dtype_size(t.dtype) == 0)
        op.invalid("dtype " + std::to_string(t.dtype) + " is not a dtype");
    }
}

int axis_attr(const OpView& op, const TensorView& t) {
  const int64_t a = op.get_int("axis");
  if (a < 0 || a >= t.rank())
    op.invalid("axis " + std::to_string(a) + " is not in 0.." + std::to_string(t.rank() - 1) +
               " (the core normalises it)");
  return static_cast<int>(a);
}

// ---- concat and split: one big tensor `whole`, parts along `axis` --------------------------

// The parts' dims must equal whole's except on axis, where they sum to whole's.
void check_parts(const OpView& op, const TensorView& whole, const std::vector<TensorView>& parts,
                 int axis, const char* part_name) {
  int64_t sum = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    const TensorView& p = parts[k];
    const std::string what = std::string(part_name) + " " + std::to_string(k);
    expect_same_dtype(op, whole, "the whole", p, what.c_str());
    Dims expected = whole.dims;
    if (p.rank() == whole.rank()) expected[axis] = p.dims[axis];
    expect_dims(op, p, expected, what.c_str());
    sum += p.dims[axis];
  }
  if (sum != whole.dims[axis])
    op.invalid("the parts' dims on axis " + std::to_string(axis) + " sum to " +
               std::to_string(sum) + ", the whole has " + std::to_string(whole.dims[axis]));
}

void check_concat(const OpView& op) {
  expect_dense(op);
  if (op.num_inputs() < 1 || op.num_outputs() != 1)
    op.invalid("takes 1 or more inputs and 1 output, got " + std::to_string(op.num_inputs()) +
               " and " + std::to_string(op.num_outputs()));
  check_parts(op, op.output(0), op.inputs(), axis_attr(op, op.output(0)), "input");
}

void check_split(const OpView& op) {
  expect_dense(op);
  if (op.num_inputs() != 1 || op.num_outputs() < 1)
    op.invalid("takes 1 input and 1 or more outputs, got " + std::to_string(op.num_inputs()) +
               " and " + std::to_string(op.num_outputs()));
  check_parts(op, op.input(0), op.outputs(), axis_attr(op, op.input(0)), "output");
}

// whole (A..., L, B...) <-> parts (A..., L_k, B...): for each index of A, part k holds the
// next L_k * |B| elements of whole's row. `to_whole` chooses the direction.
void move_parts(const OpView& op, const TensorView& whole, const std::vector<TensorView>& parts,
                unsigned char* whole_bytes, const std::vector<unsigned char*>& part_bytes,
                bool to_whole) {
  const int axis = static_cast<int>(op.get_int("axis"));
  const size_t esize = plugin::dtype_size(whole.dtype);
  const int64_t outer = prod(whole.dims, 0, axis);
  const int64_t inner = prod(whole.dims, axis + 1, whole.dims.size());
  const int64_t row = whole.dims[axis] * inner;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t at = 0;  // elements into whole's row
    for (size_t k = 0; k < parts.size(); ++k) {
      const int64_t run = parts[k].dims[axis] * inner;
      unsigned char* w = whole_bytes + (o * row + at) * esize;
      unsigned char* p = part_bytes[k] + o * run * esize;
      if (to_whole) std::memcpy(w, p, run * esize);
      else std::memcpy(p, w, run * esize);
      at += run;
    }
  }
}

void run_concat(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  std::vector<unsigned char*> parts;
  for (size_t k = 0; k < op.num_inputs(); ++k)
    parts.push_back(static_cast<unsigned char*>(const_cast<void*>(in[k])));
  move_parts(op, op.output(0), op.inputs(), static_cast<unsigned char*>(out[0]), parts, true);
}

void run_split(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  std::vector<unsigned char*> parts;
  for (size_t k = 0; k < op.num_outputs(); ++k)
    parts.push_back(static_cast<unsigned char*>(out[k]));
  move_parts(op, op.input(0), op.outputs(), static_cast<unsigned char*>(const_cast<void*>(in[0])),
             parts, false);
}

// ---- slice and slice_grad: y[i] = x[begin + i * stride] per dim ----------------------------

// `big` is x (slice) or dx (slice_grad), `small` y or dy. begin and strides: one per dim,
// every index begin + i*stride (0 <= i < small dim) inside big.
void check_slice_geometry(const OpView& op, const TensorView& big, const TensorView& small) {
  const auto& begin = op.get_ints("begin");
  const auto& strides = op.get_ints("strides");
  if (begin.size() != big.dims.size() || strides.size() != big.dims.size() ||
      small.rank() != big.rank())
    op.invalid("expects begin and strides on every one of the " + std::to_string(big.rank()) +
               " dims (the core normalises them), got " + plugin::dims_string(begin) + " and " +
               plugin::dims_string(strides));
  expect_same_dtype(op, big, "x", small, "y");
  for (size_t d = 0; d < begin.size(); ++d) {
    const int64_t last = begin[d] + (small.dims[d] - 1) * strides[d];
    if (strides[d] == 0 || begin[d] < 0 || begin[d] >= big.dims[d] || last < 0 ||
        last >= big.dims[d])
      op.invalid("dim " + std::to_string(d) + ": begin " + std::to_string(begin[d]) + ", stride " +
                 std::to_string(strides[d]) + " and " + std::to_string(small.dims[d]) +
                 " elements leave 0.." + std::to_string(big.dims[d] - 1));
  }
}

void check_slice(const OpView& op) {
  expect_arity(op, 1, 1);
  check_slice_geometry(op, op.input(0), op.output(0));
}

void check_slice_grad(const OpView& op) {
  expect_arity(op, 1, 1);
  expect_float(op, op.input(0), "dy");
  expect_dims(op, op.output(0), op.get_ints("shape"), "dx");
  check_slice_geometry(op, op.output(0), op.input(0));
}

// The flat offset in `big` of flat element i of `small`.
int64_t slice_source(const OpView& op, int64_t i, const Dims& small, const Dims& big) {
  const auto& begin = op.get_ints("begin");
  const auto& strides = op.get_ints("strides");
  Dims idx = unravel(i, small);
  for (size_t d = 0; d < idx.size(); ++d) idx[d] = begin[d] + idx[d] * strides[d];
  return ravel(idx, big);
}

// x -> y
void run_slice(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const size_t esize = plugin::dtype_size(op.input(0).dtype);
  const auto* x = static_cast<const unsigned char*>(in[0]);
  auto* y = static_cast<unsigned char*>(out[0]);
  for (int64_t i = 0; i < op.output(0).numel; ++i)
    std::memcpy(y + i * esize, x + slice_source(op, i, op.output(0).dims, op.input(0).dims) * esize,
                esize);
}

// dy -> dx: zeros, then each dy element at its position (the positions are distinct).
void run_slice_grad(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* dy = static_cast<const T*>(in[0]);
    T* dx = static_cast<T*>(out[0]);
    for (int64_t i = 0; i < op.output(0).numel; ++i) dx[i] = T(0);
    for (int64_t i = 0; i < op.input(0).numel; ++i)
      dx[slice_source(op, i, op.input(0).dims, op.output(0).dims)] = dy[i];
  });
}

// ---- pad and pad_grad ----------------------------------------------------------------------

// The index in [0, n) that padded index p (before = cells before) reads in reflect mode:
// p - before mirrored at the edges without repeating them (numpy "reflect").
int64_t reflect_index(int64_t p, int64_t before, int64_t n) {
  int64_t i = p - before;
  if (i < 0) i = -i;
  if (i >= n) i = 2 * (n - 1) - i;
  return i;
}

// `small` is x (pad) or dx (pad_grad), `big` y or dy: big = small + pads on every dim.
void check_pad_geometry(const OpView& op, const TensorView& small, const TensorView& big,
                        bool reflect) {
  const auto& pads = op.get_ints("pads");
  const size_t r = small.dims.size();
  if (pads.size() != 2 * r || big.rank() != small.rank())
    op.invalid("pads " + plugin::dims_string(pads) + " has " + std::to_string(pads.size()) +
               " values, expected " + std::to_string(2 * r));
  for (size_t d = 0; d < r; ++d) {
    if (pads[d] < 0 || pads[r + d] < 0)
      op.invalid("pads " + plugin::dims_string(pads) + " has a negative pad");
    if (small.dims[d] + pads[d] + pads[r + d] != big.dims[d])
      op.invalid("dim " + std::to_string(d) + ": " + std::to_string(small.dims[d]) +
                 " + pads != " + std::to_string(big.dims[d]));
    if (reflect && (pads[d] >= small.dims[d] || pads[r + d] >= small.dims[d]))
      op.invalid("reflect pads " + plugin::dims_string(pads) + " exceed dim - 1 on dim " +
                 std::to_string(d));
  }
  expect_same_dtype(op, small, "x", big, "y");
}

void check_pad(const OpView& op) {
  expect_arity(op, 1, 1);
  expect_float(op, op.input(0), "x");
  const std::string& mode = op.get_string("mode");
  if (mode != "constant" && mode != "reflect")
    op.invalid("mode is '" + mode + "', expected \"constant\" or \"reflect\"");
  check_pad_geometry(op, op.input(0), op.output(0), mode == "reflect");
}

void check_pad_grad(const OpView& op) {
  expect_arity(op, 1, 1);
  expect_float(op, op.input(0), "dy");
  check_pad_geometry(op, op.output(0), op.input(0), true);
}

// x -> y: y[p] = x[p - before] inside, `value` (constant) or the mirrored x (reflect) outside
void run_pad(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const auto& pads = op.get_ints("pads");
  const bool reflect = op.get_string("mode") == "reflect";
  const double value = op.get_float("value");
  const Dims& xd = op.input(0).dims;
  const Dims& yd = op.output(0).dims;
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(in[0]);
    T* y = static_cast<T*>(out[0]);
    for (int64_t i = 0; i < op.output(0).numel; ++i) {
      Dims idx = unravel(i, yd);
      bool inside = true;
      for (size_t d = 0; d < idx.size(); ++d) {
        if (reflect) idx[d] = reflect_index(idx[d], pads[d], xd[d]);
        else idx[d] -= pads[d];
        inside = inside && idx[d] >= 0 && idx[d] < xd[d];
      }
      y[i] = inside ? x[ravel(idx, xd)] : static_cast<T>(value);
    }
  });
}

// dy -> dx: dx[j] = sum of dy[p] over every padded p that reads x[j] in reflect mode
void run_pad_grad(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const auto& pads = op.get_ints("pads");
  const Dims& xd = op.output(0).dims;
  const Dims& yd = op.input(0).dims;
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* dy = static_cast<const T*>(in[0]);
    T* dx = static_cast<T*>(out[0]);
    std::vector<double> acc(static_cast<size_t>(op.output(0).numel), 0.0);
    for (int64_t i = 0; i < op.input(0).numel; ++i) {
      Dims idx = unravel(i, yd);
      for (size_t d = 0; d < idx.size(); ++d) idx[d] = reflect_index(idx[d], pads[d], xd[d]);
      acc[ravel(idx, xd)] += double(dy[i]);
    }
    for (size_t j = 0; j < acc.size(); ++j) dx[j] = static_cast<T>(acc[j]);
  });
}

}  // namespace

void add_cut_join_kernels(KernelTable& t) {
  t.push_back({"concat", run_concat, check_concat});
  t.push_back({"split", run_split, check_split});
  t.push_back({"slice", run_slice, check_slice});
  t.push_back({"slice_grad", run_slice_grad, check_slice_grad});
  t.push_back({"pad", run_pad, check_pad});
  t.push_back({"pad_grad", run_pad_grad, check_pad_grad});
}

}  // namespace dlrt::reference::detail
