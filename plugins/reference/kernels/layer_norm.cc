// layer_norm.cc: layer_norm and layer_norm_grad (core/ops/infer_layer_norm.cc), in double.
//
// x (..., D) is seen as (rows, D); mean and rstd are (rows), gamma and beta (D).
//   layer_norm:      mean = sum(x)/D, var = sum((x-mean)^2)/D (two passes, biased),
//                    rstd = 1/sqrt(var+eps), y = (x-mean)*rstd*gamma + beta
//   layer_norm_grad: with xhat = (x-mean)*rstd and g = dy*gamma, per row
//                    dx = rstd/D * (D*g - sum(g) - xhat*sum(g*xhat)),
//                    and over all rows dgamma = sum(dy*xhat), dbeta = sum(dy)
//   (PyTorch's native_layer_norm_backward).
#include <cmath>
#include <vector>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

struct Rows {
  int64_t rows, d;
};
Rows rows_of(const TensorView& x) {
  int64_t n = 1;
  for (size_t i = 0; i + 1 < x.dims.size(); ++i) n *= x.dims[i];
  return {n, x.dims.back()};
}

void check_layer_norm(const OpView& op) {
  expect_float(op, op.input(op.name() == "layer_norm_grad" ? 1 : 0), "x");
}

void run_layer_norm(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const Rows r = rows_of(op.input(0));
  const double eps = op.get_float("epsilon");
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T *x = static_cast<const T*>(in[0]), *gamma = static_cast<const T*>(in[1]);
    const T* beta = static_cast<const T*>(in[2]);
    T *y = static_cast<T*>(out[0]), *mean = static_cast<T*>(out[1]);
    T* rstd = static_cast<T*>(out[2]);
    for (int64_t i = 0; i < r.rows; ++i) {
      const T* xr = x + i * r.d;
      double m = 0, v = 0;
      for (int64_t j = 0; j < r.d; ++j) m += double(xr[j]);
      m /= double(r.d);
      for (int64_t j = 0; j < r.d; ++j) v += (double(xr[j]) - m) * (double(xr[j]) - m);
      v /= double(r.d);
      const double s = 1.0 / std::sqrt(v + eps);
      for (int64_t j = 0; j < r.d; ++j)
        y[i * r.d + j] =
            static_cast<T>((double(xr[j]) - m) * s * double(gamma[j]) + double(beta[j]));
      mean[i] = static_cast<T>(m);
      rstd[i] = static_cast<T>(s);
    }
  });
}

void run_layer_norm_grad(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const Rows r = rows_of(op.input(1));
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T *dy = static_cast<const T*>(in[0]), *x = static_cast<const T*>(in[1]);
    const T *gamma = static_cast<const T*>(in[2]), *mean = static_cast<const T*>(in[3]);
    const T* rstd = static_cast<const T*>(in[4]);
    T *dx = static_cast<T*>(out[0]), *dgamma = static_cast<T*>(out[1]);
    T* dbeta = static_cast<T*>(out[2]);
    std::vector<double> sg(size_t(r.d), 0.0), sb(size_t(r.d), 0.0);
    const double n = double(r.d);
    for (int64_t i = 0; i < r.rows; ++i) {
      const double m = double(mean[i]), s = double(rstd[i]);
      double sum_g = 0, sum_gx = 0;
      for (int64_t j = 0; j < r.d; ++j) {
        const int64_t k = i * r.d + j;
        const double xhat = (double(x[k]) - m) * s, g = double(dy[k]) * double(gamma[j]);
        sum_g += g;
        sum_gx += g * xhat;
        sg[size_t(j)] += double(dy[k]) * xhat;
        sb[size_t(j)] += double(dy[k]);
      }
      for (int64_t j = 0; j < r.d; ++j) {
        const int64_t k = i * r.d + j;
        const double xhat = (double(x[k]) - m) * s, g = double(dy[k]) * double(gamma[j]);
        dx[k] = static_cast<T>(s / n * (n * g - sum_g - xhat * sum_gx));
      }
    }
    for (int64_t j = 0; j < r.d; ++j) {
      dgamma[j] = static_cast<T>(sg[size_t(j)]);
      dbeta[j] = static_cast<T>(sb[size_t(j)]);
    }
  });
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"layer_norm", run_layer_norm, check_layer_norm});
  t.push_back({"layer_norm_grad", run_layer_norm_grad, check_layer_norm});
}

}  // namespace dlrt::reference::detail
