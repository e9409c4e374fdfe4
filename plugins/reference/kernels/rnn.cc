// rnn.cc: lstm_cell and lstm_cell_grad (core/ops/infer_rnn.cc), in double: the oracle's
// loops follow the formulas of the schema one element at a time.
//
//   lstm_cell:      zx (B,4H), h (B,H), c (B,H), U (H,4H) -> h' (B,H), c' (B,H), act (B,4H)
//                   z[b,j] = zx[b,j] + sum_k h[b,k] U[k,j]; i f g o = blocks of z (i, f, o
//                   sigmoid, g tanh); c' = f*c + i*g, h' = o*tanh(c'); act = [i, f, g, o]
//   lstm_cell_grad: dh', dc', c, c', act -> dz (B,4H), dc (B,H) (the schema's header).
#include <cmath>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

void check_rnn(const OpView& op) { expect_float(op, op.input(0), "input 0"); }

void run_lstm_cell(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const int64_t B = op.input(1).dims[0], H = op.input(1).dims[1];
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T *zx = static_cast<const T*>(in[0]), *h = static_cast<const T*>(in[1]);
    const T *c = static_cast<const T*>(in[2]), *U = static_cast<const T*>(in[3]);
    T *h2 = static_cast<T*>(out[0]), *c2 = static_cast<T*>(out[1]);
    T* act = static_cast<T*>(out[2]);
    std::vector<double> z(size_t(4 * H));
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t j = 0; j < 4 * H; ++j) {
        double acc = double(zx[b * 4 * H + j]);
        for (int64_t k = 0; k < H; ++k) acc += double(h[b * H + k]) * double(U[k * 4 * H + j]);
        z[size_t(j)] = acc;
      }
      for (int64_t j = 0; j < H; ++j) {
        const double i = sigmoid(z[size_t(j)]), f = sigmoid(z[size_t(H + j)]);
        const double g = std::tanh(z[size_t(2 * H + j)]), o = sigmoid(z[size_t(3 * H + j)]);
        const double cn = f * double(c[b * H + j]) + i * g;
        c2[b * H + j] = static_cast<T>(cn);
        h2[b * H + j] = static_cast<T>(o * std::tanh(cn));
        T* a = act + b * 4 * H;
        a[j] = static_cast<T>(i);
        a[H + j] = static_cast<T>(f);
        a[2 * H + j] = static_cast<T>(g);
        a[3 * H + j] = static_cast<T>(o);
      }
    }
  });
}

void run_lstm_cell_grad(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const int64_t B = op.input(0).dims[0], H = op.input(0).dims[1];
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T *dh2 = static_cast<const T*>(in[0]), *dc2 = static_cast<const T*>(in[1]);
    const T *c = static_cast<const T*>(in[2]), *c2 = static_cast<const T*>(in[3]);
    const T* act = static_cast<const T*>(in[4]);
    T *dz = static_cast<T*>(out[0]), *dc = static_cast<T*>(out[1]);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < H; ++j) {
        const int64_t k = b * H + j;
        const T* a = act + b * 4 * H;
        const double i = double(a[j]), f = double(a[H + j]), g = double(a[2 * H + j]),
                     o = double(a[3 * H + j]);
        const double th = std::tanh(double(c2[k])), dh = double(dh2[k]);
        const double dct = double(dc2[k]) + dh * o * (1.0 - th * th);
        T* d = dz + b * 4 * H;
        d[j] = static_cast<T>(dct * g * i * (1.0 - i));
        d[H + j] = static_cast<T>(dct * double(c[k]) * f * (1.0 - f));
        d[2 * H + j] = static_cast<T>(dct * i * (1.0 - g * g));
        d[3 * H + j] = static_cast<T>(dh * th * o * (1.0 - o));
        dc[k] = static_cast<T>(dct * f);
      }
  });
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"lstm_cell", run_lstm_cell, check_rnn});
  t.push_back({"lstm_cell_grad", run_lstm_cell_grad, check_rnn});
}

}  // namespace dlrt::reference::detail
