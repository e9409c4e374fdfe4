// reduce.cc: reductions over a set of axes (reduce_sum, reduce_mean, reduce_max), the gradient
// of reduce_max, and bias_add_grad (a sum over every dim but the channel one). Each input
// element is mapped to its output element by dropping its coordinates along reduced axes;
// sums accumulate in double.
#include <cmath>
#include <limits>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

struct ReduceGeom {
  std::vector<int64_t> in_dims;
  std::vector<int64_t> out_dims;    // with keepdims applied
  std::vector<int64_t> out_stride;  // per input dim: stride in the output, 0 if reduced
  int64_t out_numel = 1;
  // Output offset of input element i.
  int64_t out_of(int64_t i) const {
    int64_t o = 0;
    for (size_t d = in_dims.size(); d-- > 0;) {
      o += (i % in_dims[d]) * out_stride[d];
      i /= in_dims[d];
    }
    return o;
  }
};

// Reduced axes given as a mask over the input dims.
ReduceGeom reduce_geom(const std::vector<int64_t>& in_dims, const std::vector<bool>& reduced,
                       bool keepdims) {
  ReduceGeom g;
  g.in_dims = in_dims;
  std::vector<int64_t> kept;  // dims of the output, reduced dims as 1
  for (size_t d = 0; d < in_dims.size(); ++d) kept.push_back(reduced[d] ? 1 : in_dims[d]);
  std::vector<int64_t> s = plugin::row_major_strides(kept);
  g.out_stride.resize(in_dims.size());
  for (size_t d = 0; d < in_dims.size(); ++d) {
    g.out_stride[d] = reduced[d] ? 0 : s[d];
    if (keepdims || !reduced[d]) g.out_dims.push_back(kept[d]);
  }
  g.out_numel = plugin::product(kept);
  return g;
}

// From the "axes" (empty = all) and "keepdims" attributes.
ReduceGeom reduce_geom(const OpView& op, const std::vector<int64_t>& in_dims) {
  const int rank = static_cast<int>(in_dims.size());
  const auto& axes = op.get_ints("axes");
  std::vector<bool> reduced(in_dims.size(), axes.empty());
  for (int64_t a : axes) {
    int d = plugin::normalize_axis(a, rank, op.name());
    reduced[d] = true;
  }
  return reduce_geom(in_dims, reduced, op.get_bool("keepdims"));
}

// x: any -> y: x without (or with 1 along, keepdims) the reduced axes.
// reduce_mean of no elements is NaN (0/0); reduce_max of none is -inf. NaN propagates in max.
void run_reduce(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  ReduceGeom g = reduce_geom(op, op.input(0).dims);
  const bool is_max = op.name() == "reduce_max", is_mean = op.name() == "reduce_mean";
  std::vector<double> acc(static_cast<size_t>(g.out_numel),
                          is_max ? -std::numeric_limits<double>::infinity() : 0.0);
  std::vector<int64_t> count(static_cast<size_t>(g.out_numel), 0);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(in[0]);
    for (int64_t i = 0; i < op.input(0).numel; ++i) {
      int64_t o = g.out_of(i);
      double v = double(x[i]);
      if (!is_max) acc[o] += v;
      else if (v > acc[o] || std::isnan(v)) acc[o] = std::isnan(acc[o]) ? acc[o] : v;
      ++count[o];
    }
    T* y = static_cast<T*>(out[0]);
    for (int64_t o = 0; o < g.out_numel; ++o)
      y[o] = static_cast<T>(is_mean ? acc[o] / double(count[o]) : acc[o]);
  });
}

// x: any, y = reduce_max(x), dy: shape of y -> dx: shape of x
// dx[i] = dy[o] / (number of maxima of group o) where x[i] == y[o], else 0
void run_reduce_max_grad(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  ReduceGeom g = reduce_geom(op, op.input(0).dims);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(in[0]);
    const T* y = static_cast<const T*>(in[1]);
    const T* dy = static_cast<const T*>(in[2]);
    T* dx = static_cast<T*>(out[0]);
    const int64_t n = op.input(0).numel;
    std::vector<int64_t> ties(static_cast<size_t>(g.out_numel), 0);
    for (int64_t i = 0; i < n; ++i)
      if (x[i] == y[g.out_of(i)]) ++ties[g.out_of(i)];
    std::vector<T> result(static_cast<size_t>(n));  // x may alias dx
    for (int64_t i = 0; i < n; ++i) {
      int64_t o = g.out_of(i);
      result[i] = x[i] == y[o] ? static_cast<T>(double(dy[o]) / double(ties[o])) : T(0);
    }
    for (int64_t i = 0; i < n; ++i) dx[i] = result[i];
  });
}

// dy: (...,C) [NCHW: (N,C,...)] -> db: (C), the sum of dy over every other dim
void run_bias_add_grad(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const TensorView& dy = op.input(0);
  std::vector<bool> reduced(dy.dims.size(), true);
  reduced[bias_channel_dim(op, dy)] = false;
  ReduceGeom g = reduce_geom(dy.dims, reduced, false);
  std::vector<double> acc(static_cast<size_t>(g.out_numel), 0.0);
  with_float(dy.dtype, [&](auto t) {
    using T = decltype(t);
    const T* d = static_cast<const T*>(in[0]);
    for (int64_t i = 0; i < dy.numel; ++i) acc[g.out_of(i)] += double(d[i]);
    T* db = static_cast<T*>(out[0]);
    for (int64_t o = 0; o < g.out_numel; ++o) db[o] = static_cast<T>(acc[o]);
  });
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  for (const char* name : {"reduce_sum", "reduce_mean", "reduce_max"})
    t.push_back({name, run_reduce, check_float});
  t.push_back({"reduce_max_grad", run_reduce_max_grad, check_float});
  t.push_back({"bias_add_grad", run_bias_add_grad, check_float});
}

}  // namespace dlrt::reference::detail
