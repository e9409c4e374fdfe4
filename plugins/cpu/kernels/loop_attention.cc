// loop_attention.cc: causal_mask, attention and attention_grad on the cpu plugin
// (core/ops/infer_attention.cc has the arithmetic, attention_geom.hpp the geometry).
//
// attention is flash-style tiled: the work is (problem h, block of kBlock query rows), run in
// parallel (parallel_for over heads * blocks). A block never materialises more than its own
// (kBlock x Tk') score tile, Tk' = the keys its last row sees (causal: the key blocks wholly
// past the diagonal are skipped, not computed and masked). Per block:
//   S = scale * Q_blk K^T          dnnl_sgemm (row-major, single-threaded inside the region)
//   per row: m = max, p = exp(s - m) (a vectorised exp), l = sum(p), p /= l, lse = m + log l
//   O_blk = P V                    dnnl_sgemm
// Two passes over a tile that sits in L1/L2 instead of an online softmax: the row is short
// (Tk), and the two-pass form needs no rescaling of O.
//
// attention_grad is the same tiling per problem h (parallel over problems: dK and dV sum over
// every query block of h, so one thread owns h and the sums stay deterministic):
//   P = exp(scale * Q_blk K^T - lse), dV += P^T dO_blk, dP = dO_blk V^T,
//   delta = rowsum(dO * O), dS = scale * P * (dP - delta), dQ_blk = dS K, dK += dS^T Q_blk.
//
// f64 runs the same tiles with a plain loop product (f64 is for checks, not speed).
#include <dnnl.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "attention_geom.hpp"
#include "loop_simd.hpp"
#include "loop_util.hpp"
#include "portable_math.hpp"

