// winograd_conv.cc: 3x3 stride-1 NHWC convolutions by Winograd's minimal filtering F(4x4, 3x3)
// (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", 2015), the three passes
// of training, on AVX2 + FMA.
//
// Why: the MNIST CNN's middle layer (64 x 13x13x32 -> 11x11x64) is two thirds of a training
// step on the CPU, and oneDNN 2.6 has Winograd only for AVX-512; its AVX2 direct kernels
// already run near the FMA peak, so the only way down is fewer multiplications. F(4x4, 3x3)
// computes a 4x4 output tile from a 6x6 input tile with 36 multiplications per (ci, co) pair
// instead of 144 (4x fewer), at the price of transforms (adds) and a small loss of precision
// (relative error ~1e-6 in f32 here; the tests hold it to the conv tolerance, 1e-3).
//
// The algorithm, per tile and channel pair (6x6 "planes" p = (xi, nu), 36 of them):
//   forward          Y  = A^T [ sum_ci U(ci,co) . V(ci) ] A       U = G g G^T,  V = B^T d B
//   backward data    dd = B   [ sum_co U(ci,co) . P(co) ] B^T     P = A dY A^T
//   backward filter  dg = G^T [ sum_tiles V(ci) . P(co) ] G
// (. is element-wise.) Backward data and filter are the exact transposes of the forward
// formula, so all three passes share one tiling: 4x4 output tiles, 6x6 input tiles that
// overlap by 2; backward data adds each tile's dd into dx (the overlaps sum, padding cells are
// dropped), backward filter sums over tiles before its one output transform. The sum over
// channels (or tiles) is, for each of the 36 planes, a small matrix product:
//   forward          M[p]  (tiles, co) = V[p] (tiles, ci) x U[p]   (ci, co)
//   backward data    Q[p]  (tiles, ci) = P[p] (tiles, co) x U'[p]  (co, ci)   (U transposed)
//   backward filter  S[p]  (ci, co)   += V[p]^T (ci, tiles) x P[p] (tiles, co)
// run by one AVX2 FMA micro-kernel (6 rows x 16 columns of C in 12 registers).
//
// Data flow and threads: the filter transform U is computed once per run into the workspace
// (rows split over the threads). Then each thread takes a contiguous range of images (so
// backward data's overlapping adds never race) and walks its tiles in blocks of kBlockTiles:
// transform the block's input tiles into planes [36][tiles][C] (one cache-sized buffer), run
// the 36 matrix products into a second buffer, transform back. Backward filter keeps one S per
// thread and sums them before the output transform. Vectors run along channels (NHWC keeps 8
// channels contiguous), which is why the channel counts must be multiples of 16 (channels_fit).
//
// Workspace (floats): U or U' (36*ci*co; not for backward filter), then per thread two block
// buffers (36 planes of kBlockTiles*max(ci,co) plus one cache line each: plane_stride) and,
// for backward filter, S (36*ci*co). Nothing is allocated in run.
#include "winograd_conv.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>

