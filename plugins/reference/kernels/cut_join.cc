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

// ---- concat and split: one big tensor `whole`, parts along `axis` --------------------------

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

DLRT_REFERENCE_KERNELS(t) {
  // concat, split and slice move bytes of any dtype: nothing to refuse.
  t.push_back({"concat", run_concat, nullptr});
  t.push_back({"split", run_split, nullptr});
  t.push_back({"slice", run_slice, nullptr});
  t.push_back({"slice_grad", run_slice_grad, check_float});
  t.push_back({"pad", run_pad, check_float});
  t.push_back({"pad_grad", run_pad_grad, check_float});
}

}  // namespace dlrt::reference::detail
