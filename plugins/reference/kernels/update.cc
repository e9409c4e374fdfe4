// update.cc: the optimizer updates, Keras' SGD (with momentum and Nesterov) and Adam, applied
// in place: the executor passes the same buffers as inputs and outputs. Every element reads
// all its inputs before writing any output, so aliasing is safe here without scratch memory.
#include <cmath>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

// All operands the same float dtype and the same dims as the first, except the scalars (step,
// learning_rate), which the schema makes f32 and the f64 finite-difference tests make f64.
double scalar(const OpView& op, const void* const* in, int i) {
  return op.input(i).dtype == DLRT_F64 ? *static_cast<const double*>(in[i])
                                       : double(*static_cast<const float*>(in[i]));
}

// param, grad, velocity: same shape, learning_rate: () f32 -> param, velocity
//   v = momentum*v - lr*g;  p += nesterov ? momentum*v - lr*g : v   (momentum 0: p -= lr*g)
void run_sgd(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const double lr = scalar(op, in, 3), mom = op.get_float("momentum");
  const bool nesterov = op.get_bool("nesterov");
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T *p = static_cast<const T*>(in[0]), *g = static_cast<const T*>(in[1]),
            *v = static_cast<const T*>(in[2]);
    T *p_out = static_cast<T*>(out[0]), *v_out = static_cast<T*>(out[1]);
    for (int64_t i = 0; i < op.input(0).numel; ++i) {
      const double pi = p[i], gi = g[i], vi = v[i];
      const double v_new = mom * vi - lr * gi;
      const double p_new = pi + (nesterov ? mom * v_new - lr * gi : v_new);
      v_out[i] = static_cast<T>(v_new);
      p_out[i] = static_cast<T>(p_new);
    }
  });
}

// param, grad, m, v: same shape, step: () f32, learning_rate: () f32 -> param, m, v
//   lr_t = lr * sqrt(1 - beta2^step) / (1 - beta1^step)
//   m = beta1*m + (1-beta1)*g;  v = beta2*v + (1-beta2)*g^2;  p -= lr_t * m / (sqrt(v) + epsilon)
void run_adam(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const double lr = scalar(op, in, 5), b1 = op.get_float("beta1"), b2 = op.get_float("beta2"),
               eps = op.get_float("epsilon");
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T *p = static_cast<const T*>(in[0]), *g = static_cast<const T*>(in[1]),
            *m = static_cast<const T*>(in[2]), *v = static_cast<const T*>(in[3]);
    const double step = scalar(op, in, 4);
    const double lr_t = lr * std::sqrt(1.0 - std::pow(b2, step)) / (1.0 - std::pow(b1, step));
    T *p_out = static_cast<T*>(out[0]), *m_out = static_cast<T*>(out[1]),
      *v_out = static_cast<T*>(out[2]);
    for (int64_t i = 0; i < op.input(0).numel; ++i) {
      const double pi = p[i], gi = g[i], mi = m[i], vi = v[i];
      const double m_new = b1 * mi + (1.0 - b1) * gi;
      const double v_new = b2 * vi + (1.0 - b2) * gi * gi;
      m_out[i] = static_cast<T>(m_new);
      v_out[i] = static_cast<T>(v_new);
      p_out[i] = static_cast<T>(pi - lr_t * m_new / (std::sqrt(v_new) + eps));
    }
  });
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"sgd_update", run_sgd, check_float});
  t.push_back({"adam_update", run_adam, check_float});
}

}  // namespace dlrt::reference::detail
