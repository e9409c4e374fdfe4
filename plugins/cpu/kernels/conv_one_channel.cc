// conv_one_channel.cc: convolutions of one-channel images (conv_one_channel.hpp), forward and
// filter gradient, f32 or bf16 storage, in one vector body built for AVX-512, AVX2 + FMA and
// baseline x86-64.
//
// Why not oneDNN: with one input channel a convolution is kh*kw multiply-adds per output value,
// so its time is mostly the output's (forward) or dy's (filter gradient) trip through memory.
// oneDNN 2.6's bf16 kernels fit it badly: vdpbf16ps multiplies pairs of input channels, so one
// channel fills half of each pair, at half the f32 FMA's flops on the 2-core Xeon measured, and
// there is no f32-input, bf16-output convolution to use instead (oneDNN: "could not create a
// primitive descriptor"). Mixed precision's conv1 ran oneDNN's bf16 forward at 474 us and its
// filter gradient f32 between conversion passes over dy. Here both read and write their images
// in the storage type and compute in f32 (docs/benchmarks.md, "Kernel choices": forward 138 us
// in f32 against oneDNN's 221, 220 in bf16; 185 since bf16 cells are stored with AVX512-BF16's
// conversion where the CPU has it).
//
// How. Forward: each thread takes a range of output rows (n, oh); per row, per block of L
// output channels (one vector), every output cell sums its in-bounds taps: acc = b + sum
// x[ih, iw] * w[tap] (x broadcast, one FMA per tap), then relu, then one store (rounded to
// bf16 where the storage is). A K x K window at unit stride (K = 3: the common first layer)
// takes a path with the taps fixed at compile time: the block's filter vectors stay in
// registers and kCells cells are summed at once (independent FMA chains); cells whose window
// leaves the image (SAME padding) take the general loop. Filter gradient: per row and block,
// kh*kw accumulators sum x[tap] * dy over the row's cells and are added into the thread's
// partial dw; the partials are summed in thread order at the end, so the result depends on the
// thread count only, not on timing. bf16 images are widened once per image into the thread's
// scratch (ImageF32), so the taps' broadcasts read floats.
//
// Bits: the three builds differ in lane count and the portable one has no FMA (this file is
// compiled with -ffp-contract=fast so that the others fuse), so results differ between ISAs
// in the last bits, as oneDNN's do; tests compare with the reference at the conv tolerance,
// and bf16 with the same build's f32 result rounded once, bit for bit. Scratch (f32 copies of
// a bf16 filter and bias, a widened image and partial sums per thread) is allocated when the
// kernel is made; a run allocates nothing.
#include "conv_one_channel.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "narrow_float.hpp"

