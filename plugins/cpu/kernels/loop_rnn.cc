// loop_rnn.cc: lstm_cell and lstm_cell_grad on the cpu plugin (core/ops/infer_rnn.cc has the
// arithmetic). f32 only (the schema's f16/bf16 are declined, UNIMPLEMENTED).
//
// lstm_cell, zx (B,4H), h (B,H), c (B,H), U (H,4H) -> h' (B,H), c' (B,H), act (B,4H):
//   1. act = zx, then act += h U with oneDNN's sgemm (dnnl_sgemm, row-major, beta 1) under
//      the plugin's thread count: act holds z, so the GEMM needs no scratch buffer;
//   2. one fused pass over the rows (parallel over B) turns z into the gates in place and
//      writes c' and h': explicit vectors (loop_simd.hpp; 8 lanes on the AVX2 path, 4 on the
//      portable one) with a polynomial exp (below), so the sigmoids and tanh vectorise.
// lstm_cell_grad is the same kind of element-wise pass over (B,H) (it needs tanh(c')).
//
// exp: Cody-Waite reduction x = k ln2 + r, |r| <= ln2/2, and Cephes' degree-6 polynomial for
// e^r (about 2 ulp), the input clamped to [-87, 88] (no overflow to inf, no denormals).
// sigmoid(x) = 1/(1 + e^-x); tanh(x) = 2 sigmoid(2x) - 1, whose absolute error (about 1e-7)
// is what the conformance tolerance measures. The tail of a row (H not a multiple of the
// lanes) goes through the same vector code on a padded copy, so each element gets the same
// bits wherever it sits, and the AVX2 and portable paths agree (no FMA: loop_simd.hpp).
// The vector helpers (here and loop_simd.hpp's load/store) return F8 by value; they are
// always inlined into the AVX2 functions, so no call passes one across the ABI GCC warns of.
#pragma GCC diagnostic ignored "-Wpsabi"

#include <oneapi/dnnl/dnnl.h>

#include <cstring>

#include "../dnnl_status.hpp"
#include "loop_simd.hpp"
#include "loop_util.hpp"
#include "prim_common.hpp"

