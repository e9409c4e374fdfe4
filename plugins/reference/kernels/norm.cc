// norm.cc: batch normalization (docs/ops.md, "Normalization"), accumulating in double.
//
//   batch_norm        x, scale, bias, mean, var              -> y
//   batch_norm_train  x, scale, bias, running_mean, running_var
//                       -> y, running_mean', running_var', saved_mean, saved_inv_std
//   batch_norm_grad   dy, x, scale, saved_mean, saved_inv_std -> dx, dscale, dbias
//   batch_norm_relu_grad  dy, x, scale, bias, saved_mean, saved_inv_std -> dx, dscale, dbias
//   batch_norm_add_relu_train  x, residual, scale, bias, running_mean, running_var
//                       -> as batch_norm_train, y = max(0, scale*xhat + bias + residual)
//   batch_norm_add_relu_grad   dy, y, x, scale, saved_mean, saved_inv_std
//                       -> dx, dscale, dbias, dresidual: dresidual = dy where y > 0, else 0,
//                          and batch_norm_grad's arithmetic on it
//
// The forward forms' activation "relu" is y = max(0, ...) after the affine map;
// batch_norm_relu_grad is batch_norm_grad of dy where scale*xhat + bias > 0, else 0.
//
// x is seen as (outer, C, inner) (norm_layout.hpp); every other operand is (C). Each
// channel's batch statistics are over its count = outer*inner values:
//   mean = sum(x)/count, var = sum((x-mean)^2)/count (biased, normalises),
//   inv_std = 1/sqrt(var + epsilon), y = scale*(x-mean)*inv_std + bias,
//   running_mean' = momentum*running_mean + (1-momentum)*mean,
//   running_var'  = momentum*running_var  + (1-momentum)*var*count/(count-1) (unbiased;
//                   count 1 has var 0 and uses it as is, so nothing divides by 0).
// The running outputs may alias their inputs: each channel reads its running values before
// writing them, and nothing else reads them.
#include <cmath>
#include <vector>

#include "kernel_util.hpp"
#include "norm_layout.hpp"

namespace dlrt::reference::detail {
namespace {

plugin::NormLayout layout_of(const OpView& op, const TensorView& x) {
  return plugin::norm_layout(x.dims, op.get_string("data_format"), op.name());
}

// What the oracle runs: x (input 1 of batch_norm_grad, else input 0) f32 or f64; the schema
// checked operand counts, dims, epsilon and momentum.
bool is_grad(const OpView& op) {
  return op.name() == "batch_norm_grad" || op.name() == "batch_norm_relu_grad";
}
void check_norm(const OpView& op) {
  const int x = op.name() == "batch_norm_add_relu_grad" ? 2 : is_grad(op) ? 1 : 0;
  expect_float(op, op.input(x), "x");
}

bool relu_of(const OpView& op) {
  return op.name() == "batch_norm_add_relu_train" || op.get_string("activation") == "relu";
}

// Per-channel mean and biased variance of x (two passes: exact in double).
template <typename T>
void batch_moments(const plugin::NormLayout& l, const T* x, std::vector<double>* mean,
                   std::vector<double>* var) {
  mean->assign(size_t(l.c), 0.0);
  var->assign(size_t(l.c), 0.0);
  const int64_t n = l.outer * l.c * l.inner;
  for (int64_t i = 0; i < n; ++i) (*mean)[size_t(l.channel_of(i))] += double(x[i]);
  for (double& m : *mean) m /= double(l.count());
  for (int64_t i = 0; i < n; ++i) {
    const double d = double(x[i]) - (*mean)[size_t(l.channel_of(i))];
    (*var)[size_t(l.channel_of(i))] += d * d;
  }
  for (double& v : *var) v /= double(l.count());
}

// y = scale*(x-mean)*inv_std + bias (+ residual, when given), then max(0, y) when `relu`;
// mean and inv_std per channel.
template <typename T>
void normalize(const plugin::NormLayout& l, const T* x, const T* scale, const T* bias,
               const std::vector<double>& mean, const std::vector<double>& inv_std, bool relu,
               T* y, const T* residual = nullptr) {
  const int64_t n = l.outer * l.c * l.inner;
  for (int64_t i = 0; i < n; ++i) {
    const size_t c = size_t(l.channel_of(i));
    const double v = double(scale[c]) * (double(x[i]) - mean[c]) * inv_std[c] + double(bias[c]) +
                     (residual != nullptr ? double(residual[i]) : 0.0);
    y[i] = static_cast<T>(relu && !(v > 0) ? 0.0 : v);
  }
}

void run_batch_norm(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const plugin::NormLayout l = layout_of(op, op.input(0));
  const double eps = op.get_float("epsilon");
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* m = static_cast<const T*>(in[3]);
    const T* v = static_cast<const T*>(in[4]);
    std::vector<double> mean(size_t(l.c)), inv_std(size_t(l.c));
    for (int64_t c = 0; c < l.c; ++c) {
      mean[size_t(c)] = double(m[c]);
      inv_std[size_t(c)] = 1.0 / std::sqrt(double(v[c]) + eps);
    }
    normalize(l, static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
              static_cast<const T*>(in[2]), mean, inv_std, relu_of(op), static_cast<T*>(out[0]));
  });
}