namespace dlrt::cpu::conv1ch {
namespace {

#define C1_INLINE inline __attribute__((always_inline))
#define C1_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")))
#define C1_AVX2 __attribute__((target("avx2,fma")))

// Vectors of 16, 8 and 4 floats (GCC vector extensions), with the matching 32-bit and 16-bit
// lane types.
typedef float F16v __attribute__((vector_size(64)));
typedef uint32_t U16v __attribute__((vector_size(64)));
typedef uint16_t H16v __attribute__((vector_size(32)));
typedef float F8v __attribute__((vector_size(32)));
typedef uint32_t U8v __attribute__((vector_size(32)));
typedef uint16_t H8v __attribute__((vector_size(16)));
typedef float F4v __attribute__((vector_size(16)));
typedef uint32_t U4v __attribute__((vector_size(16)));
typedef uint16_t H4v __attribute__((vector_size(8)));
template <typename V>
struct Lanes;
template <>
struct Lanes<F16v> {
  using U = U16v;
  using H = H16v;
  static constexpr int64_t kN = 16;
};
template <>
struct Lanes<F8v> {
  using U = U8v;
  using H = H8v;
  static constexpr int64_t kN = 8;
};
template <>
struct Lanes<F4v> {
  using U = U4v;
  using H = H4v;
  static constexpr int64_t kN = 4;
};

template <typename V>
C1_INLINE V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
// bf16 lanes widened: the bits become the top half of the float (exact).
template <typename V>
C1_INLINE V load(const uint16_t* p) {
  typename Lanes<V>::H h;
  std::memcpy(&h, p, sizeof(h));
  return reinterpret_cast<V>(__builtin_convertvector(h, typename Lanes<V>::U) << 16);
}
template <typename V>
C1_INLINE void store(float* p, V v) {
  std::memcpy(p, &v, sizeof(V));
}
// Rounded to bf16: to nearest, ties to even, a NaN kept a quiet NaN (plugin::float_to_bf16's
// bits, lane by lane).
template <typename V>
C1_INLINE typename Lanes<V>::H round_bf16(V v) {
  using U = typename Lanes<V>::U;
  const U u = reinterpret_cast<U>(v), high = u >> 16;
  const U nan = reinterpret_cast<U>(v != v);
  const U r = (((u + 0x7fffu + (high & 1u)) >> 16) & ~nan) | ((high | 0x40u) & nan);
  return __builtin_convertvector(r, typename Lanes<V>::H);
}
template <typename V>
C1_INLINE void store(uint16_t* p, V v) {
  const typename Lanes<V>::H h = round_bf16(v);
  std::memcpy(p, &h, sizeof(h));
}

template <typename V>
C1_INLINE V relu(V v) {
  return v > V{} ? v : V{};
}

// An output cell: act(v) stored. After relu no lane is NaN (v > 0 fails for NaN, giving 0), so
// the bf16 rounding needs no NaN lanes kept: a third fewer operations in a pass whose stores'
// conversion outweighed its multiply-adds.
template <bool kRelu, typename V>
C1_INLINE void store_act(float* p, V v) {
  store(p, kRelu ? relu(v) : v);
}
template <bool kRelu, typename V>
C1_INLINE void store_act(uint16_t* p, V v) {
  if constexpr (kRelu) {
    using U = typename Lanes<V>::U;
    const U u = reinterpret_cast<U>(relu(v));
    const U r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const typename Lanes<V>::H h = __builtin_convertvector(r, typename Lanes<V>::H);
    std::memcpy(p, &h, sizeof(h));
  } else {
    store(p, v);
  }
}
C1_INLINE void put1(float* p, float v) { *p = v; }
C1_INLINE void put1(uint16_t* p, float v) { *p = plugin::float_to_bf16(v); }

// Whether output cell o's window along one axis lies inside the image.
C1_INLINE bool inside(const plugin::Window1D& a, int64_t o) {
  return a.input_at(o, 0) >= 0 && a.input_at(o, a.k - 1) < a.in;
}

// ---- forward ---------------------------------------------------------------------------------

// Output cells per step of the compile-time path: that many independent sums (one FMA chain
// each), enough to cover the FMA's latency; one cell at a time the chain of kh*kw dependent
// FMAs set the pace (perf: 3x slower than oneDNN's kernel).
constexpr int kCells = 8;

// The 8 cells of a group (out: the first cell's block; cells `co` apart), 16 lanes each,
// stored as bf16 with AVX512-BF16's vcvtne2ps2bf16: two cells an instruction instead of the
// integer rounding's seven operations a vector (conv1's bf16 forward, `dlbench ops`: 227 ->
// 185 us; f32 137). The instruction rounds as float_to_bf16 does but reads subnormal inputs as
// zero, so a group holding a subnormal value takes store_act. Written in inline assembly because
// this body is inlined into the AVX-512 build from a function compiled for baseline x86-64,
// which may not call AVX512-BF16 intrinsics; only kBf16Insn builds reach it (the CPU has the
// instruction: dlrt_plugin::onednn_bf16).
template <bool kRelu>
C1_INLINE void store_cells_bf16_insn(uint16_t* out, int64_t co, const F16v (&acc)[kCells]) {
  F16v v[kCells];
#pragma GCC unroll 8
  for (int c = 0; c < kCells; ++c) v[c] = kRelu ? relu(acc[c]) : acc[c];
  // Whether a lane of some cell is subnormal: vfpclassps class 0x20 of each cell, or-ed.
  // (An and-chain of masked tests for "any other class" took 233 us against these 185.)
  bool subnormal;
  asm("vfpclassps $0x20, %1, %%k1\n\t"
      "vfpclassps $0x20, %2, %%k2\n\t"
      "korw %%k2, %%k1, %%k1\n\t"
      "vfpclassps $0x20, %3, %%k2\n\t"
      "korw %%k2, %%k1, %%k1\n\t"
      "vfpclassps $0x20, %4, %%k2\n\t"
      "korw %%k2, %%k1, %%k1\n\t"
      "vfpclassps $0x20, %5, %%k2\n\t"
      "korw %%k2, %%k1, %%k1\n\t"
      "vfpclassps $0x20, %6, %%k2\n\t"
      "korw %%k2, %%k1, %%k1\n\t"
      "vfpclassps $0x20, %7, %%k2\n\t"
      "korw %%k2, %%k1, %%k1\n\t"
      "vfpclassps $0x20, %8, %%k2\n\t"
      "kortestw %%k2, %%k1"
      : "=@ccnz"(subnormal)
      : "v"(v[0]), "v"(v[1]), "v"(v[2]), "v"(v[3]), "v"(v[4]), "v"(v[5]), "v"(v[6]), "v"(v[7])
      : "k1", "k2");
  static_assert(kCells == 8, "the subnormal test above names eight cells");
  if (__builtin_expect(subnormal, 0)) {
#pragma GCC unroll 8
    for (int c = 0; c < kCells; ++c) store_act<kRelu>(out + c * co, acc[c]);
    return;
  }
#pragma GCC unroll 4
  for (int c = 0; c < kCells; c += 2) {
    F16v pair;  // bf16 of cell c in the low 32 bytes, of cell c + 1 in the high
    asm("vcvtne2ps2bf16 %2, %1, %0" : "=v"(pair) : "v"(v[c + 1]), "v"(v[c]));
    std::memcpy(out + c * co, &pair, 32);
    std::memcpy(out + (c + 1) * co, reinterpret_cast<const char*>(&pair) + 32, 32);
  }
}

// The output columns [lo, hi) whose window lies inside the image along w (the same for every
// row).
struct Inside {
  int64_t lo = 0, hi = 0;
};
Inside inside_columns(const plugin::Window1D& a) {
  Inside r{a.out, a.out};
  for (int64_t o = 0; o < a.out; ++o)
    if (inside(a, o)) {
      if (r.lo == a.out) r.lo = o;
      r.hi = o + 1;
    }
  return r;
}

// Image n of x as f32: x itself, or (bf16) widened into the thread's scratch once per image,
// so the taps' broadcasts read floats (widening each tap's value on the way cost more than
// the multiply-adds).
template <typename E>
struct ImageF32;
template <>
struct ImageF32<float> {
  const float* x;
  int64_t size;  // h * w
  float* scratch;
  C1_INLINE const float* operator()(int64_t n) { return x + n * size; }
};
template <>
struct ImageF32<uint16_t> {
  const uint16_t* x;
  int64_t size;
  float* scratch;  // size floats of this thread's
  int64_t cached = -1;
  C1_INLINE const float* operator()(int64_t n) {
    if (n != cached) {
      const uint16_t* src = x + n * size;
      for (int64_t i = 0; i < size; ++i) scratch[i] = plugin::bf16_to_float(src[i]);
      cached = n;
    }
    return scratch;
  }
};

// Output rows [r0, r1) of y = act(b + conv(x, w)); w (taps, co) and b (co) in f32. K > 0: the
// window is K x K with unit stride and dilation along w, its taps unrolled at compile time for
// the cells whose window is inside, in groups of kCells along the row, the block's K*K filter
// vectors and the kCells sums in registers. (`geom` is copied: stores through y cannot then
// alias it, so its fields stay in registers. Two channel blocks per group, for whole-line bf16
// stores, measured slower in both dtypes.)
// kBf16Insn: the AVX512-BF16 build's group stores (V = F16v, E = uint16_t).
template <typename V, typename E, bool kRelu, int K, bool kBf16Insn = false>
C1_INLINE void forward_rows(const Geometry& geom, Inside cols, ImageF32<E> image, const float* w,
                            const float* b, E* y, int64_t r0, int64_t r1) {
  constexpr int64_t L = Lanes<V>::kN;
  const Geometry g = geom;
  const int64_t co = g.y.c, kh = g.h.k, kw = g.w.k;
  const bool unit = g.w.stride == 1 && g.w.dilation == 1;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / g.y.h, oh = r % g.y.h;
    const float* img = image(n);
    E* out = y + r * g.y.w * co;
    const bool fast = K > 0 && unit && inside(g.h, oh);
    const int64_t lo = fast ? cols.lo : g.y.w, hi = fast ? cols.hi : g.y.w;
    for (int64_t cb = 0; cb < co; cb += L) {
      const V bias = b != nullptr ? load<V>(b + cb) : V{};
      int64_t ow = lo;
      if constexpr (K > 0) {
        if (fast) {
          V wv[K * K];
#pragma GCC unroll 49
          for (int t = 0; t < K * K; ++t) wv[t] = load<V>(w + t * co + cb);
          const float* lines[K];
#pragma GCC unroll 7
          for (int i = 0; i < K; ++i) lines[i] = img + g.h.input_at(oh, i) * g.x.w;
          for (; ow + kCells <= hi; ow += kCells) {
            const int64_t iw0 = g.w.input_at(ow, 0);
            V acc[kCells];
#pragma GCC unroll 8
            for (int c = 0; c < kCells; ++c) acc[c] = bias;
#pragma GCC unroll 7
            for (int i = 0; i < K; ++i) {
              const float* at = lines[i] + iw0;  // unit stride and dilation: constant offsets
#pragma GCC unroll 7
              for (int j = 0; j < K; ++j)
#pragma GCC unroll 8
                for (int c = 0; c < kCells; ++c) acc[c] += at[c + j] * wv[i * K + j];
            }
            if constexpr (kBf16Insn) {
              store_cells_bf16_insn<kRelu>(out + ow * co + cb, co, acc);
            } else {
#pragma GCC unroll 8
              for (int c = 0; c < kCells; ++c) store_act<kRelu>(out + (ow + c) * co + cb, acc[c]);
            }
          }
          // The inside cells past the last group, one at a time (the filter still in
          // registers; the general loop below took 5x as long per cell).
          for (; ow < hi; ++ow) {
            const int64_t iw0 = g.w.input_at(ow, 0);
            V acc = bias;
#pragma GCC unroll 7
            for (int i = 0; i < K; ++i)
#pragma GCC unroll 7
              for (int j = 0; j < K; ++j) acc += lines[i][iw0 + j] * wv[i * K + j];
            store_act<kRelu>(out + ow * co + cb, acc);
          }
        }
      }
      // The rest of the row: cells before lo or from hi on, and every cell of a row whose
      // window leaves the image.
      for (int64_t o = 0; o < g.y.w; ++o) {
        if (o >= lo && o < ow) continue;  // done above
        V acc = bias;
        for (int64_t i = 0; i < kh; ++i) {
          const int64_t ih = g.h.input_at(oh, i);
          if (ih < 0 || ih >= g.x.h) continue;
          const float* line = img + ih * g.x.w;
          for (int64_t j = 0; j < kw; ++j) {
            const int64_t iw = g.w.input_at(o, j);
            if (iw < 0 || iw >= g.x.w) continue;
            acc += line[iw] * load<V>(w + (i * kw + j) * co + cb);
          }
        }
        store_act<kRelu>(out + o * co + cb, acc);
      }
    }
  }
}

// ---- filter gradient -------------------------------------------------------------------------

// Rows [r0, r1) of dy added into `part` (taps, co): part[tap] += sum over the rows' cells of
// x[tap's cell] * dy[cell]. K as above (the kh*kw accumulators are independent chains already).
template <typename V, typename E, int K>
C1_INLINE void filter_rows(const Geometry& geom, Inside cols, ImageF32<E> image, const E* dy,
                           float* part, int64_t r0, int64_t r1) {
  constexpr int64_t L = Lanes<V>::kN;
  const Geometry g = geom;
  const int64_t co = g.y.c, kh = g.h.k, kw = g.w.k;
  const bool unit = g.w.stride == 1 && g.w.dilation == 1;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / g.y.h, oh = r % g.y.h;
    const float* img = image(n);
    const E* grad = dy + r * g.y.w * co;
    const bool fast = K > 0 && unit && inside(g.h, oh);
    const int64_t lo = fast ? cols.lo : g.y.w, hi = fast ? cols.hi : g.y.w;
    for (int64_t cb = 0; cb < co; cb += L) {
      if constexpr (K > 0) {
        if (fast) {
          V acc[K * K];
#pragma GCC unroll 49
          for (int t = 0; t < K * K; ++t) acc[t] = V{};
          const float* lines[K];
#pragma GCC unroll 7
          for (int i = 0; i < K; ++i) lines[i] = img + g.h.input_at(oh, i) * g.x.w;
          for (int64_t ow = lo; ow < hi; ++ow) {
            const int64_t iw0 = g.w.input_at(ow, 0);
            const V d = load<V>(grad + ow * co + cb);
#pragma GCC unroll 7
            for (int i = 0; i < K; ++i)
#pragma GCC unroll 7
              for (int j = 0; j < K; ++j) acc[i * K + j] += lines[i][iw0 + j] * d;
          }
#pragma GCC unroll 49
          for (int t = 0; t < K * K; ++t)
            store(part + t * co + cb, load<V>(part + t * co + cb) + acc[t]);
        }
      }
      for (int64_t o = 0; o < g.y.w; ++o) {
        if (o >= lo && o < hi) continue;  // done above
        const V d = load<V>(grad + o * co + cb);
        for (int64_t i = 0; i < kh; ++i) {
          const int64_t ih = g.h.input_at(oh, i);
          if (ih < 0 || ih >= g.x.h) continue;
          for (int64_t j = 0; j < kw; ++j) {
            const int64_t iw = g.w.input_at(o, j);
            if (iw < 0 || iw >= g.x.w) continue;
            float* at = part + (i * kw + j) * co + cb;
            store(at, load<V>(at) + img[ih * g.x.w + iw] * d);
          }
        }
      }
    }
  }
}