namespace dlrt::cpu::loops {
namespace {
using simd::F4;
using simd::F8;

template <typename V>
DLRT_SIMD_INLINE V vexp(V x) {
  using M = typename simd::Traits<V>::Mask;
  const V hi = V{} + 88.0f, lo = V{} - 87.0f;
  x = simd::select(x > hi, hi, x);
  x = simd::select(x < lo, lo, x);
  const V k = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(x / ln2)
  V r = x - k * 0.693359375f;
  r = r - k * -2.12194440e-4f;
  V p = V{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const M e = (__builtin_convertvector(k, M) + 127) << 23;  // 2^k
  return p * reinterpret_cast<V>(e);
}
template <typename V>
DLRT_SIMD_INLINE V vsigmoid(V x) {
  return 1.0f / (1.0f + vexp(-x));
}
template <typename V>
DLRT_SIMD_INLINE V vtanh(V x) {
  return 2.0f / (1.0f + vexp(-2.0f * x)) - 1.0f;
}

// n (<= lanes) floats at p, the rest of the vector 0.
template <typename V>
DLRT_SIMD_INLINE V load_part(const float* p, int64_t n) {
  float buf[sizeof(V) / sizeof(float)] = {};
  std::memcpy(buf, p, size_t(n) * sizeof(float));
  return simd::load<V>(buf);
}
template <typename V>
DLRT_SIMD_INLINE void store_part(float* p, V v, int64_t n) {
  float buf[sizeof(V) / sizeof(float)];
  simd::store(buf, v);
  std::memcpy(p, buf, size_t(n) * sizeof(float));
}

// Rows [b, e) of the gate pass: z (rows, 4H) becomes act in place; c (rows, H) -> c', h'.
template <typename V>
DLRT_SIMD_INLINE void gates_rows(float* z, const float* c, float* c2, float* h2, int64_t H,
                                 int64_t b, int64_t e) {
  constexpr int64_t L = simd::Traits<V>::kLanes;
  for (int64_t row = b; row < e; ++row) {
    float* zr = z + row * 4 * H;
    const int64_t o = row * H;
    for (int64_t j = 0; j < H; j += L) {
      const int64_t n = std::min<int64_t>(L, H - j);
      const V i = vsigmoid(load_part<V>(zr + j, n));
      const V f = vsigmoid(load_part<V>(zr + H + j, n));
      const V g = vtanh(load_part<V>(zr + 2 * H + j, n));
      const V og = vsigmoid(load_part<V>(zr + 3 * H + j, n));
      const V cn = f * load_part<V>(c + o + j, n) + i * g;
      store_part(zr + j, i, n);
      store_part(zr + H + j, f, n);
      store_part(zr + 2 * H + j, g, n);
      store_part(zr + 3 * H + j, og, n);
      store_part(c2 + o + j, cn, n);
      store_part(h2 + o + j, og * vtanh(cn), n);
    }
  }
}
DLRT_TARGET_AVX2 void gates_avx2(float* z, const float* c, float* c2, float* h2, int64_t H,
                                 int64_t b, int64_t e) {
  gates_rows<F8>(z, c, c2, h2, H, b, e);
}
void gates_base(float* z, const float* c, float* c2, float* h2, int64_t H, int64_t b,
                int64_t e) {
  gates_rows<F4>(z, c, c2, h2, H, b, e);
}

struct GradIo {
  const float *dh2, *dc2, *c, *c2, *act;
  float *dz, *dc;
};

// Rows [b, e) of lstm_cell_grad (infer_rnn.cc's formulas).
template <typename V>
DLRT_SIMD_INLINE void grad_rows(const GradIo& io, int64_t H, int64_t b, int64_t e) {
  constexpr int64_t L = simd::Traits<V>::kLanes;
  for (int64_t row = b; row < e; ++row) {
    const float* a = io.act + row * 4 * H;
    float* dz = io.dz + row * 4 * H;
    const int64_t o = row * H;
    for (int64_t j = 0; j < H; j += L) {
      const int64_t n = std::min<int64_t>(L, H - j);
      const V i = load_part<V>(a + j, n), f = load_part<V>(a + H + j, n);
      const V g = load_part<V>(a + 2 * H + j, n), og = load_part<V>(a + 3 * H + j, n);
      const V dh = load_part<V>(io.dh2 + o + j, n);
      const V th = vtanh(load_part<V>(io.c2 + o + j, n));
      const V dct = load_part<V>(io.dc2 + o + j, n) + dh * og * (1.0f - th * th);
      store_part(dz + j, dct * g * i * (1.0f - i), n);
      store_part(dz + H + j, dct * load_part<V>(io.c + o + j, n) * f * (1.0f - f), n);
      store_part(dz + 2 * H + j, dct * i * (1.0f - g * g), n);
      store_part(dz + 3 * H + j, dh * th * og * (1.0f - og), n);
      store_part(io.dc + o + j, dct * f, n);
    }
  }
}
DLRT_TARGET_AVX2 void grad_avx2(const GradIo& io, int64_t H, int64_t b, int64_t e) {
  grad_rows<F8>(io, H, b, e);
}
void grad_base(const GradIo& io, int64_t H, int64_t b, int64_t e) { grad_rows<F4>(io, H, b, e); }

void check_rnn(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  if (op.input(0).dtype != DLRT_F32)
    unimplemented(op, std::string("supports f32, got ") + plugin::dtype_name(op.input(0).dtype));
  if (cost == nullptr) return;
  fill_cost(op, 40, cost);
  if (op.name() == "lstm_cell") {
    const double b = double(op.input(1).dims[0]), h = double(op.input(1).dims[1]);
    cost->flops += 2.0 * b * h * 4.0 * h;  // the h U GEMM
  }
}

// Rows per chunk: enough elements (4H per row) to be worth a thread's fork and join; a
// training batch's step (B*4H of some 10^4) runs on one thread, next to its GEMM.
int64_t row_grain(int64_t H) { return std::max<int64_t>(1, kGrainCheap / (4 * H)); }

class LstmCellKernel : public LoopKernel {
 public:
  LstmCellKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), b_(op.input(1).dims[0]), h_(op.input(1).dims[1]) {}

  void execute(const dlrt_kernel_args& args) override {
    const float* zx = static_cast<const float*>(args.inputs[0]);
    const float* h = static_cast<const float*>(args.inputs[1]);
    const float* c = static_cast<const float*>(args.inputs[2]);
    const float* U = static_cast<const float*>(args.inputs[3]);
    float* h2 = static_cast<float*>(args.outputs[0]);
    float* c2 = static_cast<float*>(args.outputs[1]);
    float* z = static_cast<float*>(args.outputs[2]);
    const int64_t B = b_, H = h_, N = 4 * h_;
    std::memcpy(z, zx, size_t(B * N) * sizeof(float));
    {
      prim::ThreadScope scope(threads_);
      const dnnl_status_t s =
          dnnl_sgemm('N', 'N', B, N, H, 1.0f, h, H, U, N, 1.0f, z, N);
      if (s != dnnl_success)
        plugin::fail(to_code(s), prefix() + "lstm_cell: dnnl_sgemm (h U) failed with status " +
                                     std::to_string(int(s)));
    }
    parallel_for(B, row_grain(H), threads_, [&](int64_t b, int64_t e) {
      if (avx2_) gates_avx2(z, c, c2, h2, H, b, e);
      else gates_base(z, c, c2, h2, H, b, e);
    });
  }

 private:
  int64_t b_, h_;
};

class LstmCellGradKernel : public LoopKernel {
 public:
  LstmCellGradKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), b_(op.input(0).dims[0]), h_(op.input(0).dims[1]) {}

  void execute(const dlrt_kernel_args& args) override {
    auto in = [&](int i) { return static_cast<const float*>(args.inputs[i]); };
    const GradIo io{in(0), in(1), in(2), in(3), in(4), static_cast<float*>(args.outputs[0]),
                    static_cast<float*>(args.outputs[1])};
    const int64_t H = h_;
    parallel_for(b_, row_grain(H), threads_, [&](int64_t b, int64_t e) {
      if (avx2_) grad_avx2(io, H, b, e);
      else grad_base(io, H, b, e);
    });
  }

 private:
  int64_t b_, h_;
};

}  // namespace

DLRT_CPU_KERNELS(t) {
  t.push_back({"lstm_cell", check_rnn, make<LstmCellKernel>});
  t.push_back({"lstm_cell_grad", check_rnn, make<LstmCellGradKernel>});
}

}  // namespace dlrt::cpu::loops