namespace dlrt::cpu::loops {
namespace {

// exp, log: the same bits on every platform (portable_math.hpp).
namespace portable = plugin::portable;

using plugin::AttentionGeom;

constexpr int64_t kBlock = 32;  // query rows per tile

// ---- a row-major GEMM: C = alpha op(A) op(B) + beta C --------------------------------------
// op(A) (m x k), op(B) (k x n); 'T' reads the stored matrix transposed.
void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  // dnnl_sgemm runs single-threaded when called inside an OpenMP parallel region.
  dnnl_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += (ta == 'T' ? a[p * lda + i] : a[i * lda + p]) *
               (tb == 'T' ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = alpha * acc + (beta == 0 ? 0.0 : beta * c[i * ldc + j]);
    }
}

// ---- exp over a row -------------------------------------------------------------------------
// exp(x) = 2^n * e^r, n = round(x / ln 2), |r| <= ln2/2, e^r by Cephes' expf polynomial
// (max error ~2 ulp), on GCC vectors (F4 portable, F8 AVX2: the vectoriser leaves a scalar
// version with its clamps scalar, and std::exp is a libm call per element). x is clamped to
// [-87, 88] so 2^n stays a normal float; callers zero what must be exactly zero (masked
// keys). Every step is element-wise without FMA, so both widths give the same bits.
template <typename V>
DLRT_SIMD_INLINE V exp_vec(V x) {
  using M = typename simd::Traits<V>::Mask;
  const V lo = V{} - 87.0f, hi = V{} + 88.0f;
  x = simd::select<V>(x < lo, lo, x);
  x = simd::select<V>(x > hi, hi, x);
  const float kShift = 12582912.0f;  // 1.5 * 2^23: adding and subtracting rounds to an integer
  const V n = (x * 1.44269504089f + kShift) - kShift;
  const V r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  V p = V{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const M bits = (__builtin_convertvector(n, M) + 127) << 23;
  return p * reinterpret_cast<V>(bits);
}

// s[j] = exp(s[j] - shift) for j < n, a vector at a time (the tail through a padded copy).
template <typename V>
DLRT_SIMD_INLINE void exp_row(float* s, int64_t n, float shift) {
  constexpr int L = simd::Traits<V>::kLanes;
  int64_t j = 0;
  for (; j + L <= n; j += L) simd::store(s + j, exp_vec<V>(simd::load<V>(s + j) - shift));
  if (j < n) {
    float t[L] = {};
    for (int64_t c = 0; c < n - j; ++c) t[c] = s[j + c];
    simd::store(t, exp_vec<V>(simd::load<V>(t) - shift));
    for (int64_t c = 0; c < n - j; ++c) s[j + c] = t[c];
  }
}

// s[j] = exp(s[j] - shift) for j < n; returns their sum. The exp loop has no reduction, so
// it vectorises; the sum keeps 8 partials (lane c adds s[c], s[c+8], ...), combined in a
// fixed order afterwards: a float reduction the vectoriser may not reorder otherwise, and the
// same bits on the portable and the AVX2 path.
template <typename V>
DLRT_SIMD_INLINE float exp_shifted_body(float* s, int64_t n, float shift) {
  exp_row<V>(s, n, shift);
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int c = 0; c < 8; ++c) acc[c] += s[j + c];
  for (int c = 0; j < n; ++j, ++c) acc[c] += s[j];
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}
// max(s[0..n)), n >= 1, with the same 8 partials (max is exact: any order gives its bits).
DLRT_SIMD_INLINE float row_max_body(const float* s, int64_t n) {
  float acc[8];
  for (int c = 0; c < 8; ++c) acc[c] = s[0];
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int c = 0; c < 8; ++c) acc[c] = acc[c] > s[j + c] ? acc[c] : s[j + c];
  for (int c = 0; j < n; ++j, ++c) acc[c] = acc[c] > s[j] ? acc[c] : s[j];
  float m = acc[0];
  for (int c = 1; c < 8; ++c) m = m > acc[c] ? m : acc[c];
  return m;
}
float exp_shifted_portable(float* s, int64_t n, float shift) {
  return exp_shifted_body<simd::F4>(s, n, shift);
}
float row_max_portable(const float* s, int64_t n) { return row_max_body(s, n); }
#if DLRT_HAVE_AVX2_PATH
DLRT_TARGET_AVX2 float exp_shifted_avx2(float* s, int64_t n, float shift) {
  return exp_shifted_body<simd::F8>(s, n, shift);
}
DLRT_TARGET_AVX2 float row_max_avx2(const float* s, int64_t n) { return row_max_body(s, n); }
#endif

float exp_shifted(bool avx2, float* s, int64_t n, float shift) {
#if DLRT_HAVE_AVX2_PATH
  if (avx2) return exp_shifted_avx2(s, n, shift);
#endif
  (void)avx2;
  return exp_shifted_portable(s, n, shift);
}
double exp_shifted(bool, double* s, int64_t n, double shift) {
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += (s[j] = portable::exp(s[j] - shift));
  return sum;
}
float row_max(bool avx2, const float* s, int64_t n) {
#if DLRT_HAVE_AVX2_PATH
  if (avx2) return row_max_avx2(s, n);
#endif
  (void)avx2;
  return row_max_portable(s, n);
}
double row_max(bool, const double* s, int64_t n) {
  double m = s[0];
  for (int64_t j = 1; j < n; ++j) m = std::max(m, s[j]);
  return m;
}

// ---- few query rows (generation: Tq = 1 against a key/value cache) ---------------------------
// A GEMM call costs more than a 1 x Tk x D product, so blocks of at most kFewRows rows score,
// normalise and mix with loops: the dot products keep 8 partials (one vector, combined in a
// fixed order, as above), o += p_j v_j runs across Dv (no reduction). f32 only.
constexpr int64_t kFewRows = 4;