// ---- the three builds --------------------------------------------------------------------------

// avx512_bf16: the AVX-512 build with AVX512-BF16's group stores for bf16 outputs (f32 runs
// the avx512 build).
enum class Isa { avx512_bf16, avx512, avx2, base };

Isa isa_for(const dlrt_plugin& p) {
  if (p.onednn_bf16) return Isa::avx512_bf16;
  if (p.onednn_avx512) return Isa::avx512;
  if (p.avx2 && __builtin_cpu_supports("fma")) return Isa::avx2;
  return Isa::base;
}

template <typename E, bool kRelu, int K>
C1_AVX512 void forward_avx512(const Geometry& g, Inside c, ImageF32<E> x, const float* w, const float* b,
                              E* y, int64_t r0, int64_t r1) {
  forward_rows<F16v, E, kRelu, K>(g, c, x, w, b, y, r0, r1);
}
template <bool kRelu, int K>
C1_AVX512 void forward_avx512_bf16(const Geometry& g, Inside c, ImageF32<uint16_t> x,
                                   const float* w, const float* b, uint16_t* y, int64_t r0,
                                   int64_t r1) {
  forward_rows<F16v, uint16_t, kRelu, K, true>(g, c, x, w, b, y, r0, r1);
}
template <typename E, bool kRelu, int K>
C1_AVX2 void forward_avx2(const Geometry& g, Inside c, ImageF32<E> x, const float* w, const float* b,
                          E* y, int64_t r0, int64_t r1) {
  forward_rows<F8v, E, kRelu, K>(g, c, x, w, b, y, r0, r1);
}
template <typename E, bool kRelu, int K>
void forward_base(const Geometry& g, Inside c, ImageF32<E> x, const float* w, const float* b, E* y,
                  int64_t r0, int64_t r1) {
  forward_rows<F4v, E, kRelu, K>(g, c, x, w, b, y, r0, r1);
}
template <typename E, int K>
C1_AVX512 void filter_avx512(const Geometry& g, Inside c, ImageF32<E> x, const E* dy, float* part,
                             int64_t r0, int64_t r1) {
  filter_rows<F16v, E, K>(g, c, x, dy, part, r0, r1);
}
template <typename E, int K>
C1_AVX2 void filter_avx2(const Geometry& g, Inside c, ImageF32<E> x, const E* dy, float* part,
                         int64_t r0, int64_t r1) {
  filter_rows<F8v, E, K>(g, c, x, dy, part, r0, r1);
}
template <typename E, int K>
void filter_base(const Geometry& g, Inside c, ImageF32<E> x, const E* dy, float* part, int64_t r0,
                 int64_t r1) {
  filter_rows<F4v, E, K>(g, c, x, dy, part, r0, r1);
}