namespace dlrt::cpu::wino {
namespace {

#define WINO_TARGET __attribute__((target("avx2,fma")))
#define WINO_INLINE inline __attribute__((always_inline, target("avx2,fma")))

using V8 = __m256;

constexpr int kPlanes = 36;          // 6 x 6 transformed tile
constexpr int64_t kBlockTiles = 24;  // tiles per block (4 row groups of the micro-kernel)
constexpr int64_t kAlign = 16;       // floats: workspace regions start on 64 bytes

// Floats between consecutive planes of a block buffer [36][count][c]: the planes' size plus one
// cache line. Without it the planes of a block lie a multiple of 2 or 4 KiB apart, so the 36
// vectors a transform reads or writes for one tile fall into two to four of L1's 64 sets (8
// ways each), and the transforms ran at a third of their speed.
int64_t plane_stride(int64_t count, int64_t c) { return count * c + kAlign; }

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

WINO_INLINE V8 set1(float v) { return _mm256_set1_ps(v); }
WINO_INLINE V8 load(const float* p) { return _mm256_loadu_ps(p); }
WINO_INLINE void store(float* p, V8 v) { _mm256_storeu_ps(p, v); }

// ---- the 1-D transforms (each applied along rows, then columns: transform_2d) --------------

// B^T (6x6): input tile rows -> planes.
struct InputT {
  static constexpr int kIn = 6, kOut = 6;
  WINO_INLINE static void apply(const V8* d, V8* r) {
    const V8 four = set1(4.f), five = set1(5.f), two = set1(2.f);
    const V8 t0 = _mm256_fnmadd_ps(four, d[2], d[4]);  // d4 - 4 d2
    const V8 t1 = _mm256_fnmadd_ps(four, d[1], d[3]);  // d3 - 4 d1
    const V8 t2 = _mm256_sub_ps(d[4], d[2]);
    const V8 t3 = _mm256_mul_ps(two, _mm256_sub_ps(d[3], d[1]));
    r[0] = _mm256_fmadd_ps(four, d[0], _mm256_fnmadd_ps(five, d[2], d[4]));
    r[1] = _mm256_add_ps(t0, t1);
    r[2] = _mm256_sub_ps(t0, t1);
    r[3] = _mm256_add_ps(t2, t3);
    r[4] = _mm256_sub_ps(t2, t3);
    r[5] = _mm256_fmadd_ps(four, d[1], _mm256_fnmadd_ps(five, d[3], d[5]));
  }
};

// A^T (4x6): planes -> output tile rows.
struct OutputT {
  static constexpr int kIn = 6, kOut = 4;
  WINO_INLINE static void apply(const V8* m, V8* o) {
    const V8 a = _mm256_add_ps(m[1], m[2]), b = _mm256_sub_ps(m[1], m[2]);
    const V8 c = _mm256_add_ps(m[3], m[4]), e = _mm256_sub_ps(m[3], m[4]);
    o[0] = _mm256_add_ps(_mm256_add_ps(m[0], a), c);
    o[1] = _mm256_fmadd_ps(set1(2.f), e, b);
    o[2] = _mm256_fmadd_ps(set1(4.f), c, a);
    o[3] = _mm256_add_ps(_mm256_fmadd_ps(set1(8.f), e, b), m[5]);
  }
};

// G (6x3): filter taps -> planes.
struct FilterT {
  static constexpr int kIn = 3, kOut = 6;
  WINO_INLINE static void apply(const V8* g, V8* u) {
    const V8 s = _mm256_add_ps(g[0], g[2]);
    const V8 q = _mm256_fmadd_ps(set1(1.f / 24), g[0], _mm256_mul_ps(set1(1.f / 6), g[2]));
    const V8 h = _mm256_mul_ps(set1(1.f / 12), g[1]);
    u[0] = _mm256_mul_ps(set1(0.25f), g[0]);
    u[1] = _mm256_mul_ps(set1(-1.f / 6), _mm256_add_ps(s, g[1]));
    u[2] = _mm256_mul_ps(set1(-1.f / 6), _mm256_sub_ps(s, g[1]));
    u[3] = _mm256_add_ps(q, h);
    u[4] = _mm256_sub_ps(q, h);
    u[5] = g[2];
  }
};

// A (6x4): output-gradient tile rows -> planes (the transpose of OutputT).
struct OutGradT {
  static constexpr int kIn = 4, kOut = 6;
  WINO_INLINE static void apply(const V8* y, V8* p) {
    const V8 s02 = _mm256_add_ps(y[0], y[2]), s13 = _mm256_add_ps(y[1], y[3]);
    const V8 t = _mm256_fmadd_ps(set1(4.f), y[2], y[0]);
    const V8 u = _mm256_fmadd_ps(set1(8.f), y[3], _mm256_add_ps(y[1], y[1]));
    p[0] = y[0];
    p[1] = _mm256_add_ps(s02, s13);
    p[2] = _mm256_sub_ps(s02, s13);
    p[3] = _mm256_add_ps(t, u);
    p[4] = _mm256_sub_ps(t, u);
    p[5] = y[3];
  }
};

// B (6x6): planes -> input-gradient tile rows (the transpose of InputT).
struct InGradT {
  static constexpr int kIn = 6, kOut = 6;
  WINO_INLINE static void apply(const V8* q, V8* x) {
    const V8 s12 = _mm256_add_ps(q[1], q[2]), d12 = _mm256_sub_ps(q[1], q[2]);
    const V8 s34 = _mm256_add_ps(q[3], q[4]), d34 = _mm256_sub_ps(q[3], q[4]);
    x[0] = _mm256_mul_ps(set1(4.f), q[0]);
    // -4 q1 + 4 q2 - 2 q3 + 2 q4 + 4 q5
    x[1] = _mm256_fmadd_ps(set1(4.f), _mm256_sub_ps(q[5], d12), _mm256_mul_ps(set1(-2.f), d34));
    // -5 q0 - 4 (q1 + q2) - (q3 + q4)
    x[2] = _mm256_fnmadd_ps(
        set1(5.f), q[0], _mm256_fnmadd_ps(set1(4.f), s12, _mm256_sub_ps(_mm256_setzero_ps(), s34)));
    // (q1 - q2) + 2 (q3 - q4) - 5 q5
    x[3] = _mm256_fnmadd_ps(set1(5.f), q[5], _mm256_fmadd_ps(set1(2.f), d34, d12));
    x[4] = _mm256_add_ps(_mm256_add_ps(q[0], s12), s34);
    x[5] = q[5];
  }
};

// G^T (3x6): planes -> filter-gradient taps (the transpose of FilterT).
struct FilterGradT {
  static constexpr int kIn = 6, kOut = 3;
  WINO_INLINE static void apply(const V8* s, V8* w) {
    const V8 s12 = _mm256_add_ps(s[1], s[2]), d21 = _mm256_sub_ps(s[2], s[1]);
    const V8 s34 = _mm256_add_ps(s[3], s[4]), d34 = _mm256_sub_ps(s[3], s[4]);
    const V8 sixth = set1(1.f / 6);
    w[0] =
        _mm256_fmadd_ps(set1(0.25f), s[0],
                        _mm256_fmadd_ps(set1(1.f / 24), s34, _mm256_mul_ps(set1(-1.f / 6), s12)));
    w[1] = _mm256_fmadd_ps(sixth, d21, _mm256_mul_ps(set1(1.f / 12), d34));
    w[2] = _mm256_add_ps(_mm256_mul_ps(sixth, _mm256_sub_ps(s34, s12)), s[5]);
  }
};

// out = T in T^T for the 1-D transform T: T along each column, then along each row. Every
// loop here and below that indexes a tile's vectors is unrolled completely (GCC's default
// stops at 16 iterations, and a rolled loop over 36 planes kept the tile in memory and cost
// more than the matrix products), so a tile lives in registers and their spill slots.
template <typename T>
WINO_INLINE void transform_2d(const V8 (&in)[T::kIn][T::kIn], V8 (&out)[T::kOut][T::kOut]) {
  V8 tmp[T::kOut][T::kIn];
#pragma GCC unroll 6
  for (int j = 0; j < T::kIn; ++j) {
    V8 col[T::kIn], r[T::kOut];
#pragma GCC unroll 6
    for (int i = 0; i < T::kIn; ++i) col[i] = in[i][j];
    T::apply(col, r);
#pragma GCC unroll 6
    for (int i = 0; i < T::kOut; ++i) tmp[i][j] = r[i];
  }
#pragma GCC unroll 6
  for (int i = 0; i < T::kOut; ++i) T::apply(tmp[i], out[i]);
}

// A tile's 36 planes (8 channels each) from / to memory, plane (i, j) at (6i + j) * stride.
WINO_INLINE void load_planes(const float* src, int64_t stride, V8 (&m)[6][6]) {
#pragma GCC unroll 6
  for (int i = 0; i < 6; ++i)
#pragma GCC unroll 6
    for (int j = 0; j < 6; ++j) m[i][j] = load(src + (i * 6 + j) * stride);
}
WINO_INLINE void store_planes(float* dst, int64_t stride, const V8 (&m)[6][6]) {
#pragma GCC unroll 6
  for (int i = 0; i < 6; ++i)
#pragma GCC unroll 6
    for (int j = 0; j < 6; ++j) store(dst + (i * 6 + j) * stride, m[i][j]);
}

// The same out = T in T^T, streamed for the per-tile transforms: row i of `in` comes from
// src.row(i, v) (T::kIn vectors), T runs along it (tmp = in T^T), then along each column of
// tmp (out = T tmp), and column j of out goes to dst.column(j, v) (T::kOut vectors). Only tmp
// is held, so a tile's loads, arithmetic and stores interleave instead of the whole tile in
// and out of spill slots (transform_2d's shape cost the transforms a third of their speed).
template <typename T, typename Src, typename Dst>
WINO_INLINE void transform_2d_stream(const Src& src, const Dst& dst) {
  V8 tmp[T::kIn][T::kOut];
#pragma GCC unroll 6
  for (int i = 0; i < T::kIn; ++i) {
    V8 row[T::kIn];
    src.row(i, row);
    T::apply(row, tmp[i]);
  }
#pragma GCC unroll 6
  for (int j = 0; j < T::kOut; ++j) {
    V8 col[T::kIn], r[T::kOut];
#pragma GCC unroll 6
    for (int i = 0; i < T::kIn; ++i) col[i] = tmp[i][j];
    T::apply(col, r);
    dst.column(j, r);
  }
}

// Sources and sinks of transform_2d_stream.
// A tile's 36 planes, plane (i, j) at (6i + j) * stride.
struct PlanesIn {
  const float* p;
  int64_t stride;
  WINO_INLINE void row(int i, V8* v) const {
#pragma GCC unroll 6
    for (int j = 0; j < 6; ++j) v[j] = load(p + (i * 6 + j) * stride);
  }
};
struct PlanesOut {
  float* p;
  int64_t stride;
  WINO_INLINE void column(int j, const V8* v) const {
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) store(p + (i * 6 + j) * stride, v[i]);
  }
};
// An N x N window of an NHWC image (8 channels at `img`'s offset) whose top-left cell is
// (row0, col0); cells outside the h x w image read as zero.
template <int N>
struct WindowIn {
  const float* img;
  int64_t row0, col0, h, w, c_n;
  bool inside;  // the whole window lies in the image
  WINO_INLINE void row(int i, V8* v) const {
    const int64_t r = row0 + i;
    if (inside) {
      const float* line = img + (r * w + col0) * c_n;
#pragma GCC unroll 6
      for (int j = 0; j < N; ++j) v[j] = load(line + j * c_n);
      return;
    }
    const bool row_in = r >= 0 && r < h;
#pragma GCC unroll 6
    for (int j = 0; j < N; ++j) {
      const int64_t q = col0 + j;
      v[j] = row_in && q >= 0 && q < w ? load(img + (r * w + q) * c_n) : _mm256_setzero_ps();
    }
  }
};
// A 4x4 output tile at `at` (rows row_stride apart, cells c_n apart), of which the first
// rows x cols cells exist: + bias, then relu if asked, and stored.
struct OutputTile {
  float* at;
  int64_t row_stride, c_n, rows, cols;
  V8 bias;
  bool relu;
  WINO_INLINE void column(int j, const V8* v) const {
    if (j >= cols) return;
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      if (i >= rows) return;
      V8 x = _mm256_add_ps(v[i], bias);
      if (relu) x = _mm256_max_ps(x, _mm256_setzero_ps());
      store(at + i * row_stride + j * c_n, x);
    }
  }
};
// A 6x6 input-gradient tile added into an NHWC image at top-left (row0, col0); cells outside
// the h x w image (padding, overhang) are dropped.
struct InputGradTile {
  float* img;
  int64_t row0, col0, h, w, c_n;
  WINO_INLINE void column(int j, const V8* v) const {
    const int64_t q = col0 + j;
    if (q < 0 || q >= w) return;
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) {
      const int64_t r = row0 + i;
      if (r < 0 || r >= h) continue;
      float* at = img + (r * w + q) * c_n;
      store(at, _mm256_add_ps(load(at), v[i]));
    }
  }
};