DLRT_SIMD_INLINE float dot8(const float* a, const float* b, int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t c = 0;
  for (; c + 8 <= n; c += 8)
    for (int l = 0; l < 8; ++l) acc[l] += a[c + l] * b[c + l];
  for (int l = 0; c < n; ++c, ++l) acc[l] += a[c] * b[c];
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

// Rows [i0, i0 + rows) of one problem: o and lse; s holds rows x Tk scores.
template <typename V>
DLRT_SIMD_INLINE void few_rows_body(const AttentionGeom& g, const float* q, const float* k,
                                    const float* v, float* o, float* lse, int64_t i0, int64_t rows,
                                    float* s) {
  const float scale = float(g.scale);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = i0 + r, e = g.key_end(i);
    float* sr = s + r * g.tk;
    const float* qi = q + i * g.d;
    for (int64_t j = 0; j < e; ++j) sr[j] = scale * dot8(qi, k + j * g.d, g.d);
    const float mx = row_max_body(sr, e);
    const float sum = exp_shifted_body<V>(sr, e, mx);
    const float inv = 1.0f / sum;
    float* oi = o + i * g.dv;
    for (int64_t c = 0; c < g.dv; ++c) oi[c] = 0.0f;
    for (int64_t j = 0; j < e; ++j) {
      const float p = sr[j] * inv;
      const float* vj = v + j * g.dv;
      for (int64_t c = 0; c < g.dv; ++c) oi[c] += p * vj[c];
    }
    lse[i] = mx + portable::log(sum);
  }
}
void few_rows_portable(const AttentionGeom& g, const float* q, const float* k, const float* v,
                       float* o, float* lse, int64_t i0, int64_t rows, float* s) {
  few_rows_body<simd::F4>(g, q, k, v, o, lse, i0, rows, s);
}
#if DLRT_HAVE_AVX2_PATH
DLRT_TARGET_AVX2 void few_rows_avx2(const AttentionGeom& g, const float* q, const float* k,
                                    const float* v, float* o, float* lse, int64_t i0, int64_t rows,
                                    float* s) {
  few_rows_body<simd::F8>(g, q, k, v, o, lse, i0, rows, s);
}
#endif

// ---- causal_mask ----------------------------------------------------------------------------

void check_attention(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.input(op.name() == "attention_grad" ? 1 : 0));
  if (cost == nullptr) return;
  if (op.name() == "causal_mask") return fill_cost(op, 1, cost);
  const AttentionGeom g = plugin::attention_geom(op, op.name() == "attention_grad" ? 1 : 0);
  const double pairs = double(g.heads) * double(g.tq) * double(g.tk) * (g.causal ? 0.5 : 1.0);
  fill_cost(op, 0, cost);
  cost->flops = pairs * 2.0 * double(g.d + g.dv) * (op.name() == "attention_grad" ? 2.5 : 1.0);
}

class CausalMaskKernel : public LoopKernel {
 public:
  CausalMaskKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        dtype_(op.input(0).dtype),
        g_(plugin::causal_mask_geom(op)),
        fill_(op.get_float("fill")) {}

  void execute(const dlrt_kernel_args& args) override {
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      const T* x = static_cast<const T*>(args.inputs[0]);
      T* y = static_cast<T*>(args.outputs[0]);
      const int64_t tq = g_.tq, tk = g_.tk, off = tk - tq;
      const T fill = static_cast<T>(fill_);
      parallel_for(g_.mats * tq, std::max<int64_t>(1, kGrainCheap / tk), threads_,
                   [&](int64_t b, int64_t e) {
                     for (int64_t r = b; r < e; ++r) {
                       const int64_t i = r % tq, keep = std::min(tk, i + off + 1);
                       const T* xr = x + r * tk;
                       T* yr = y + r * tk;
                       for (int64_t j = 0; j < keep; ++j) yr[j] = xr[j];
                       for (int64_t j = keep; j < tk; ++j) yr[j] = fill;
                     }
                   });
    });
  }

 private:
  int32_t dtype_;
  plugin::CausalMaskGeom g_;
  double fill_;
};