// Output rows per thread below which one thread does it all (a row of the reference CNN's
// conv1 is 26 x 32 values).
constexpr int64_t kMinRowsPerThread = 8;

// Calls fn(slot, r0, r1) over [0, rows) in one contiguous range per thread; slot is the
// thread's number (0 on the calling thread, or inside someone else's parallel region).
template <typename Fn>
void split_rows(int64_t rows, int threads, Fn&& fn) {
  const int nt = static_cast<int>(
      std::min<int64_t>(std::max(threads, 1), std::max<int64_t>(1, rows / kMinRowsPerThread)));
  if (nt <= 1 || omp_in_parallel()) return fn(0, int64_t{0}, rows);
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num(), k = omp_get_num_threads();
    fn(t, rows * t / k, rows * (t + 1) / k);
  }
}

// f32 copies of a bf16 operand (the filter and bias: small), or the operand itself.
const float* as_f32(const float* p, int64_t, std::vector<float>&) { return p; }
const float* as_f32(const uint16_t* p, int64_t n, std::vector<float>& copy) {
  for (int64_t i = 0; i < n; ++i) copy[static_cast<size_t>(i)] = plugin::bf16_to_float(p[i]);
  return copy.data();
}

// Thread slot's `size` floats of a per-thread scratch (null where there is none: f32).
float* scratch(std::vector<float>& v, int slot, int64_t size) {
  return v.empty() ? nullptr : v.data() + slot * size;
}