// ---- the matrix products -------------------------------------------------------------------

// C (MR x 16, row stride ldc) = or += A (MR x K) x B (K x 16, row stride ldb); A's element
// (r, k) is a[r * ars + k * aks], so A may be read transposed (backward filter).
template <int MR>
WINO_INLINE void micro_kernel(int64_t k_n, const float* a, int64_t ars, int64_t aks, const float* b,
                              int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  V8 c0[MR], c1[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    c0[r] = accumulate ? load(c + r * ldc) : _mm256_setzero_ps();
    c1[r] = accumulate ? load(c + r * ldc + 8) : _mm256_setzero_ps();
  }
  for (int64_t k = 0; k < k_n; ++k) {
    const V8 b0 = load(b + k * ldb), b1 = load(b + k * ldb + 8);
    const float* ak = a + k * aks;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const V8 av = _mm256_broadcast_ss(ak + r * ars);
      c0[r] = _mm256_fmadd_ps(av, b0, c0[r]);
      c1[r] = _mm256_fmadd_ps(av, b1, c1[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    store(c + r * ldc, c0[r]);
    store(c + r * ldc + 8, c1[r]);
  }
}

// C (M x N) = or += A (M x K) x B (K x N); N a multiple of 16.
WINO_TARGET void gemm(int64_t m_n, int64_t n_n, int64_t k_n, const float* a, int64_t ars,
                      int64_t aks, const float* b, int64_t ldb, float* c, int64_t ldc,
                      bool accumulate) {
  for (int64_t j = 0; j < n_n; j += 16) {
    for (int64_t i = 0; i < m_n; i += 6) {
      const float* ai = a + i * ars;
      const float* bj = b + j;
      float* cij = c + i * ldc + j;
      switch (std::min<int64_t>(6, m_n - i)) {
        case 6:
          micro_kernel<6>(k_n, ai, ars, aks, bj, ldb, cij, ldc, accumulate);
          break;
        case 5:
          micro_kernel<5>(k_n, ai, ars, aks, bj, ldb, cij, ldc, accumulate);
          break;
        case 4:
          micro_kernel<4>(k_n, ai, ars, aks, bj, ldb, cij, ldc, accumulate);
          break;
        case 3:
          micro_kernel<3>(k_n, ai, ars, aks, bj, ldb, cij, ldc, accumulate);
          break;
        case 2:
          micro_kernel<2>(k_n, ai, ars, aks, bj, ldb, cij, ldc, accumulate);
          break;
        default:
          micro_kernel<1>(k_n, ai, ars, aks, bj, ldb, cij, ldc, accumulate);
          break;
      }
    }
  }
}

// ---- the kernel ----------------------------------------------------------------------------

class WinogradConv : public Kernel {
 public:
  WinogradConv(const dlrt_plugin& p, const Geometry& g, Pass pass, bool bias, bool relu)
      : g_(g), pass_(pass), bias_(bias), relu_(relu), threads_(std::max(p.threads, 1)) {
    tiles_h_ = (g.oh + 3) / 4;
    tiles_w_ = (g.ow + 3) / 4;
    tiles_per_image_ = tiles_h_ * tiles_w_;
    u_floats_ = round_up(kPlanes * g.ci * g.co, kAlign);
    block_floats_ = kPlanes * plane_stride(kBlockTiles, std::max(g.ci, g.co));
    s_floats_ = pass == Pass::backward_filter ? u_floats_ : 0;
  }

  size_t workspace_bytes() const override {
    const int64_t per_thread = 2 * block_floats_ + s_floats_;
    const int64_t shared = pass_ == Pass::backward_filter ? 0 : u_floats_;
    return static_cast<size_t>(shared + threads_ * per_thread) * sizeof(float);
  }

  void run(dnnl::stream&, const dlrt_kernel_args& args) override {
    float* ws = static_cast<float*>(args.workspace);
    const int nt = static_cast<int>(std::min<int64_t>(threads_, g_.n));
    switch (pass_) {
      case Pass::forward:
        forward(static_cast<const float*>(args.inputs[0]),
                static_cast<const float*>(args.inputs[1]),
                bias_ ? static_cast<const float*>(args.inputs[2]) : nullptr,
                static_cast<float*>(args.outputs[0]), ws, nt);
        break;
      case Pass::backward_data:
        backward_data(static_cast<const float*>(args.inputs[0]),
                      static_cast<const float*>(args.inputs[1]),
                      static_cast<float*>(args.outputs[0]), ws, nt);
        break;
      case Pass::backward_filter:
        backward_filter(static_cast<const float*>(args.inputs[0]),
                        static_cast<const float*>(args.inputs[1]),
                        static_cast<float*>(args.outputs[0]), ws, nt);
        break;
    }
  }

 private:
  // This thread's tiles: those of images [n*tid/nth, n*(tid+1)/nth), as global tile indices
  // (image-major, then tile row, then tile column).
  void thread_tiles(int tid, int nth, int64_t* begin, int64_t* end) const {
    *begin = g_.n * tid / nth * tiles_per_image_;
    *end = g_.n * (tid + 1) / nth * tiles_per_image_;
  }
  float* thread_buffers(float* ws, int tid) const {
    const int64_t shared = pass_ == Pass::backward_filter ? 0 : u_floats_;
    return ws + shared + tid * (2 * block_floats_ + s_floats_);
  }
  void tile_origin(int64_t t, int64_t* n, int64_t* row, int64_t* col) const {
    *n = t / tiles_per_image_;
    const int64_t r = t % tiles_per_image_;
    *row = r / tiles_w_ * 4;
    *col = r % tiles_w_ * 4;
  }

  WINO_TARGET void forward(const float* x, const float* w, const float* b, float* y, float* ws,
                           int nt) const {
    float* u = ws;
    const int64_t ci = g_.ci, co = g_.co;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
#pragma omp for schedule(static)
      for (int64_t i = 0; i < ci; ++i) filter_row(w, i, u);
      const int tid = omp_get_thread_num(), nth = omp_get_num_threads();
      float* planes = thread_buffers(ws, tid);
      float* products = planes + block_floats_;
      int64_t t_begin = 0, t_end = 0;
      thread_tiles(tid, nth, &t_begin, &t_end);
      for (int64_t t0 = t_begin; t0 < t_end; t0 += kBlockTiles) {
        const int64_t count = std::min(kBlockTiles, t_end - t0);
        input_tiles(x, t0, count, planes);
        for (int p = 0; p < kPlanes; ++p)
          gemm(count, co, ci, planes + p * plane_stride(count, ci), ci, 1, u + p * ci * co, co,
               products + p * plane_stride(count, co), co, false);
        output_tiles(products, t0, count, b, y);
      }
    }
  }

  WINO_TARGET void backward_data(const float* dy, const float* w, float* dx, float* ws,
                                 int nt) const {
    float* ut = ws;
    const int64_t ci = g_.ci, co = g_.co;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
#pragma omp for schedule(static)
      for (int64_t o = 0; o < co; ++o) filter_row_transposed(w, o, ut);
      const int tid = omp_get_thread_num(), nth = omp_get_num_threads();
      float* planes = thread_buffers(ws, tid);
      float* products = planes + block_floats_;
      int64_t t_begin = 0, t_end = 0;
      thread_tiles(tid, nth, &t_begin, &t_end);
      const int64_t image = g_.h * g_.w * ci;
      const int64_t n0 = t_begin / tiles_per_image_, n1 = t_end / tiles_per_image_;
      std::memset(dx + n0 * image, 0, static_cast<size_t>((n1 - n0) * image) * sizeof(float));
      for (int64_t t0 = t_begin; t0 < t_end; t0 += kBlockTiles) {
        const int64_t count = std::min(kBlockTiles, t_end - t0);
        output_grad_tiles(dy, t0, count, planes);
        for (int p = 0; p < kPlanes; ++p)
          gemm(count, ci, co, planes + p * plane_stride(count, co), co, 1, ut + p * co * ci, ci,
               products + p * plane_stride(count, ci), ci, false);
        input_grad_tiles(products, t0, count, dx);
      }
    }
  }

  WINO_TARGET void backward_filter(const float* x, const float* dy, float* dw, float* ws,
                                   int nt) const {
    const int64_t ci = g_.ci, co = g_.co;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
      const int tid = omp_get_thread_num(), nth = omp_get_num_threads();
      float* planes = thread_buffers(ws, tid);
      float* grads = planes + block_floats_;
      float* s = grads + block_floats_;
      std::memset(s, 0, static_cast<size_t>(kPlanes * ci * co) * sizeof(float));
      int64_t t_begin = 0, t_end = 0;
      thread_tiles(tid, nth, &t_begin, &t_end);
      for (int64_t t0 = t_begin; t0 < t_end; t0 += kBlockTiles) {
        const int64_t count = std::min(kBlockTiles, t_end - t0);
        input_tiles(x, t0, count, planes);
        output_grad_tiles(dy, t0, count, grads);
        // S[p] (ci, co) += V[p]^T (ci, tiles) x P[p] (tiles, co): A = V read transposed.
        for (int p = 0; p < kPlanes; ++p)
          gemm(ci, co, count, planes + p * plane_stride(count, ci), 1, ci,
               grads + p * plane_stride(count, co), co, s + p * ci * co, co, true);
      }
#pragma omp barrier
#pragma omp for schedule(static)
      for (int64_t i = 0; i < ci; ++i) filter_grad_row(ws, nth, i, dw);
    }
  }

  // U[p][i][:] for input channel i: G g G^T of every filter w[:, :, i, o].
  WINO_TARGET void filter_row(const float* w, int64_t i, float* u) const {
    const int64_t ci = g_.ci, co = g_.co;
    for (int64_t o = 0; o < co; o += 8) {
      V8 taps[3][3], planes[6][6];
#pragma GCC unroll 6
      for (int kh = 0; kh < 3; ++kh)
#pragma GCC unroll 6
        for (int kw = 0; kw < 3; ++kw) taps[kh][kw] = load(w + ((kh * 3 + kw) * ci + i) * co + o);
      transform_2d<FilterT>(taps, planes);
      store_planes(u + i * co + o, ci * co, planes);
    }
  }

  // U'[p][o][:] (U transposed) for output channel o: the taps of 8 input channels are 8 floats
  // co apart in HWIO, so they are gathered.
  WINO_TARGET void filter_row_transposed(const float* w, int64_t o, float* ut) const {
    const int64_t ci = g_.ci, co = g_.co;
    const __m256i lanes = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                             _mm256_set1_epi32(static_cast<int>(co)));
    for (int64_t i = 0; i < ci; i += 8) {
      V8 taps[3][3], planes[6][6];
#pragma GCC unroll 6
      for (int kh = 0; kh < 3; ++kh)
#pragma GCC unroll 6
        for (int kw = 0; kw < 3; ++kw)
          taps[kh][kw] = _mm256_i32gather_ps(w + ((kh * 3 + kw) * ci + i) * co + o, lanes, 4);
      transform_2d<FilterT>(taps, planes);
      store_planes(ut + o * ci + i, co * ci, planes);
    }
  }

  // dw[:, :, i, :] = G^T (sum over threads of S[.][i][:]) G.
  WINO_TARGET void filter_grad_row(float* ws, int nth, int64_t i, float* dw) const {
    const int64_t ci = g_.ci, co = g_.co;
    for (int64_t o = 0; o < co; o += 8) {
      V8 planes[6][6], more[6][6], taps[3][3];
      load_planes(thread_buffers(ws, 0) + 2 * block_floats_ + i * co + o, ci * co, planes);
      for (int t = 1; t < nth; ++t) {
        load_planes(thread_buffers(ws, t) + 2 * block_floats_ + i * co + o, ci * co, more);
#pragma GCC unroll 6
        for (int a = 0; a < 6; ++a)
#pragma GCC unroll 6
          for (int b = 0; b < 6; ++b) planes[a][b] = _mm256_add_ps(planes[a][b], more[a][b]);
      }
      transform_2d<FilterGradT>(planes, taps);
#pragma GCC unroll 6
      for (int kh = 0; kh < 3; ++kh)
#pragma GCC unroll 6
        for (int kw = 0; kw < 3; ++kw) store(dw + ((kh * 3 + kw) * ci + i) * co + o, taps[kh][kw]);
    }
  }

  // Tiles [t0, t0+count) of x -> planes [36][count][ci]: B^T d B of each 6x6 input tile
  // (zeros where it leaves the image: padding, or the last tiles' overhang).
  WINO_TARGET void input_tiles(const float* x, int64_t t0, int64_t count, float* out) const {
    const int64_t c_n = g_.ci, plane = plane_stride(count, c_n);
    for (int64_t k = 0; k < count; ++k) {
      int64_t n = 0, orow = 0, ocol = 0;
      tile_origin(t0 + k, &n, &orow, &ocol);
      const int64_t row0 = orow - g_.pad_h, col0 = ocol - g_.pad_w;
      const bool inside = row0 >= 0 && col0 >= 0 && row0 + 6 <= g_.h && col0 + 6 <= g_.w;
      const float* img = x + n * g_.h * g_.w * c_n;
      for (int64_t c = 0; c < c_n; c += 8)
        transform_2d_stream<InputT>(WindowIn<6>{img + c, row0, col0, g_.h, g_.w, c_n, inside},
                                    PlanesOut{out + k * c_n + c, plane});
    }
  }

  // Tiles [t0, t0+count) of dy -> planes [36][count][co]: A dY A^T of each 4x4 output tile
  // (zeros past the last output row/column).
  WINO_TARGET void output_grad_tiles(const float* dy, int64_t t0, int64_t count, float* out) const {
    const int64_t c_n = g_.co, plane = plane_stride(count, c_n);
    for (int64_t k = 0; k < count; ++k) {
      int64_t n = 0, row0 = 0, col0 = 0;
      tile_origin(t0 + k, &n, &row0, &col0);
      const float* img = dy + n * g_.oh * g_.ow * c_n;
      const bool inside = row0 + 4 <= g_.oh && col0 + 4 <= g_.ow;
      for (int64_t c = 0; c < c_n; c += 8)
        transform_2d_stream<OutGradT>(WindowIn<4>{img + c, row0, col0, g_.oh, g_.ow, c_n, inside},
                                      PlanesOut{out + k * c_n + c, plane});
    }
  }

  // Products [36][count][co] -> y: A^T M A of each tile, + bias, relu; cells past the last
  // output row/column are dropped.
  WINO_TARGET void output_tiles(const float* in, int64_t t0, int64_t count, const float* b,
                                float* y) const {
    const int64_t c_n = g_.co, plane = plane_stride(count, c_n);
    for (int64_t k = 0; k < count; ++k) {
      int64_t n = 0, row0 = 0, col0 = 0;
      tile_origin(t0 + k, &n, &row0, &col0);
      float* img = y + n * g_.oh * g_.ow * c_n;
      const int64_t rows = std::min<int64_t>(4, g_.oh - row0),
                    cols = std::min<int64_t>(4, g_.ow - col0);
      for (int64_t c = 0; c < c_n; c += 8) {
        const V8 bias = b != nullptr ? load(b + c) : _mm256_setzero_ps();
        transform_2d_stream<OutputT>(PlanesIn{in + k * c_n + c, plane},
                                     OutputTile{img + (row0 * g_.ow + col0) * c_n + c, g_.ow * c_n,
                                                c_n, rows, cols, bias, relu_});
      }
    }
  }

  // Products [36][count][ci] -> dx: B Q B^T of each tile added into dx (overlapping tiles sum;
  // cells in the padding are dropped).
  WINO_TARGET void input_grad_tiles(const float* in, int64_t t0, int64_t count, float* dx) const {
    const int64_t c_n = g_.ci, plane = plane_stride(count, c_n);
    for (int64_t k = 0; k < count; ++k) {
      int64_t n = 0, orow = 0, ocol = 0;
      tile_origin(t0 + k, &n, &orow, &ocol);
      const int64_t row0 = orow - g_.pad_h, col0 = ocol - g_.pad_w;
      float* img = dx + n * g_.h * g_.w * c_n;
      for (int64_t c = 0; c < c_n; c += 8)
        transform_2d_stream<InGradT>(PlanesIn{in + k * c_n + c, plane},
                                     InputGradTile{img + c, row0, col0, g_.h, g_.w, c_n});
    }
  }

  Geometry g_;
  Pass pass_;
  bool bias_, relu_;
  int threads_;
  int64_t tiles_h_ = 0, tiles_w_ = 0, tiles_per_image_ = 0;
  int64_t u_floats_ = 0, block_floats_ = 0, s_floats_ = 0;
};

}  // namespace

bool cpu_supported(const dlrt_plugin& p) { return p.avx2 && __builtin_cpu_supports("fma"); }

bool channels_fit(int64_t ci, int64_t co) {
  return ci > 0 && co > 0 && ci % 16 == 0 && co % 16 == 0;
}

bool worth_it(const Geometry& g, Pass pass, bool onednn_avx512) {
  const int64_t tiles_per_image = ((g.oh + 3) / 4) * ((g.ow + 3) / 4);
  if (onednn_avx512 && pass == Pass::forward) return false;
  if (onednn_avx512 && pass == Pass::backward_data && tiles_per_image < kMinTilesPerImageAvx512)
    return false;
  const int64_t tiles = g.n * tiles_per_image;
  const int64_t direct = 18 * g.n * g.oh * g.ow;
  return direct > 72 * tiles + kTransformFlopsPerPair;
}

std::unique_ptr<Kernel> make_kernel(const dlrt_plugin& p, const Geometry& g, Pass pass, bool bias,
                                    bool relu) {
  return std::make_unique<WinogradConv>(p, g, pass, bias, relu);
}

}  // namespace dlrt::cpu::wino