// ---- attention --------------------------------------------------------------------------

// Rows [i0, i1) of a block see keys [0, key_end(row)); the tile spans the last row's keys.
struct Block {
  int64_t i0, rows, keys;
};
Block block_of(const AttentionGeom& g, int64_t b) {
  const int64_t i0 = b * kBlock, rows = std::min(kBlock, g.tq - i0);
  return {i0, rows, g.key_end(i0 + rows - 1)};
}

class AttentionKernel : public LoopKernel {
 public:
  AttentionKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), dtype_(op.input(0).dtype), g_(plugin::attention_geom(op, 0)) {}

  void execute(const dlrt_kernel_args& args) override {
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      const AttentionGeom& g = g_;
      const int64_t nb = (g.tq + kBlock - 1) / kBlock;
      // Grain: about one block of a T = 128 problem's work per chunk at least.
      const int64_t work = std::max<int64_t>(1, g.tk * (g.d + g.dv) * kBlock);
      parallel_for(g.heads * nb, std::max<int64_t>(1, kGrainCheap * 4 / work), threads_,
                   [&](int64_t begin, int64_t end) {
                     std::vector<T> tile(size_t(kBlock * g.tk));
                     for (int64_t w = begin; w < end; ++w)
                       run_block<T>(args, w / nb, w % nb, tile.data());
                   });
    });
  }

 private:
  template <typename T>
  void run_block(const dlrt_kernel_args& args, int64_t h, int64_t b, T* s) const {
    const AttentionGeom& g = g_;
    const T* q = static_cast<const T*>(args.inputs[0]) + h * g.tq * g.d;
    const T* k = static_cast<const T*>(args.inputs[1]) + h * g.tk * g.d;
    const T* v = static_cast<const T*>(args.inputs[2]) + h * g.tk * g.dv;
    T* o = static_cast<T*>(args.outputs[0]) + h * g.tq * g.dv;
    T* lse = static_cast<T*>(args.outputs[1]) + h * g.tq;
    const Block blk = block_of(g, b);
    if constexpr (std::is_same_v<T, float>) {
      if (blk.rows <= kFewRows) {
#if DLRT_HAVE_AVX2_PATH
        if (avx2_) return few_rows_avx2(g, q, k, v, o, lse, blk.i0, blk.rows, s);
#endif
        return few_rows_portable(g, q, k, v, o, lse, blk.i0, blk.rows, s);
      }
    }
    const int64_t n = blk.keys;  // the tile's width and leading dimension
    gemm('N', 'T', blk.rows, n, g.d, T(g.scale), q + blk.i0 * g.d, g.d, k, g.d, T(0), s, n);
    for (int64_t r = 0; r < blk.rows; ++r) {
      T* sr = s + r * n;
      const int64_t e = g.key_end(blk.i0 + r);
      const T mx = row_max(avx2_, sr, e);  // e >= 1: every row sees key 0
      const T sum = exp_shifted(avx2_, sr, e, mx);
      const T inv = T(1) / sum;
      for (int64_t j = 0; j < e; ++j) sr[j] *= inv;
      for (int64_t j = e; j < n; ++j) sr[j] = T(0);
      lse[blk.i0 + r] = mx + portable::log(sum);
    }
    gemm('N', 'N', blk.rows, g.dv, n, T(1), s, n, v, g.dv, T(0), o + blk.i0 * g.dv, g.dv);
  }

  int32_t dtype_;
  AttentionGeom g_;
};