class Forward : public Kernel {
 public:
  Forward(const dlrt_plugin& p, const Geometry& g, bool bias, bool relu, bool bf16)
      : g_(g),
        cols_(inside_columns(g.w)),
        bias_(bias),
        relu_(relu),
        bf16_(bf16), isa_(isa_for(p)), threads_(std::max(1, p.threads)) {
    if (bf16) {
      w_.resize(static_cast<size_t>(g.h.k * g.w.k * g.y.c));
      b_.resize(static_cast<size_t>(g.y.c));
      images_.resize(static_cast<size_t>(threads_ * g.x.h * g.x.w));
    }
  }
  void run(dnnl::stream&, const dlrt_kernel_args& args) override {
    if (bf16_) run_as<uint16_t>(args);
    else run_as<float>(args);
  }

 private:
  template <typename E>
  void run_as(const dlrt_kernel_args& args) {
    const E* x = static_cast<const E*>(args.inputs[0]);
    const float* w = as_f32(static_cast<const E*>(args.inputs[1]), g_.h.k * g_.w.k * g_.y.c, w_);
    const float* b = bias_ ? as_f32(static_cast<const E*>(args.inputs[2]), g_.y.c, b_) : nullptr;
    E* y = static_cast<E*>(args.outputs[0]);
    const bool three = g_.h.k == 3 && g_.w.k == 3;
    const int64_t size = g_.x.h * g_.x.w;
    split_rows(g_.y.n * g_.y.h, threads_, [&](int slot, int64_t r0, int64_t r1) {
      const ImageF32<E> image{x, size, scratch(images_, slot, size)};
      if (relu_) rows<E, true>(three, image, w, b, y, r0, r1);
      else rows<E, false>(three, image, w, b, y, r0, r1);
    });
  }
  template <typename E, bool kRelu>
  void rows(bool three, ImageF32<E> x, const float* w, const float* b, E* y, int64_t r0,
            int64_t r1) const {
    switch (isa_) {
      case Isa::avx512_bf16:
        if constexpr (std::is_same_v<E, uint16_t>)
          return three ? forward_avx512_bf16<kRelu, 3>(g_, cols_, x, w, b, y, r0, r1)
                       : forward_avx512_bf16<kRelu, 0>(g_, cols_, x, w, b, y, r0, r1);
        [[fallthrough]];
      case Isa::avx512:
        return three ? forward_avx512<E, kRelu, 3>(g_, cols_, x, w, b, y, r0, r1)
                     : forward_avx512<E, kRelu, 0>(g_, cols_, x, w, b, y, r0, r1);
      case Isa::avx2:
        return three ? forward_avx2<E, kRelu, 3>(g_, cols_, x, w, b, y, r0, r1)
                     : forward_avx2<E, kRelu, 0>(g_, cols_, x, w, b, y, r0, r1);
      case Isa::base:
        return three ? forward_base<E, kRelu, 3>(g_, cols_, x, w, b, y, r0, r1)
                     : forward_base<E, kRelu, 0>(g_, cols_, x, w, b, y, r0, r1);
    }
  }

