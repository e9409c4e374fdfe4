// global_pool.cc: global_avg_pool2d / global_max_pool2d over all of H and W, and their
// backward ops, NHWC or NCHW. The pooled tensor is (N,C), or with keepdims (N,1,1,C) /
// (N,C,1,1): in every case element (n, c) sits at n*C + c. The max backward sends dy to the
// first maximum of each (n, c) plane, scanning rows then columns, as max_pool2d_backward; a
// NaN counts as the largest value.
#include <cmath>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

using plugin::ImageShape;

ImageShape image_of(const OpView& op, const std::vector<int64_t>& dims) {
  return plugin::image_shape(dims, plugin::is_nchw(op.get_string("data_format"), op.name()));
}

// Index of the first maximum of plane (n, c), rows first. A NaN counts as larger than
// everything (the first NaN wins), as in max_pool2d and NumPy.
template <typename T>
int64_t plane_argmax(const ImageShape& s, const T* x, int64_t n, int64_t c) {
  int64_t best = s.index(n, 0, 0, c);
  for (int64_t h = 0; h < s.h; ++h)
    for (int64_t w = 0; w < s.w; ++w) {
      const int64_t k = s.index(n, h, w, c);
      if (x[k] > x[best] || (std::isnan(double(x[k])) && !std::isnan(double(x[best])))) best = k;
    }
  return best;
}

// x: (N,H,W,C) -> y: (N,C): mean (summed in double) or max of each plane
void run_global_pool(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const ImageShape s = image_of(op, op.input(0).dims);
  const bool avg = op.name() == "global_avg_pool2d";
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(in[0]);
    T* y = static_cast<T*>(out[0]);
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t c = 0; c < s.c; ++c) {
        if (!avg) {
          y[n * s.c + c] = x[plane_argmax(s, x, n, c)];
          continue;
        }
        double sum = 0;
        for (int64_t h = 0; h < s.h; ++h)
          for (int64_t w = 0; w < s.w; ++w) sum += double(x[s.index(n, h, w, c)]);
        y[n * s.c + c] = static_cast<T>(sum / double(s.h * s.w));
      }
  });
}

// dy: (N,C) -> dx: (N,H,W,C) = dy / (H*W) everywhere in plane (n, c)
void run_global_avg_backward(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const ImageShape s = image_of(op, op.output(0).dims);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* dy = static_cast<const T*>(in[0]);
    T* dx = static_cast<T*>(out[0]);
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t c = 0; c < s.c; ++c) {
        const T share = static_cast<T>(double(dy[n * s.c + c]) / double(s.h * s.w));
        for (int64_t h = 0; h < s.h; ++h)
          for (int64_t w = 0; w < s.w; ++w) dx[s.index(n, h, w, c)] = share;
      }
  });
}

// x: (N,H,W,C), dy: (N,C) -> dx: (N,H,W,C): dy at the first max of each plane, 0 elsewhere
void run_global_max_backward(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const ImageShape s = image_of(op, op.input(0).dims);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(in[0]);
    const T* dy = static_cast<const T*>(in[1]);
    T* dx = static_cast<T*>(out[0]);
    for (int64_t k = 0; k < s.numel(); ++k) dx[k] = T(0);
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t c = 0; c < s.c; ++c) dx[plane_argmax(s, x, n, c)] = dy[n * s.c + c];
  });
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"global_avg_pool2d", run_global_pool, check_float});
  t.push_back({"global_max_pool2d", run_global_pool, check_float});
  t.push_back({"global_avg_pool2d_backward", run_global_avg_backward, check_float});
  t.push_back({"global_max_pool2d_backward", run_global_max_backward, check_float});
}

}  // namespace dlrt::reference::detail