class AttentionGradKernel : public LoopKernel {
 public:
  AttentionGradKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), dtype_(op.input(1).dtype), g_(plugin::attention_geom(op, 1)) {}

  void execute(const dlrt_kernel_args& args) override {
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      const AttentionGeom& g = g_;
      const int64_t work = std::max<int64_t>(1, g.tq * g.tk * (g.d + g.dv));
      parallel_for(g.heads, std::max<int64_t>(1, kGrainCheap * 4 / work), threads_,
                   [&](int64_t begin, int64_t end) {
                     std::vector<T> p(size_t(kBlock * g.tk)), dp(size_t(kBlock * g.tk));
                     for (int64_t h = begin; h < end; ++h)
                       run_head<T>(args, h, p.data(), dp.data());
                   });
    });
  }

 private:
  template <typename T>
  void run_head(const dlrt_kernel_args& args, int64_t h, T* p, T* dp) const {
    const AttentionGeom& g = g_;
    const T* dout = static_cast<const T*>(args.inputs[0]) + h * g.tq * g.dv;
    const T* q = static_cast<const T*>(args.inputs[1]) + h * g.tq * g.d;
    const T* k = static_cast<const T*>(args.inputs[2]) + h * g.tk * g.d;
    const T* v = static_cast<const T*>(args.inputs[3]) + h * g.tk * g.dv;
    const T* o = static_cast<const T*>(args.inputs[4]) + h * g.tq * g.dv;
    const T* lse = static_cast<const T*>(args.inputs[5]) + h * g.tq;
    T* dq = static_cast<T*>(args.outputs[0]) + h * g.tq * g.d;
    T* dk = static_cast<T*>(args.outputs[1]) + h * g.tk * g.d;
    T* dv = static_cast<T*>(args.outputs[2]) + h * g.tk * g.dv;
    std::fill(dk, dk + g.tk * g.d, T(0));
    std::fill(dv, dv + g.tk * g.dv, T(0));
    const T scale = T(g.scale);
    const int64_t nb = (g.tq + kBlock - 1) / kBlock;
    for (int64_t b = 0; b < nb; ++b) {
      const Block blk = block_of(g, b);
      const int64_t n = blk.keys, i0 = blk.i0;
      const T* q_blk = q + i0 * g.d;
      const T* do_blk = dout + i0 * g.dv;
      gemm('N', 'T', blk.rows, n, g.d, scale, q_blk, g.d, k, g.d, T(0), p, n);
      for (int64_t r = 0; r < blk.rows; ++r) {
        T* pr = p + r * n;
        const int64_t e = g.key_end(i0 + r);
        exp_shifted(avx2_, pr, e, lse[i0 + r]);
        for (int64_t j = e; j < n; ++j) pr[j] = T(0);
      }
      gemm('T', 'N', n, g.dv, blk.rows, T(1), p, n, do_blk, g.dv, T(1), dv, g.dv);  // dV += P^T dO
      gemm('N', 'T', blk.rows, n, g.dv, T(1), do_blk, g.dv, v, g.dv, T(0), dp, n);  // dP = dO V^T
      for (int64_t r = 0; r < blk.rows; ++r) {
        const T* dor = do_blk + r * g.dv;
        const T* orow = o + (i0 + r) * g.dv;
        T delta = 0;
        for (int64_t c = 0; c < g.dv; ++c) delta += dor[c] * orow[c];
        T* dpr = dp + r * n;
        const T* pr = p + r * n;
        for (int64_t j = 0; j < n; ++j) dpr[j] = scale * pr[j] * (dpr[j] - delta);  // dS
      }
      gemm('N', 'N', blk.rows, g.d, n, T(1), dp, n, k, g.d, T(0), dq + i0 * g.d, g.d);  // dQ
      gemm('T', 'N', n, g.d, blk.rows, T(1), dp, n, q_blk, g.d, T(1), dk, g.d);  // dK += dS^T Q
    }
  }

  int32_t dtype_;
  AttentionGeom g_;
};

}  // namespace

DLRT_CPU_KERNELS(t) {
  t.push_back({"causal_mask", check_attention, make<CausalMaskKernel>});
  t.push_back({"attention", check_attention, make<AttentionKernel>});
  t.push_back({"attention_grad", check_attention, make<AttentionGradKernel>});
}

}  // namespace dlrt::cpu::loops
