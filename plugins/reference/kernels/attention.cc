// attention.cc: causal_mask, attention and attention_grad (core/ops/infer_attention.cc,
// attention_geom.hpp), written as the loops of their definitions in double: the oracle the
// fused cpu/cuda kernels and the composed form (batch_matmul, causal_mask, softmax,
// batch_matmul) are compared with.
//
// Per problem h (one index of the batch dims), query row i sees keys [0, key_end(i)):
//   s_j = scale * q_i . k_j,  lse_i = log(sum_j exp(s_j)) (max-shifted),  p_j = exp(s_j - lse_i)
//   o_i = sum_j p_j v_j
// and the backward (FlashAttention-2), from the saved o and lse:
//   p_j = exp(s_j - lse_i), dv_j += p_j do_i, dp_j = do_i . v_j, delta_i = do_i . o_i,
//   ds_j = p_j (dp_j - delta_i), dq_i = scale sum_j ds_j k_j, dk_j += scale ds_j q_i.
#include <algorithm>
#include <cmath>
#include <vector>

#include "attention_geom.hpp"
#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

void check_causal_mask(const OpView& op) { expect_float(op, op.input(0), "x"); }

void run_causal_mask(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const plugin::CausalMaskGeom g = plugin::causal_mask_geom(op);
  const double fill = op.get_float("fill");
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(in[0]);
    T* y = static_cast<T*>(out[0]);
    for (int64_t m = 0; m < g.mats; ++m)
      for (int64_t i = 0; i < g.tq; ++i)
        for (int64_t j = 0; j < g.tk; ++j) {
          const int64_t e = (m * g.tq + i) * g.tk + j;
          y[e] = g.keep(i, j) ? x[e] : static_cast<T>(fill);
        }
  });
}

void check_attention(const OpView& op) {
  expect_float(op, op.input(op.name() == "attention_grad" ? 1 : 0), "q");
}

// Row i's scores s_j = scale * q_i . k_j over its visible keys.
template <typename T>
void scores(const plugin::AttentionGeom& g, const T* q, const T* k, int64_t i,
            std::vector<double>& s) {
  const int64_t n = g.key_end(i);
  s.assign(size_t(n), 0.0);
  for (int64_t j = 0; j < n; ++j) {
    double acc = 0;
    for (int64_t c = 0; c < g.d; ++c) acc += double(q[i * g.d + c]) * double(k[j * g.d + c]);
    s[size_t(j)] = g.scale * acc;
  }
}

void run_attention(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const plugin::AttentionGeom g = plugin::attention_geom(op, 0);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    std::vector<double> s, acc(size_t(g.dv));
    for (int64_t h = 0; h < g.heads; ++h) {
      const T* q = static_cast<const T*>(in[0]) + h * g.tq * g.d;
      const T* k = static_cast<const T*>(in[1]) + h * g.tk * g.d;
      const T* v = static_cast<const T*>(in[2]) + h * g.tk * g.dv;
      T* o = static_cast<T*>(out[0]) + h * g.tq * g.dv;
      T* lse = static_cast<T*>(out[1]) + h * g.tq;
      for (int64_t i = 0; i < g.tq; ++i) {
        scores(g, q, k, i, s);
        double mx = -INFINITY;
        for (double x : s) mx = std::max(mx, x);
        double sum = 0;
        for (double x : s) sum += std::exp(x - mx);
        const double l = mx + std::log(sum);
        std::fill(acc.begin(), acc.end(), 0.0);
        for (size_t j = 0; j < s.size(); ++j) {
          const double p = std::exp(s[j] - l);
          for (int64_t c = 0; c < g.dv; ++c) acc[size_t(c)] += p * double(v[int64_t(j) * g.dv + c]);
        }
        for (int64_t c = 0; c < g.dv; ++c) o[i * g.dv + c] = static_cast<T>(acc[size_t(c)]);
        lse[i] = static_cast<T>(l);
      }
    }
  });
}

void run_attention_grad(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const plugin::AttentionGeom g = plugin::attention_geom(op, 1);
  with_float(op.input(1).dtype, [&](auto t) {
    using T = decltype(t);
    std::vector<double> s, dq(size_t(g.d)), dk, dv;
    for (int64_t h = 0; h < g.heads; ++h) {
      const T* dout = static_cast<const T*>(in[0]) + h * g.tq * g.dv;
      const T* q = static_cast<const T*>(in[1]) + h * g.tq * g.d;
      const T* k = static_cast<const T*>(in[2]) + h * g.tk * g.d;
      const T* v = static_cast<const T*>(in[3]) + h * g.tk * g.dv;
      const T* o = static_cast<const T*>(in[4]) + h * g.tq * g.dv;
      const T* lse = static_cast<const T*>(in[5]) + h * g.tq;
      T* dq_out = static_cast<T*>(out[0]) + h * g.tq * g.d;
      T* dk_out = static_cast<T*>(out[1]) + h * g.tk * g.d;
      T* dv_out = static_cast<T*>(out[2]) + h * g.tk * g.dv;
      dk.assign(size_t(g.tk * g.d), 0.0);
      dv.assign(size_t(g.tk * g.dv), 0.0);
      for (int64_t i = 0; i < g.tq; ++i) {
        scores(g, q, k, i, s);
        const T* doi = dout + i * g.dv;
        double delta = 0;
        for (int64_t c = 0; c < g.dv; ++c) delta += double(doi[c]) * double(o[i * g.dv + c]);
        std::fill(dq.begin(), dq.end(), 0.0);
        for (size_t jj = 0; jj < s.size(); ++jj) {
          const int64_t j = int64_t(jj);
          const double p = std::exp(s[jj] - double(lse[i]));
          double dp = 0;
          for (int64_t c = 0; c < g.dv; ++c) {
            dv[size_t(j * g.dv + c)] += p * double(doi[c]);
            dp += double(doi[c]) * double(v[j * g.dv + c]);
          }
          const double ds = p * (dp - delta) * g.scale;
          for (int64_t c = 0; c < g.d; ++c) {
            dq[size_t(c)] += ds * double(k[j * g.d + c]);
            dk[size_t(j * g.d + c)] += ds * double(q[i * g.d + c]);
          }
        }
        for (int64_t c = 0; c < g.d; ++c) dq_out[i * g.d + c] = static_cast<T>(dq[size_t(c)]);
      }
      for (size_t e = 0; e < dk.size(); ++e) dk_out[e] = static_cast<T>(dk[e]);
      for (size_t e = 0; e < dv.size(); ++e) dv_out[e] = static_cast<T>(dv[e]);
    }
  });
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"causal_mask", run_causal_mask, check_causal_mask});
  t.push_back({"attention", run_attention, check_attention});
  t.push_back({"attention_grad", run_attention_grad, check_attention});
}

}  // namespace dlrt::reference::detail