// batch_norm_train, and batch_norm_add_relu_train (its residual is input 1, the others one
// further on).
void run_batch_norm_train(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const plugin::NormLayout l = layout_of(op, op.input(0));
  const double eps = op.get_float("epsilon"), momentum = op.get_float("momentum");
  const int k0 = op.name() == "batch_norm_add_relu_train" ? 1 : 0;  // inputs after x shift by k0
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(in[0]);
    const T* residual = k0 == 1 ? static_cast<const T*>(in[1]) : nullptr;
    std::vector<double> mean, var, inv_std(size_t(l.c));
    batch_moments(l, x, &mean, &var);
    for (int64_t c = 0; c < l.c; ++c) inv_std[size_t(c)] = 1.0 / std::sqrt(var[size_t(c)] + eps);
    normalize(l, x, static_cast<const T*>(in[1 + k0]), static_cast<const T*>(in[2 + k0]), mean,
              inv_std, relu_of(op), static_cast<T*>(out[0]), residual);
    const T* rm = static_cast<const T*>(in[3 + k0]);
    const T* rv = static_cast<const T*>(in[4 + k0]);
    T *rm_out = static_cast<T*>(out[1]), *rv_out = static_cast<T*>(out[2]);
    T *saved_mean = static_cast<T*>(out[3]), *saved_inv_std = static_cast<T*>(out[4]);
    const double n = double(l.count());
    const double unbias = n > 1 ? n / (n - 1) : 1.0;
    for (int64_t c = 0; c < l.c; ++c) {
      const size_t k = size_t(c);
      const double old_mean = double(rm[c]), old_var = double(rv[c]);  // before any write
      rm_out[c] = static_cast<T>(momentum * old_mean + (1 - momentum) * mean[k]);
      rv_out[c] = static_cast<T>(momentum * old_var + (1 - momentum) * var[k] * unbias);
      saved_mean[c] = static_cast<T>(mean[k]);
      saved_inv_std[c] = static_cast<T>(inv_std[k]);
    }
  });
}