  Geometry g_;
  Inside cols_;
  bool bias_, relu_, bf16_;
  Isa isa_;
  int threads_;
  std::vector<float> w_, b_;  // bf16: f32 copies of the filter and bias
  std::vector<float> images_;  // bf16: per thread, one image of x widened
};

class FilterGrad : public Kernel {
 public:
  FilterGrad(const dlrt_plugin& p, const Geometry& g, bool bf16)
      : g_(g),
        cols_(inside_columns(g.w)),
        bf16_(bf16),
        isa_(isa_for(p)),
        threads_(std::max(1, p.threads)) {
    parts_.resize(static_cast<size_t>(threads_ * taps() * g.y.c));
    if (bf16) images_.resize(static_cast<size_t>(threads_ * g.x.h * g.x.w));
  }
  void run(dnnl::stream&, const dlrt_kernel_args& args) override {
    if (bf16_) run_as<uint16_t>(args);
    else run_as<float>(args);
  }

 private:
  int64_t taps() const { return g_.h.k * g_.w.k; }
  template <typename E>
  void run_as(const dlrt_kernel_args& args) {
    const E* x = static_cast<const E*>(args.inputs[0]);
    const E* dy = static_cast<const E*>(args.inputs[1]);
    E* dw = static_cast<E*>(args.outputs[0]);
    const int64_t size = taps() * g_.y.c;
    std::fill(parts_.begin(), parts_.end(), 0.0f);
    const bool three = g_.h.k == 3 && g_.w.k == 3;
    const int64_t image_size = g_.x.h * g_.x.w;
    split_rows(g_.y.n * g_.y.h, threads_, [&](int slot, int64_t r0, int64_t r1) {
      float* part = parts_.data() + slot * size;
      const ImageF32<E> image{x, image_size, scratch(images_, slot, image_size)};
      switch (isa_) {
        case Isa::avx512_bf16:  // the filter gradient stores no bf16 image
        case Isa::avx512:
          return three ? filter_avx512<E, 3>(g_, cols_, image, dy, part, r0, r1)
                       : filter_avx512<E, 0>(g_, cols_, image, dy, part, r0, r1);
        case Isa::avx2:
          return three ? filter_avx2<E, 3>(g_, cols_, image, dy, part, r0, r1)
                       : filter_avx2<E, 0>(g_, cols_, image, dy, part, r0, r1);
        case Isa::base:
          return three ? filter_base<E, 3>(g_, cols_, image, dy, part, r0, r1)
                       : filter_base<E, 0>(g_, cols_, image, dy, part, r0, r1);
      }
    });
    for (int64_t i = 0; i < size; ++i) {
      float total = parts_[static_cast<size_t>(i)];
      for (int t = 1; t < threads_; ++t) total += parts_[static_cast<size_t>(t * size + i)];
      put1(dw + i, total);
    }
  }

  Geometry g_;
  Inside cols_;
  bool bf16_;
  Isa isa_;
  int threads_;
  std::vector<float> parts_;   // per thread: (taps, co) partial sums
  std::vector<float> images_;  // bf16: per thread, one image of x widened
};

}  // namespace

bool fits(const Geometry& g) {
  return !g.x.nchw && g.x.c == 1 && g.y.c > 0 && g.y.c % 16 == 0 && g.h.k * g.w.k <= kMaxTaps;
}

std::unique_ptr<Kernel> make_forward(const dlrt_plugin& p, const Geometry& g, bool bias, bool relu,
                                     bool bf16) {
  return std::make_unique<Forward>(p, g, bias, relu, bf16);
}

std::unique_ptr<Kernel> make_filter_grad(const dlrt_plugin& p, const Geometry& g, bool bf16) {
  return std::make_unique<FilterGrad>(p, g, bf16);
}

}  // namespace dlrt::cpu::conv1ch