// With xhat = (x - saved_mean)*saved_inv_std, per channel over its count values:
//   dbias = sum(dy), dscale = sum(dy*xhat),
//   dx = scale*saved_inv_std/count * (count*dy - dbias - xhat*dscale)
// (the gradient through the batch mean and variance included, as PyTorch's
// native_batch_norm_backward in training mode). batch_norm_relu_grad first sets dy to 0 where
// scale*xhat + bias <= 0 (where the fused ReLU cut y to 0).
void run_batch_norm_grad(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const plugin::NormLayout l = layout_of(op, op.input(1));
  const bool relu = op.name() == "batch_norm_relu_grad";
  const int stats = relu ? 4 : 3;  // index of saved_mean; bias (relu) is input 3
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T *dy_in = static_cast<const T*>(in[0]), *x = static_cast<const T*>(in[1]);
    const T* scale = static_cast<const T*>(in[2]);
    const T* bias = relu ? static_cast<const T*>(in[3]) : nullptr;
    const T *mean = static_cast<const T*>(in[stats]), *inv_std = static_cast<const T*>(in[stats + 1]);
    T *dx = static_cast<T*>(out[0]), *dscale = static_cast<T*>(out[1]);
    T* dbias = static_cast<T*>(out[2]);
    const int64_t total = l.outer * l.c * l.inner;
    std::vector<double> sum_dy(size_t(l.c), 0.0), sum_dy_xhat(size_t(l.c), 0.0);
    auto xhat = [&](int64_t i, size_t c) {
      return (double(x[i]) - double(mean[c])) * double(inv_std[c]);
    };
    auto dy = [&](int64_t i, size_t c) {
      if (relu && !(double(scale[c]) * xhat(i, c) + double(bias[c]) > 0)) return 0.0;
      return double(dy_in[i]);
    };
    for (int64_t i = 0; i < total; ++i) {
      const size_t c = size_t(l.channel_of(i));
      sum_dy[c] += dy(i, c);
      sum_dy_xhat[c] += dy(i, c) * xhat(i, c);
    }
    const double n = double(l.count());
    for (int64_t i = 0; i < total; ++i) {
      const size_t c = size_t(l.channel_of(i));
      dx[i] = static_cast<T>(double(scale[c]) * double(inv_std[c]) / n *
                             (n * dy(i, c) - sum_dy[c] - xhat(i, c) * sum_dy_xhat[c]));
    }
    for (int64_t c = 0; c < l.c; ++c) {
      dscale[c] = static_cast<T>(sum_dy_xhat[size_t(c)]);
      dbias[c] = static_cast<T>(sum_dy[size_t(c)]);
    }
  });
}

// dy, y, x, scale, saved_mean, saved_inv_std -> dx, dscale, dbias, dresidual:
// g = dy where y > 0 (else 0) is dresidual, and batch_norm_grad's arithmetic on g gives the
// rest.
void run_batch_norm_add_relu_grad(const OpView& op, const void* const* in, void* const* out,
                                  uint64_t) {
  const plugin::NormLayout l = layout_of(op, op.input(2));
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T *dy = static_cast<const T*>(in[0]), *y = static_cast<const T*>(in[1]);
    const T *x = static_cast<const T*>(in[2]), *scale = static_cast<const T*>(in[3]);
    const T *mean = static_cast<const T*>(in[4]), *inv_std = static_cast<const T*>(in[5]);
    T *dx = static_cast<T*>(out[0]), *dscale = static_cast<T*>(out[1]);
    T *dbias = static_cast<T*>(out[2]), *dres = static_cast<T*>(out[3]);
    const int64_t total = l.outer * l.c * l.inner;
    std::vector<double> g(static_cast<size_t>(total));
    for (int64_t i = 0; i < total; ++i) {
      g[size_t(i)] = double(y[i]) > 0 ? double(dy[i]) : 0.0;
      dres[i] = static_cast<T>(g[size_t(i)]);
    }
    std::vector<double> sum_g(size_t(l.c), 0.0), sum_g_xhat(size_t(l.c), 0.0);
    auto xhat = [&](int64_t i, size_t c) {
      return (double(x[i]) - double(mean[c])) * double(inv_std[c]);
    };
    for (int64_t i = 0; i < total; ++i) {
      const size_t c = size_t(l.channel_of(i));
      sum_g[c] += g[size_t(i)];
      sum_g_xhat[c] += g[size_t(i)] * xhat(i, c);
    }
    const double n = double(l.count());
    for (int64_t i = 0; i < total; ++i) {
      const size_t c = size_t(l.channel_of(i));
      dx[i] = static_cast<T>(double(scale[c]) * double(inv_std[c]) / n *
                             (n * g[size_t(i)] - sum_g[c] - xhat(i, c) * sum_g_xhat[c]));
    }
    for (int64_t c = 0; c < l.c; ++c) {
      dscale[c] = static_cast<T>(sum_g_xhat[size_t(c)]);
      dbias[c] = static_cast<T>(sum_g[size_t(c)]);
    }
  });
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"batch_norm_add_relu_train", run_batch_norm_train, check_norm});
  t.push_back({"batch_norm_add_relu_grad", run_batch_norm_add_relu_grad, check_norm});
  t.push_back({"batch_norm", run_batch_norm, check_norm});
  t.push_back({"batch_norm_train", run_batch_norm_train, check_norm});
  t.push_back({"batch_norm_grad", run_batch_norm_grad, check_norm});
  t.push_back({"batch_norm_relu_grad", run_batch_norm_grad, check_norm});
}

}  // namespace dlrt::reference::detail
