// kernel_math.hpp: the per-element arithmetic and index math of the CUDA plugin's own kernels,
// written once as `__host__ __device__` inline functions. The .cu files call them from device
// code; kernel_math_test.cc calls the very same functions on the host and compares them with
// the reference kernels (docs/ops.md as plain loops), so what a GPU computes per element is
// tested on machines without one.
//
// What it is not: launch code (grids, streams) nor op checking; those live in the .cu files
// and in op_support.hpp. Nothing here allocates or calls into std:: beyond <math.h>, so the
// same source compiles for the device.
//
// Conventions: element indices and offsets are int64_t; a "Strided" view has rank <= 8
// (DLRT_MAX_RANK) and fixed-size arrays, so it travels to a kernel by value.
#pragma once

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <initializer_list>

#include "philox.hpp"

#if defined(__CUDACC__)
#define DLRT_HD __host__ __device__ inline
#else
#define DLRT_HD inline
#endif

namespace dlrt::cuda::math {

constexpr int kMaxRank = 8;  // DLRT_MAX_RANK

// ---- index math ---------------------------------------------------------------------------

// An output of dims `dims` (row-major) reading its elements from up to two sources at per-dim
// element strides `stride[s][d]` (0 where a source is broadcast along d). Covers broadcasting
// binary ops (two sources), broadcast_to and transpose (one source with permuted strides).
struct Strided {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t stride[2][kMaxRank] = {};
};

// Offset into source `s` of output element `i`.
DLRT_HD int64_t source_offset(const Strided& v, int s, int64_t i) {
  int64_t off = 0;
  for (int d = v.rank - 1; d >= 0; --d) {
    const int64_t c = i % v.dims[d];
    i /= v.dims[d];
    off += c * v.stride[s][d];
  }
  return off;
}

// Both source offsets in one pass (binary ops).
DLRT_HD void source_offsets(const Strided& v, int64_t i, int64_t* a, int64_t* b) {
  int64_t oa = 0, ob = 0;
  for (int d = v.rank - 1; d >= 0; --d) {
    const int64_t c = i % v.dims[d];
    i /= v.dims[d];
    oa += c * v.stride[0][d];
    ob += c * v.stride[1][d];
  }
  *a = oa;
  *b = ob;
}

// A reduction seen as (kept dims) x (reduced dims): output element o = one combination of the
// kept coordinates, reduced over the `group` combinations of the reduced ones. Input offset of
// (o, g) = base(o) + within(g). Used by reduce_*, reduce_max_grad and bias_add_grad.
struct Reduction {
  int kept_rank = 0, red_rank = 0;
  int64_t kept_dims[kMaxRank] = {}, kept_strides[kMaxRank] = {};  // strides in the input
  int64_t red_dims[kMaxRank] = {}, red_strides[kMaxRank] = {};
  int64_t outputs = 1;  // product of kept dims
  int64_t group = 1;    // product of reduced dims
};

DLRT_HD int64_t reduction_base(const Reduction& r, int64_t o) {
  int64_t off = 0;
  for (int d = r.kept_rank - 1; d >= 0; --d) {
    off += (o % r.kept_dims[d]) * r.kept_strides[d];
    o /= r.kept_dims[d];
  }
  return off;
}

DLRT_HD int64_t reduction_within(const Reduction& r, int64_t g) {
  int64_t off = 0;
  for (int d = r.red_rank - 1; d >= 0; --d) {
    off += (g % r.red_dims[d]) * r.red_strides[d];
    g /= r.red_dims[d];
  }
  return off;
}

// A split reduction (reduce.cu): each output's group of `group` elements is cut into
// `splits` contiguous chunks of `chunk` elements (the last may be shorter, none is empty).
// Pass 1 gives every (output, chunk) pair its own block, which writes one partial; pass 2
// combines an output's partials in chunk order 0, 1, ..., splits-1. The plan depends only on
// the shape, so every run combines in the same order: deterministic. Splitting is what gives
// a 132-SM GPU enough blocks when there are few outputs (bias_add_grad: C outputs; a full
// reduction: one): about `target_blocks` blocks, each reducing at least `min_chunk` elements
// (fewer splits are not worth a second pass).
struct SplitPlan {
  int64_t splits = 1;
  int64_t chunk = 0;  // elements per chunk; 0 for an empty group
};

DLRT_HD SplitPlan split_plan(int64_t outputs, int64_t group, int64_t target_blocks = 1024,
                             int64_t min_chunk = 2048) {
  SplitPlan p;
  if (group <= 0 || outputs <= 0) return p;
  int64_t want = outputs >= target_blocks ? 1 : (target_blocks + outputs - 1) / outputs;
  const int64_t most = group / min_chunk;  // so every chunk holds at least min_chunk
  if (want > most) want = most;
  if (want < 1) want = 1;
  p.chunk = (group + want - 1) / want;
  p.splits = (group + p.chunk - 1) / p.chunk;  // no empty last chunk
  return p;
}

// The range [begin, end) of the group that chunk `s` reduces.
DLRT_HD int64_t split_begin(const SplitPlan& p, int64_t s) { return s * p.chunk; }
DLRT_HD int64_t split_end(const SplitPlan& p, int64_t s, int64_t group) {
  const int64_t e = (s + 1) * p.chunk;
  return e < group ? e : group;
}

// Filters are HWIO (KH,KW,Ci,Co) in dlrt; cuDNN wants KRSC (Co,KH,KW,Ci) for NHWC and KCRS
// (Co,Ci,KH,KW) for NCHW. Offset in the HWIO buffer of element (o,i,j,c).
DLRT_HD int64_t hwio_offset(int64_t kh, int64_t kw, int64_t ci, int64_t co, int64_t i, int64_t j,
                            int64_t c, int64_t o) {
  (void)kh;
  return ((i * kw + j) * ci + c) * co + o;
}
DLRT_HD int64_t krsc_offset(int64_t kh, int64_t kw, int64_t ci, int64_t i, int64_t j, int64_t c,
                            int64_t o) {
  return ((o * kh + i) * kw + j) * ci + c;
}
DLRT_HD int64_t kcrs_offset(int64_t kh, int64_t kw, int64_t ci, int64_t i, int64_t j, int64_t c,
                            int64_t o) {
  return ((o * ci + c) * kh + i) * kw + j;
}

// A 2-D pooling window over an NHWC or NCHW image: sizes, strides, and the padding before
// (top/left); padded cells are outside [0,h) x [0,w) and never read.
struct Pool2D {
  bool nchw = false;
  int64_t n = 1, h = 1, w = 1, c = 1;  // input
  int64_t oh = 1, ow = 1;              // output
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, pad_top = 0, pad_left = 0;
};
DLRT_HD int64_t image_offset(bool nchw, int64_t h, int64_t w, int64_t c, int64_t in, int64_t ih,
                             int64_t iw, int64_t ic) {
  return nchw ? ((in * c + ic) * h + ih) * w + iw : ((in * h + ih) * w + iw) * c + ic;
}
// Decomposes a flat index of an (n, h, w, c) image stored as NHWC or NCHW.
DLRT_HD void image_coords(bool nchw, int64_t h, int64_t w, int64_t c, int64_t i, int64_t* n,
                          int64_t* y, int64_t* x, int64_t* ch) {
  if (nchw) {
    *x = i % w, i /= w;
    *y = i % h, i /= h;
    *ch = i % c, *n = i / c;
  } else {
    *ch = i % c, i /= c;
    *x = i % w, i /= w;
    *y = i % h, *n = i / h;
  }
}
// Offset in x of the first maximum of output (n, oh, ow, c)'s window, rows first; a NaN is
// larger than everything (its first occurrence wins). -1 only for a window with no cell.
DLRT_HD int64_t pool_argmax(const Pool2D& g, const float* x, int64_t n, int64_t oh, int64_t ow,
                            int64_t c) {
  int64_t best = -1;
  float best_v = 0.0f;
  for (int64_t i = 0; i < g.kh; ++i) {
    const int64_t ih = oh * g.sh - g.pad_top + i;
    if (ih < 0 || ih >= g.h) continue;
    for (int64_t j = 0; j < g.kw; ++j) {
      const int64_t iw = ow * g.sw - g.pad_left + j;
      if (iw < 0 || iw >= g.w) continue;
      const int64_t k = image_offset(g.nchw, g.h, g.w, g.c, n, ih, iw, c);
      const float v = x[k];
      if (best >= 0 && best_v != best_v) return best;
      if (best < 0 || v > best_v || v != v) best = k, best_v = v;
    }
  }
  return best;
}
// Number of in-bounds cells of output (oh, ow)'s window (average pooling's divisor).
DLRT_HD int64_t pool_count(const Pool2D& g, int64_t oh, int64_t ow) {
  int64_t top = oh * g.sh - g.pad_top, left = ow * g.sw - g.pad_left;
  int64_t rows = (top + g.kh < g.h ? top + g.kh : g.h) - (top > 0 ? top : 0);
  int64_t cols = (left + g.kw < g.w ? left + g.kw : g.w) - (left > 0 ? left : 0);
  return rows * cols;
}
// The outputs whose windows cover input row/column `i` along one axis: [*lo, *hi).
DLRT_HD void covering_outputs(int64_t i, int64_t pad, int64_t k, int64_t stride, int64_t out,
                              int64_t* lo, int64_t* hi) {
  // o covers i iff o*stride - pad <= i <= o*stride - pad + k - 1
  const int64_t a = i + pad - k + 1;  // o*stride >= a
  int64_t l = a <= 0 ? 0 : (a + stride - 1) / stride;
  int64_t h = (i + pad) / stride + 1;  // o*stride <= i + pad (i + pad >= 0 always)
  *lo = l;
  *hi = h < out ? h : out;
}

// ---- element-wise ops ---------------------------------------------------------------------

enum class Binary : int { kAdd, kSub, kMul, kDiv, kMax, kMin, kPow };
enum class ActGrad : int { kRelu, kSigmoid, kTanh };
enum class Act : int { kNone, kRelu, kSigmoid, kTanh };

DLRT_HD float binary(Binary op, float a, float b) {
  switch (op) {
    case Binary::kAdd:
      return a + b;
    case Binary::kSub:
      return a - b;
    case Binary::kMul:
      return a * b;
    // maximum/minimum: a NaN operand gives NaN (a != a is a's NaN test; a NaN b falls through).
    case Binary::kMax:
      return a > b || a != a ? a : b;
    case Binary::kMin:
      return a < b || a != a ? a : b;
    case Binary::kPow:
      return powf(a, b);  // NaN for a < 0 and a non-integer b; 0 ** negative is inf
    default:
      return a / b;  // IEEE: x/0 is +-inf or NaN
  }
}

// relu_grad(dy, x): dy where x > 0; sigmoid_grad(dy, y): dy*y*(1-y); tanh_grad(dy, y): dy*(1-y^2).
DLRT_HD float act_grad(ActGrad op, float dy, float xy) {
  switch (op) {
    case ActGrad::kRelu:
      return xy > 0.0f ? dy : 0.0f;
    case ActGrad::kSigmoid:
      return dy * xy * (1.0f - xy);
    default:
      return dy * (1.0f - xy * xy);
  }
}

// leaky_relu(x): x where x > 0, else alpha*x; leaky_relu_grad(dy, x): dy where x > 0, else
// alpha*dy (PyTorch's leaky_relu and its backward; at x = 0 the slope is alpha's side).
DLRT_HD float leaky_relu(float x, float alpha) { return x > 0.0f ? x : alpha * x; }
DLRT_HD float leaky_relu_grad(float dy, float x, float alpha) { return x > 0.0f ? dy : alpha * dy; }

// ---- ops of the form y = f(x), one struct each ------------------------------------------------
// Each struct is one op: `forward(x, p)` is y, and where the op has a backward op <name>_grad
// reading x, `backward(dy, x, p)` is dx. activation.cu launches every one through a single
// template kernel and names each in one row (the op and its _grad); kernel_math_test.cc calls
// the same functions against the reference kernels. A new op of this form is a struct here,
// its row there and its case in the test.

// The attributes: elu's alpha, clip's min (lo) and max (hi), gelu's approximate == "tanh".
struct EltwiseParams {
  float alpha = 1.0f;
  float lo = -INFINITY, hi = INFINITY;
  bool tanh_form = false;
};

DLRT_HD float sigmoidf_(float x) { return 1.0f / (1.0f + expf(-x)); }
// log(1 + exp(x)) without overflow: exp(-|x|) <= 1.
DLRT_HD float softplusf_(float x) { return fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x))); }
constexpr float kSqrt2OverPi = 0.7978845608f;  // sqrt(2 / pi)
constexpr float kInvSqrt2 = 0.7071067812f;     // 1 / sqrt(2)
constexpr float kInvSqrt2Pi = 0.3989422804f;   // 1 / sqrt(2 pi)
constexpr float kGeluCubic = 0.044715f;

// neg exp log sqrt, and core/ops/infer_math.cc's ops on CUDA's libm (the same IEEE domains as
// the host's). No backward op: their gradient rules compose other ops.
struct Neg {
  DLRT_HD static float forward(float x, EltwiseParams) { return -x; }
};
struct Exp {
  DLRT_HD static float forward(float x, EltwiseParams) { return expf(x); }
};
struct Log {  // NaN for x < 0, -inf for 0 (IEEE)
  DLRT_HD static float forward(float x, EltwiseParams) { return logf(x); }
};
struct Sqrt {  // NaN for x < 0
  DLRT_HD static float forward(float x, EltwiseParams) { return sqrtf(x); }
};
struct Sin {
  DLRT_HD static float forward(float x, EltwiseParams) { return sinf(x); }
};
struct Cos {
  DLRT_HD static float forward(float x, EltwiseParams) { return cosf(x); }
};
struct Tan {
  DLRT_HD static float forward(float x, EltwiseParams) { return tanf(x); }
};
struct Asin {  // NaN outside [-1, 1]
  DLRT_HD static float forward(float x, EltwiseParams) { return asinf(x); }
};
struct Acos {
  DLRT_HD static float forward(float x, EltwiseParams) { return acosf(x); }
};
struct Atan {
  DLRT_HD static float forward(float x, EltwiseParams) { return atanf(x); }
};
struct Sinh {
  DLRT_HD static float forward(float x, EltwiseParams) { return sinhf(x); }
};
struct Cosh {
  DLRT_HD static float forward(float x, EltwiseParams) { return coshf(x); }
};
struct Asinh {
  DLRT_HD static float forward(float x, EltwiseParams) { return asinhf(x); }
};
struct Acosh {  // NaN below 1
  DLRT_HD static float forward(float x, EltwiseParams) { return acoshf(x); }
};
struct Atanh {  // +-inf at +-1, NaN beyond
  DLRT_HD static float forward(float x, EltwiseParams) { return atanhf(x); }
};
struct Erf {
  DLRT_HD static float forward(float x, EltwiseParams) { return erff(x); }
};
struct Ceil {
  DLRT_HD static float forward(float x, EltwiseParams) { return ceilf(x); }
};
struct Floor {
  DLRT_HD static float forward(float x, EltwiseParams) { return floorf(x); }
};
struct Round {  // the default rounding mode: halves to even
  DLRT_HD static float forward(float x, EltwiseParams) { return rintf(x); }
};
struct Sign {  // NaN stays NaN
  DLRT_HD static float forward(float x, EltwiseParams) {
    return x != x ? x : x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : 0.0f;
  }
};

// The activations of core/ops/infer_activation.cc and their <op>_grad(dy, x) (docs/ops.md; the
// reference kernels' plugins/reference/kernels/activation.cc in double). Kinks as PyTorch:
// abs' (0) = 0, clip passes dy on [min, max], hard_swish' is 0 below -3, (2x+3)/6 on [-3, 3],
// 1 above.
struct Elu {
  DLRT_HD static float forward(float x, EltwiseParams p) {
    return x > 0.0f ? x : p.alpha * expm1f(x);
  }
  DLRT_HD static float backward(float dy, float x, EltwiseParams p) {
    return x > 0.0f ? dy : dy * p.alpha * expf(x);
  }
};
// exact: 0.5 x (1 + erf(x / sqrt 2)); tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
struct Gelu {
  DLRT_HD static float forward(float x, EltwiseParams p) {
    if (p.tanh_form) return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
    return 0.5f * x * (1.0f + erff(x * kInvSqrt2));
  }
  DLRT_HD static float backward(float dy, float x, EltwiseParams p) {
    if (p.tanh_form) {
      const float t = tanhf(kSqrt2OverPi * (x + kGeluCubic * x * x * x));
      return dy * (0.5f * (1.0f + t) +
                   0.5f * x * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x));
    }
    // Phi(x) + x phi(x)
    return dy * (0.5f * (1.0f + erff(x * kInvSqrt2)) + x * kInvSqrt2Pi * expf(-0.5f * x * x));
  }
};
struct Silu {
  // x < -88: exp(-x) is inf, sigmoid 0, y -0 (true: ~1e-38)
  DLRT_HD static float forward(float x, EltwiseParams) { return x * sigmoidf_(x); }
  DLRT_HD static float backward(float dy, float x, EltwiseParams) {
    const float s = sigmoidf_(x);
    return dy * s * (1.0f + x * (1.0f - s));
  }
};
struct HardSwish {
  DLRT_HD static float forward(float x, EltwiseParams) {
    return x * fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f;
  }
  DLRT_HD static float backward(float dy, float x, EltwiseParams) {
    return x < -3.0f ? 0.0f : x <= 3.0f ? dy * (2.0f * x + 3.0f) / 6.0f : dy;
  }
};
struct Softplus {
  DLRT_HD static float forward(float x, EltwiseParams) { return softplusf_(x); }
  DLRT_HD static float backward(float dy, float x, EltwiseParams) { return dy * sigmoidf_(x); }
};
// x tanh(softplus(x)); dx = dy (t + x sigmoid(x) (1 - t^2)), t = tanh(softplus(x)). Far below 0
// both are ~x e^x: tiny, never an overflow (softplusf_ and sigmoidf_ stay finite).
struct Mish {
  DLRT_HD static float forward(float x, EltwiseParams) { return x * tanhf(softplusf_(x)); }
  DLRT_HD static float backward(float dy, float x, EltwiseParams) {
    const float t = tanhf(softplusf_(x));
    return dy * (t + x * sigmoidf_(x) * (1.0f - t * t));
  }
};
struct Clip {  // NaN stays NaN; min > max gives max
  DLRT_HD static float forward(float x, EltwiseParams p) {
    return x != x ? x : fminf(fmaxf(x, p.lo), p.hi);
  }
  DLRT_HD static float backward(float dy, float x, EltwiseParams p) {
    return x >= p.lo && x <= p.hi ? dy : 0.0f;
  }
};
struct Abs {
  DLRT_HD static float forward(float x, EltwiseParams) { return fabsf(x); }
  DLRT_HD static float backward(float dy, float x, EltwiseParams) {
    return x > 0.0f ? dy : x < 0.0f ? -dy : 0.0f;
  }
};
struct Square {  // no backward op: its rule composes mul/add
  DLRT_HD static float forward(float x, EltwiseParams) { return x * x; }
};
struct Rsqrt {  // NaN below 0, inf at 0; no backward op
  DLRT_HD static float forward(float x, EltwiseParams) { return 1.0f / sqrtf(x); }
};

// ---- comparisons and where ------------------------------------------------------------------
enum class Compare : int { kEq, kNe, kLt, kLe, kGt, kGe };
// 1 where the comparison holds, else 0 (IEEE: false with a NaN, except kNe).
DLRT_HD uint8_t compare(Compare op, float a, float b) {
  switch (op) {
    case Compare::kEq:
      return a == b;
    case Compare::kNe:
      return a != b;
    case Compare::kLt:
      return a < b;
    case Compare::kLe:
      return a <= b;
    case Compare::kGt:
      return a > b;
    default:
      return a >= b;
  }
}
// where: x where the cond byte is non-zero, else y.
DLRT_HD float select(uint8_t cond, float x, float y) { return cond != 0 ? x : y; }


// ---- batch normalization (batch_norm.cc: cuDNN's running-statistic convention) ----------
// cuDNN moves running statistics as running = (1-factor)*running + factor*batch, the batch
// variance unbiased by count/(count-1); dlrt's momentum (ONNX, Keras) weighs the old value:
// running = momentum*running + (1-momentum)*batch, so factor = 1 - momentum.
DLRT_HD double bn_average_factor(double momentum) { return 1.0 - momentum; }
// One running statistic after a step, as cuDNN computes it (batch_norm.cc's count-1 path,
// cudnnAddTensor / cudnnScaleTensor, is this with factor 1 - momentum and batch variance 0).
DLRT_HD float bn_running(float running, float batch, double factor) {
  return static_cast<float>((1.0 - factor) * running + factor * batch);
}
// The running variance's batch value: unbiased for count > 1; with one value per channel the
// biased variance (0) as is, where cuDNN would divide by count-1 = 0.
DLRT_HD float bn_unbiased_var(float biased, int64_t count) {
  return count > 1 ? static_cast<float>(double(biased) * double(count) / double(count - 1))
                   : biased;
}
// batch_norm_relu_grad's dy (batch_norm.cc): dy where the fused ReLU let its input through,
// scale*(x - mean)*inv_std + bias > 0, else 0 (NaN counts as cut, as the ReLU gives 0 there);
// cuDNN's batch-norm backward then takes this dy.
DLRT_HD float bn_relu_dy(float dy, float x, float scale, float bias, float mean, float inv_std) {
  return scale * (x - mean) * inv_std + bias > 0.0f ? dy : 0.0f;
}

// batch_norm_add_relu_train's tail (batch_norm.cc): y = max(0, y + residual) after cuDNN's
// forward pass wrote y = scale*xhat + bias; batch_norm_add_relu_grad's mask is act_grad(kRelu,
// dy, y), dy where y > 0.
DLRT_HD float bn_add_relu(float y, float residual) {
  const float v = y + residual;
  return v > 0.0f ? v : 0.0f;
}

// The activation of the fused ops, applied after the bias.
DLRT_HD float activate(Act act, float x) {
  switch (act) {
    case Act::kRelu:
      return x > 0.0f ? x : 0.0f;
    case Act::kSigmoid:
      return 1.0f / (1.0f + expf(-x));
    case Act::kTanh:
      return tanhf(x);
    default:
      return x;
  }
}

// The channel of element i of a tensor whose channel dim has `channels` entries and
// `inner` elements between consecutive channels (NHWC: inner = 1; NCHW: H*W).
DLRT_HD int64_t channel_of(int64_t i, int64_t channels, int64_t inner) {
  return (i / inner) % channels;
}

// ---- reductions ---------------------------------------------------------------------------

// reduce_max's combine: a NaN wins (and the first NaN stays), otherwise the larger.
DLRT_HD double max_combine(double acc, double v) {
  if (acc != acc) return acc;
  if (v != v) return v;
  return v > acc ? v : acc;
}

// ---- softmax cross-entropy, one row ---------------------------------------------------------

// loss = logsumexp(row) - row[label] with logsumexp = mx + log(sum), sum = sum(exp(row - mx));
// backprop[j] = exp(row[j] - mx)/sum - (j == label). A label outside [0,K) gives NaN.
DLRT_HD bool label_valid(int64_t label, int64_t k) { return label >= 0 && label < k; }
DLRT_HD double xent_loss(double mx, double sum, double logit_at_label) {
  return mx + log(sum) - logit_at_label;
}
DLRT_HD double xent_backprop(double logit, double mx, double sum, bool is_label) {
  return exp(logit - mx) / sum - (is_label ? 1.0 : 0.0);
}

// ---- optimizer updates (Keras), in double like the reference ---------------------------------

struct SgdStep {
  double param, velocity;
};
// v = momentum*v - lr*g; p += nesterov ? momentum*v - lr*g : v
DLRT_HD SgdStep sgd_step(double p, double g, double v, double lr, double momentum, bool nesterov) {
  SgdStep s;
  s.velocity = momentum * v - lr * g;
  s.param = p + (nesterov ? momentum * s.velocity - lr * g : s.velocity);
  return s;
}

// lr_t = lr * sqrt(1 - beta2^step) / (1 - beta1^step), step 1-based (already advanced).
DLRT_HD double adam_lr_t(double lr, double beta1, double beta2, double step) {
  return lr * sqrt(1.0 - pow(beta2, step)) / (1.0 - pow(beta1, step));
}
struct AdamStep {
  double param, m, v;
};
// m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g^2; p -= lr_t * m / (sqrt(v) + eps)
DLRT_HD AdamStep adam_step(double p, double g, double m, double v, double lr_t, double beta1,
                           double beta2, double epsilon) {
  AdamStep s;
  s.m = beta1 * m + (1.0 - beta1) * g;
  s.v = beta2 * v + (1.0 - beta2) * g * g;
  s.param = p - lr_t * s.m / (sqrt(s.v) + epsilon);
  return s;
}

// ---- random ops (plugins/common/philox.hpp's stream), formed in double like the reference ---

DLRT_HD float uniform_value(uint64_t seed, uint64_t rng_offset, uint64_t i, double lo, double hi) {
  return static_cast<float>(lo +
                            (hi - lo) * static_cast<double>(philox::uniform(seed, rng_offset, i)));
}
DLRT_HD float normal_value(uint64_t seed, uint64_t rng_offset, uint64_t i, double mean,
                           double stddev) {
  return static_cast<float>(mean + stddev * philox::normal(seed, rng_offset, i));
}
// mask = u >= rate ? keep : 0 with keep = float(1/(1-rate)); y = float(double(x)*double(mask)).
DLRT_HD float dropout_mask(uint64_t seed, uint64_t rng_offset, uint64_t i, double rate,
                           float keep) {
  return static_cast<double>(philox::uniform(seed, rng_offset, i)) >= rate ? keep : 0.0f;
}

// ---- multinomial (core/ops/infer_sampling.cc): the reference's arithmetic, per draw ---------
//
// One thread per draw (b, s) of logits (B, K): the row's max and Z = sum_j exp(x_j - max) in
// double, in id order, then the first id k whose running sum exceeds u * Z, u the Philox
// uniform of element b*S + s. Every thread of a row repeats the row's O(K) pass instead of
// sharing a parallel reduction: a sequential sum in id order is what makes the ids the same
// bits as the reference's (a tree sum would round differently and move CDF boundaries).

// A row's softmax normaliser; valid = false when the row has a NaN, a +inf or no finite
// logit (then every draw is -1).
struct SoftmaxRow {
  float max;
  double z;
  bool valid;
};
DLRT_HD SoftmaxRow softmax_row(const float* x, int64_t k) {
  SoftmaxRow r{-INFINITY, 0.0, true};
  for (int64_t j = 0; j < k; ++j) {
    if (x[j] != x[j] || x[j] == INFINITY) r.valid = false;
    if (x[j] > r.max) r.max = x[j];
  }
  if (r.max == -INFINITY) r.valid = false;
  if (!r.valid) return r;
  for (int64_t j = 0; j < k; ++j)
    r.z += exp(static_cast<double>(x[j]) - static_cast<double>(r.max));
  return r;
}
// The id of uniform u in [0, 1) under the row's CDF (-1 for an invalid row). A weight-0 id is
// never returned: the running sum must grow past u*z at the id picked.
DLRT_HD int64_t inverse_cdf(const float* x, int64_t k, const SoftmaxRow& r, double u) {
  if (!r.valid) return -1;
  const double target = u * r.z;
  double c = 0;
  for (int64_t j = 0; j < k; ++j) {
    c += exp(static_cast<double>(x[j]) - static_cast<double>(r.max));
    if (target < c) return j;
  }
  return -1;  // unreachable: the last c is z and target < z (u <= 1 - 2^-24, z >= 1)
}
// Draw s of row b of logits (B, K) with `samples` draws per row.
DLRT_HD int64_t multinomial_draw(const float* logits, int64_t k, int64_t samples, uint64_t seed,
                                 uint64_t rng_offset, int64_t b, int64_t s) {
  const float* x = logits + b * k;
  const double u = static_cast<double>(
      philox::uniform(seed, rng_offset, static_cast<uint64_t>(b * samples + s)));
  return inverse_cdf(x, k, softmax_row(x, k), u);
}

// ---- cast (every pair of f32/f64/i8..i64/u8..u64/bool), as the reference casts -------------

// dtype codes are dlrt_dtype's values (types.h), repeated so this header needs no C header.
enum : int32_t {
  kF32 = 1,
  kF64 = 4,
  kI32 = 5,
  kI64 = 6,
  kU8 = 7,
  kI8 = 8,
  kBool = 9,
  kU16 = 10,
  kU32 = 11,
  kU64 = 12,
  kI16 = 13
};

DLRT_HD bool is_float_code(int32_t d) { return d == kF32 || d == kF64; }

DLRT_HD double load_as_double(const void* p, int32_t d, int64_t i) {
  switch (d) {
    case kF32:
      return static_cast<const float*>(p)[i];
    case kF64:
      return static_cast<const double*>(p)[i];
    case kI32:
      return static_cast<const int32_t*>(p)[i];
    case kI64:
      return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case kU8:
      return static_cast<const uint8_t*>(p)[i];
    case kI8:
      return static_cast<const int8_t*>(p)[i];
    case kU16:
      return static_cast<const uint16_t*>(p)[i];
    case kI16:
      return static_cast<const int16_t*>(p)[i];
    case kU32:
      return static_cast<const uint32_t*>(p)[i];
    case kU64:
      return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    default:
      return static_cast<const uint8_t*>(p)[i] != 0 ? 1.0 : 0.0;
  }
}
// As int64, exactly, but a u64 above INT64_MAX reads as INT64_MAX (what saturating it to any
// other integer gives; cast_element takes u64 apart, store_u64).
DLRT_HD int64_t load_as_int(const void* p, int32_t d, int64_t i) {
  switch (d) {
    case kI32:
      return static_cast<const int32_t*>(p)[i];
    case kI64:
      return static_cast<const int64_t*>(p)[i];
    case kU8:
      return static_cast<const uint8_t*>(p)[i];
    case kI8:
      return static_cast<const int8_t*>(p)[i];
    case kU16:
      return static_cast<const uint16_t*>(p)[i];
    case kI16:
      return static_cast<const int16_t*>(p)[i];
    case kU32:
      return static_cast<const uint32_t*>(p)[i];
    case kU64: {
      const uint64_t v = static_cast<const uint64_t*>(p)[i];
      return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
    }
    default:
      return static_cast<const uint8_t*>(p)[i] != 0 ? 1 : 0;
  }
}
// v saturated to integer dtype d's range (u64's as far as int64 reaches).
DLRT_HD int64_t saturate(int64_t v, int32_t d) {
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  if (d == kI32) lo = INT32_MIN, hi = INT32_MAX;
  if (d == kU8) lo = 0, hi = UINT8_MAX;
  if (d == kI8) lo = INT8_MIN, hi = INT8_MAX;
  if (d == kU16) lo = 0, hi = UINT16_MAX;
  if (d == kI16) lo = INT16_MIN, hi = INT16_MAX;
  if (d == kU32) lo = 0, hi = UINT32_MAX;
  if (d == kU64) lo = 0;
  return v < lo ? lo : v > hi ? hi : v;
}
DLRT_HD void store_int(void* p, int32_t d, int64_t i, int64_t v) {
  switch (d) {
    case kF32:
      static_cast<float*>(p)[i] = static_cast<float>(v);
      break;
    case kF64:
      static_cast<double*>(p)[i] = static_cast<double>(v);
      break;
    case kI32:
      static_cast<int32_t*>(p)[i] = static_cast<int32_t>(saturate(v, d));
      break;
    case kI64:
      static_cast<int64_t*>(p)[i] = v;
      break;
    case kU8:
      static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(saturate(v, d));
      break;
    case kI8:
      static_cast<int8_t*>(p)[i] = static_cast<int8_t>(saturate(v, d));
      break;
    case kU16:
      static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(saturate(v, d));
      break;
    case kI16:
      static_cast<int16_t*>(p)[i] = static_cast<int16_t>(saturate(v, d));
      break;
    case kU32:
      static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(saturate(v, d));
      break;
    case kU64:
      static_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(saturate(v, d));
      break;
    default:
      static_cast<uint8_t*>(p)[i] = v != 0 ? 1 : 0;
  }
}
// A u64 value stored as cast stores it: to a float rounded once, to any other integer
// saturated (every other integer's maximum is at most INT64_MAX), to bool v != 0.
DLRT_HD void store_u64(void* p, int32_t d, int64_t i, uint64_t v) {
  if (d == kF32) static_cast<float*>(p)[i] = static_cast<float>(v);
  else if (d == kF64) static_cast<double*>(p)[i] = static_cast<double>(v);
  else if (d == kU64) static_cast<uint64_t*>(p)[i] = v;
  else store_int(p, d, i, v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v));
}
// float -> float rounds to nearest; float -> int truncates toward zero and saturates, NaN -> 0;
// -> bool is v != 0 (NaN gives 1).
DLRT_HD void store_double(void* p, int32_t d, int64_t i, double v) {
  if (d == kF32) {
    static_cast<float*>(p)[i] = static_cast<float>(v);
  } else if (d == kF64) {
    static_cast<double*>(p)[i] = v;
  } else if (d == kBool) {
    static_cast<uint8_t*>(p)[i] = v != 0.0 ? 1 : 0;
  } else if (d == kU64) {  // u64's top half lies beyond int64: its own bounds, 0 and 2^64
    const double t = trunc(v);
    static_cast<uint64_t*>(p)[i] = t != t || t <= 0.0          ? 0
                                   : t >= 18446744073709551616.0 ? UINT64_MAX
                                                                 : static_cast<uint64_t>(t);
  } else {
    const double t = trunc(v);
    const int64_t iv = t != t                        ? 0
                       : t >= 9223372036854775807.0  ? INT64_MAX
                       : t <= -9223372036854775808.0 ? INT64_MIN
                                                     : static_cast<int64_t>(t);
    store_int(p, d, i, iv);
  }
}
// Element i of `in` (dtype `from`) converted into element i of `out` (dtype `to`).
DLRT_HD void cast_element(const void* in, int32_t from, void* out, int32_t to, int64_t i) {
  if (from == kU64) store_u64(out, to, i, static_cast<const uint64_t*>(in)[i]);
  else if (is_float_code(from)) store_double(out, to, i, load_as_double(in, from, i));
  else store_int(out, to, i, load_as_int(in, from, i));
}

// ---- cut, join, frame: concat, split, slice, pad, pad_grad (cut_join.cu) ------------------

// concat / split as 2-D copies: the whole tensor (A..., L, B...) is `rows` = |A| rows of
// L * `unit` bytes (unit = |B| * element size); part k (A..., L_k, B...) is the same rows of
// L_k * unit bytes, starting (L_0 + ... + L_{k-1}) * unit bytes into each row.
struct PartRows {
  int64_t rows = 1;
  int64_t unit = 1;  // bytes per index along the axis
};
DLRT_HD PartRows part_rows(const int64_t* dims, int rank, int axis, int64_t element_bytes) {
  PartRows r;
  r.unit = element_bytes;
  for (int d = 0; d < axis; ++d) r.rows *= dims[d];
  for (int d = axis + 1; d < rank; ++d) r.unit *= dims[d];
  return r;
}

// slice / slice_grad: the offset in the big tensor (x, or dx) of element i of the small one
// (y, or dy): base + sum_d i_d * stride[0][d], where the view's dims are the small tensor's
// and its strides the big tensor's row-major strides times the slice's steps (negative for a
// negative step). base = sum_d begin_d * big_stride_d.
DLRT_HD int64_t slice_offset(const Strided& v, int64_t base, int64_t i) {
  return base + source_offset(v, 0, i);
}

// pad and pad_grad: x (unpadded) dims, y (padded) dims, the cells before each dim.
struct PadGeom {
  int rank = 0;
  int64_t x[kMaxRank] = {}, y[kMaxRank] = {}, before[kMaxRank] = {};
  bool reflect = false;
};

// The x index that padded index q reads in reflect mode (numpy "reflect": the edge is not
// repeated); valid while the pads are <= n - 1, which the op's checks guarantee.
DLRT_HD int64_t reflect_index(int64_t q, int64_t before, int64_t n) {
  int64_t i = q - before;
  if (i < 0) i = -i;
  if (i >= n) i = 2 * (n - 1) - i;
  return i;
}

// pad: the offset in x that y element i reads, or -1 for a constant-mode cell outside x.
DLRT_HD int64_t pad_source(const PadGeom& g, int64_t i) {
  int64_t off = 0, stride = 1;
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t q = i % g.y[d];
    i /= g.y[d];
    const int64_t k = g.reflect ? reflect_index(q, g.before[d], g.x[d]) : q - g.before[d];
    if (k < 0 || k >= g.x[d]) return -1;
    off += k * stride;
    stride *= g.x[d];
  }
  return off;
}

// The padded indices q on one dim that reflect mode maps onto x index i (1 to 3 of them: the
// cell itself, its mirror in the front pad, its mirror in the back pad); returns the count.
DLRT_HD int reflect_preimages(int64_t i, int64_t before, int64_t n, int64_t ny, int64_t* q) {
  int k = 0;
  q[k++] = i + before;
  if (i >= 1 && i <= before) q[k++] = before - i;
  const int64_t back = before + 2 * (n - 1) - i;
  if (i <= n - 2 && back < ny) q[k++] = back;
  return k;
}

// pad_grad: dx element j = the sum of the dy cells that reflect onto it (an odometer over
// each dim's preimages; deterministic, no atomics). Sums in the order of the odometer.
DLRT_HD float pad_grad_at(const PadGeom& g, const float* dy, int64_t j) {
  int64_t pre[kMaxRank][3];
  int count[kMaxRank], at[kMaxRank];
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t i = j % g.x[d];
    j /= g.x[d];
    count[d] = reflect_preimages(i, g.before[d], g.x[d], g.y[d], pre[d]);
    at[d] = 0;
  }
  float sum = 0.0f;
  for (;;) {
    int64_t off = 0;
    for (int d = 0; d < g.rank; ++d) off = off * g.y[d] + pre[d][at[d]];
    sum += dy[off];
    int d = g.rank - 1;
    while (d >= 0 && ++at[d] == count[d]) at[d--] = 0;
    if (d < 0) return sum;
  }
}

// ---- global pools (cut_join.cu) -----------------------------------------------------------

// An image of either layout; plane p = n*C + c is also element p of the pooled (N,C) tensor.
struct GlobalPool {
  bool nchw = false;
  int64_t n = 0, h = 0, w = 0, c = 0;
};

// The offset of the first max of plane p, rows first; a NaN counts as the max (the first NaN
// wins), as max_pool2d and the reference do.
DLRT_HD int64_t plane_argmax(const GlobalPool& g, const float* x, int64_t p) {
  const int64_t n = p / g.c, c = p % g.c;
  int64_t best = image_offset(g.nchw, g.h, g.w, g.c, n, 0, 0, c);
  for (int64_t ih = 0; ih < g.h; ++ih)
    for (int64_t iw = 0; iw < g.w; ++iw) {
      const int64_t k = image_offset(g.nchw, g.h, g.w, g.c, n, ih, iw, c);
      if (x[best] != x[best]) return best;
      if (x[k] > x[best] || x[k] != x[k]) best = k;
    }
  return best;
}

// The mean of plane p, summed in double (the reference's order, rows first).
DLRT_HD float plane_mean(const GlobalPool& g, const float* x, int64_t p) {
  const int64_t n = p / g.c, c = p % g.c;
  double sum = 0.0;
  for (int64_t ih = 0; ih < g.h; ++ih)
    for (int64_t iw = 0; iw < g.w; ++iw)
      sum += x[image_offset(g.nchw, g.h, g.w, g.c, n, ih, iw, c)];
  return static_cast<float>(sum / static_cast<double>(g.h * g.w));
}

// The plane (n*C + c) of image element i.
DLRT_HD int64_t plane_of(const GlobalPool& g, int64_t i) {
  int64_t n, ih, iw, c;
  image_coords(g.nchw, g.h, g.w, g.c, i, &n, &ih, &iw, &c);
  return n * g.c + c;
}

// ---- resize, resize_grad (resize.cu) ------------------------------------------------------
// The spec: core/ops/infer_resize.cc and docs/ops.md ("Decisions", resize). Per axis, output
// index o reads source coordinate c (one division of two integers, as the reference):
//   half_pixel ((2o+1)*in - out) / (2*out); align_corners o*(in-1)/(out-1) (0 for out = 1);
//   asymmetric o*in/out.
// nearest: index nearest_mode(c) clamped to [0, in-1]; bilinear: c clamped to [0, in-1],
// indices floor(c) and min(floor(c)+1, in-1) with weights 1-f and f.

enum class ResizeCoord : int { kHalfPixel, kAlignCorners, kAsymmetric };
enum class NearestRound : int { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizeAxis {
  int64_t in = 1, out = 1;
  ResizeCoord coord = ResizeCoord::kHalfPixel;
  NearestRound round = NearestRound::kRoundPreferFloor;
  bool bilinear = false;
};

// An image (x) and its resized image (y) of either layout: N, C and one axis per dim.
struct ResizeGeom {
  bool nchw = false;
  int64_t n = 0, c = 0;
  ResizeAxis h, w;
};

// The two input indices output index o reads along an axis and their weights (nearest: the
// same index twice, weights 1 and 0).
struct ResizeTap {
  int64_t i0 = 0, i1 = 0;
  double w0 = 1, w1 = 0;
};

DLRT_HD double resize_coordinate(const ResizeAxis& a, int64_t o) {
  switch (a.coord) {
    case ResizeCoord::kHalfPixel:
      return static_cast<double>((2 * o + 1) * a.in - a.out) / static_cast<double>(2 * a.out);
    case ResizeCoord::kAlignCorners:
      return a.out == 1 ? 0.0
                        : static_cast<double>(o * (a.in - 1)) / static_cast<double>(a.out - 1);
    default:
      return static_cast<double>(o * a.in) / static_cast<double>(a.out);
  }
}

DLRT_HD int64_t resize_round(NearestRound r, double c) {
  const double f = floor(c);
  switch (r) {
    case NearestRound::kFloor:
      return static_cast<int64_t>(f);
    case NearestRound::kCeil:
      return static_cast<int64_t>(ceil(c));
    case NearestRound::kRoundPreferCeil:
      return static_cast<int64_t>(floor(c + 0.5));
    default:  // round_prefer_floor: a tie (.5) goes down
      return static_cast<int64_t>(c - f == 0.5 ? f : floor(c + 0.5));
  }
}

DLRT_HD ResizeTap resize_tap(const ResizeAxis& a, int64_t o) {
  double c = resize_coordinate(a, o);
  ResizeTap t;
  if (!a.bilinear) {
    int64_t i = resize_round(a.round, c);
    i = i < 0 ? 0 : i > a.in - 1 ? a.in - 1 : i;
    t.i0 = t.i1 = i;
    return t;
  }
  const double last = static_cast<double>(a.in - 1);
  c = c < 0.0 ? 0.0 : c > last ? last : c;
  t.i0 = static_cast<int64_t>(floor(c));
  t.i1 = t.i0 + 1 < a.in ? t.i0 + 1 : a.in - 1;
  t.w1 = c - static_cast<double>(t.i0);
  t.w0 = 1.0 - t.w1;
  return t;
}

// The weight with which output index o's taps read input index i (0 when they do not).
DLRT_HD double resize_weight(const ResizeTap& t, int64_t i) {
  return (t.i0 == i ? t.w0 : 0.0) + (t.i1 == i ? t.w1 : 0.0);
}

// The output indices [*lo, *hi) whose taps include input index i: both taps grow with o, so
// lo = the first o with i1 >= i and hi = the first o with i0 > i (binary searches).
DLRT_HD void resize_feeders(const ResizeAxis& a, int64_t i, int64_t* lo, int64_t* hi) {
  int64_t l = 0, h = a.out;
  while (l < h) {
    const int64_t m = l + (h - l) / 2;
    if (resize_tap(a, m).i1 >= i) h = m;
    else l = m + 1;
  }
  *lo = l;
  h = a.out;
  while (l < h) {
    const int64_t m = l + (h - l) / 2;
    if (resize_tap(a, m).i0 > i) h = m;
    else l = m + 1;
  }
  *hi = l;
}

// resize: output element j of y (dims (n, h.out, w.out, c) as stored), from x.
DLRT_HD float resize_at(const ResizeGeom& g, const float* x, int64_t j) {
  int64_t n, oh, ow, c;
  image_coords(g.nchw, g.h.out, g.w.out, g.c, j, &n, &oh, &ow, &c);
  const ResizeTap a = resize_tap(g.h, oh), b = resize_tap(g.w, ow);
  const int64_t H = g.h.in, W = g.w.in;
  const double v = a.w0 * (b.w0 * x[image_offset(g.nchw, H, W, g.c, n, a.i0, b.i0, c)] +
                           b.w1 * x[image_offset(g.nchw, H, W, g.c, n, a.i0, b.i1, c)]) +
                   a.w1 * (b.w0 * x[image_offset(g.nchw, H, W, g.c, n, a.i1, b.i0, c)] +
                           b.w1 * x[image_offset(g.nchw, H, W, g.c, n, a.i1, b.i1, c)]);
  return static_cast<float>(v);
}

// resize_grad: element j of dx (dims (n, h.in, w.in, c) as stored) gathers weight * dy from
// every output cell whose taps read it, rows then columns in increasing order, in double (no
// atomics; the order is fixed, so every run gives the same bits).
DLRT_HD float resize_grad_at(const ResizeGeom& g, const float* dy, int64_t j) {
  int64_t n, ih, iw, c;
  image_coords(g.nchw, g.h.in, g.w.in, g.c, j, &n, &ih, &iw, &c);
  int64_t h0, h1, w0, w1;
  resize_feeders(g.h, ih, &h0, &h1);
  resize_feeders(g.w, iw, &w0, &w1);
  double sum = 0.0;
  for (int64_t oh = h0; oh < h1; ++oh) {
    const double wh = resize_weight(resize_tap(g.h, oh), ih);
    if (wh == 0.0) continue;
    for (int64_t ow = w0; ow < w1; ++ow) {
      const double ww = resize_weight(resize_tap(g.w, ow), iw);
      if (ww == 0.0) continue;
      sum += wh * ww * dy[image_offset(g.nchw, g.h.out, g.w.out, g.c, n, oh, ow, c)];
    }
  }
  return static_cast<float>(sum);
}

// ---- gather and scatter_add (gather.cu) ----------------------------------------------------
//
// gather: one thread per output word; out-of-range ids give a zero word (a kernel cannot
// report an error through the plugin ABI: docs/ops.md, "Decisions").
// scatter_add, deterministic: the output (R, row_len) is split into `chunks` bands of
// consecutive rows; thread t owns column k = t % row_len of band c = t / row_len, zeroes its
// cells, then walks ALL ids in index order and adds updates[i, k] to out[ids[i], k] when
// ids[i] lies in its band. Every output cell has exactly one owner that sums it in index
// order, so the bits never depend on scheduling (no atomics). Work: n_ids * row_len * chunks
// reads; chunks grows only until there are enough threads to fill the device.

// Word w of output row b of gather: params (rows, row_words) words, y (n_ids, row_words).
template <typename W, typename Index>
DLRT_HD W gather_word(const W* params, const Index* ids, int64_t rows, int64_t row_words,
                      int64_t i) {
  const int64_t b = i / row_words, w = i % row_words;
  const int64_t r = static_cast<int64_t>(ids[b]);
  return (r >= 0 && r < rows) ? params[r * row_words + w] : W(0);
}

struct ScatterGeom {
  int64_t rows = 1, row_len = 1, n_ids = 0;
  int64_t band = 1;    // rows per band
  int64_t chunks = 1;  // bands: ceil(rows / band)
};

// Threads of a scatter_add launch: one per (band, column).
DLRT_HD int64_t scatter_threads(const ScatterGeom& g) { return g.chunks * g.row_len; }

// Bands sized so that chunks * row_len reaches about `target_threads` (never more bands than
// rows).
DLRT_HD ScatterGeom scatter_geom(int64_t rows, int64_t row_len, int64_t n_ids,
                                 int64_t target_threads = 16384) {
  ScatterGeom g;
  g.rows = rows, g.row_len = row_len, g.n_ids = n_ids;
  int64_t want = (target_threads + row_len - 1) / row_len;
  if (want < 1) want = 1;
  if (want > rows) want = rows;
  g.band = (rows + want - 1) / want;
  g.chunks = (rows + g.band - 1) / g.band;
  return g;
}

// Thread t of scatter_add (t < scatter_threads(g)): its column of its band, zeroed and summed.
template <typename Index>
DLRT_HD void scatter_add_thread(const ScatterGeom& g, const Index* ids, const float* updates,
                                float* out, int64_t t) {
  const int64_t k = t % g.row_len, c = t / g.row_len;
  const int64_t lo = c * g.band;
  const int64_t hi = lo + g.band < g.rows ? lo + g.band : g.rows;
  for (int64_t r = lo; r < hi; ++r) out[r * g.row_len + k] = 0.0f;
  for (int64_t i = 0; i < g.n_ids; ++i) {
    const int64_t r = static_cast<int64_t>(ids[i]);
    if (r >= lo && r < hi) out[r * g.row_len + k] += updates[i * g.row_len + k];
  }
}

// ---- attention (attention.cu) -----------------------------------------------------------
// causal_mask, attention and attention_grad on (heads, T, D) problems (attention_geom.hpp).
// Bottom-right causal alignment: query i of Tq sees keys j <= i + Tk - Tq.

// Element e of causal_mask's x (..., Tq, Tk) is kept (not filled).
DLRT_HD bool causal_keep(int64_t e, int64_t tq, int64_t tk) {
  const int64_t j = e % tk, i = (e / tk) % tq;
  return j <= i + (tk - tq);
}
// Keys query row i sees: [0, attn_key_end).
DLRT_HD int64_t attn_key_end(int64_t i, int64_t tq, int64_t tk, bool causal) {
  if (!causal) return tk;
  const int64_t e = i + (tk - tq) + 1;
  return e < tk ? e : tk;
}
// The first query row that sees key j: [attn_first_query, Tq) see it.
DLRT_HD int64_t attn_first_query(int64_t j, int64_t tq, int64_t tk, bool causal) {
  if (!causal) return 0;
  const int64_t f = j - (tk - tq);
  return f > 0 ? f : 0;
}
// a . b over n floats, in index order (one thread's dot product of a query and a key).
DLRT_HD float attn_dot(const float* a, const float* b, int64_t n) {
  float s = 0.0f;
  for (int64_t c = 0; c < n; ++c) s += a[c] * b[c];
  return s;
}

// The online softmax of one query row over chunks of keys (FlashAttention's running max m and
// sum l = sum_j exp(s_j - m)). Per chunk with maximum cmax:
//   alpha = attn_online_rescale(st, cmax)   (m grows to max(m, cmax); l is scaled by alpha)
//   p_j = exp(s_j - st.m) for the chunk's keys, st.l += sum p_j, acc = acc*alpha + sum p_j v_j
// and at the end o = acc / l, lse = attn_lse(st) = m + log(l).
struct AttnOnline {
  float m;  // running max (-inf before the first key)
  float l;  // running sum of exp(s - m)
};
DLRT_HD AttnOnline attn_online_init() { return AttnOnline{-INFINITY, 0.0f}; }
DLRT_HD float attn_online_rescale(AttnOnline& st, float chunk_max) {
  const float m_new = st.m > chunk_max ? st.m : chunk_max;
  const float alpha = st.m == -INFINITY ? 0.0f : expf(st.m - m_new);
  st.m = m_new;
  st.l *= alpha;
  return alpha;
}
DLRT_HD float attn_lse(const AttnOnline& st) { return st.m + logf(st.l); }

// The backward's per-pair terms (FlashAttention-2): p = exp(s - lse) recomputed from the saved
// lse, and dS = scale * p * (dP - delta), delta = do_i . o_i, dP = do_i . v_j (the scale of
// s = scale * q.k is folded in here, so dq = sum dS k and dk = sum dS q).
DLRT_HD float attn_prob(float s, float lse) { return expf(s - lse); }
DLRT_HD float attn_ds(float p, float dp, float delta, float scale) {
  return scale * p * (dp - delta);
}

// ---- layer_norm (layer_norm.cu) ----------------------------------------------------------
// One block of `lanes` threads per row of D values. Lane t visits elements t, t+lanes, ...
// (coalesced), accumulating in double; the lanes' partials are then combined by a fixed
// tree (ln_tree_combine), so every run gives the same bits. The host test replays this order.

// Lane `lane`'s partial sums over its elements of one row: sum(x) (shift = 0, square false)
// or sum((x - shift)^2) (square true).
DLRT_HD double ln_lane_sum(const float* row, int64_t d, int lane, int lanes, double shift,
                           bool square) {
  double s = 0;
  for (int64_t j = lane; j < d; j += lanes) {
    const double v = double(row[j]) - shift;
    s += square ? v * v : v;
  }
  return s;
}

// The pairwise tree the block runs in shared memory: for stride = lanes/2, lanes/4, ..., 1,
// lane t < stride adds lane t + stride. `lanes` is a power of two; the total lands in s[0].
// On the device each step is followed by __syncthreads(); here it runs step by step.
DLRT_HD void ln_tree_step(double* s, int lane, int stride) {
  if (lane < stride) s[lane] += s[lane + stride];
}
inline double ln_tree_combine_host(double* s, int lanes) {
  for (int stride = lanes / 2; stride > 0; stride /= 2)
    for (int t = 0; t < stride; ++t) ln_tree_step(s, t, stride);
  return s[0];
}

// rstd = 1/sqrt(sum_sq/D + epsilon).
DLRT_HD double ln_rstd(double sum_sq, int64_t d, double epsilon) {
  return 1.0 / sqrt(sum_sq / double(d) + epsilon);
}

// dx of one element: rstd/D * (D*g - sum_g - xhat*sum_gx), g = dy*gamma, xhat = (x-mean)*rstd.
DLRT_HD float ln_dx(float dy, float x, float gamma, double mean, double rstd, int64_t d,
                    double sum_g, double sum_gx) {
  const double g = double(dy) * double(gamma), xhat = (double(x) - mean) * rstd;
  return static_cast<float>(rstd / double(d) * (double(d) * g - sum_g - xhat * sum_gx));
}

// dgamma[j] and dbeta[j]: column j's sums over the rows in row order (one thread per column).
DLRT_HD void ln_param_grads(const float* dy, const float* x, const float* mean,
                            const float* rstd, int64_t rows, int64_t d, int64_t j,
                            float* dgamma, float* dbeta) {
  double sg = 0, sb = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const double g = double(dy[r * d + j]);
    sg += g * (double(x[r * d + j]) - double(mean[r])) * double(rstd[r]);
    sb += g;
  }
  dgamma[j] = static_cast<float>(sg);
  dbeta[j] = static_cast<float>(sb);
}

// ---- the sequence ops (seq.cu) --------------------------------------------------------------

// one_hot, one thread per output element j of y (n_ids, depth): on when the id of row
// j / depth equals j % depth, off otherwise (an id outside [0, depth) never equals a column:
// an all-off row, as on every device).
template <typename T, typename Index>
DLRT_HD T one_hot_at(const Index* ids, int64_t depth, T on, T off, int64_t j) {
  return static_cast<int64_t>(ids[j / depth]) == j % depth ? on : off;
}

// cumsum, one thread per line: x and y (outer, k, inner) around the axis; line l is
// (o = l / inner, i = l % inner). The line is summed in double in scan order (from the end
// when reverse), as the reference does, so the two differ only in the final rounding.
struct ScanGeom {
  int64_t outer = 1, k = 1, inner = 1;
  bool exclusive = false, reverse = false;
};
DLRT_HD int64_t scan_lines(const ScanGeom& g) { return g.outer * g.inner; }
// The geometry of x's dims (rank >= 1) around `axis` (already in [0, rank)).
DLRT_HD ScanGeom scan_geom(const int64_t* dims, int rank, int axis, bool exclusive, bool reverse) {
  ScanGeom g;
  g.k = dims[axis];
  for (int d = 0; d < axis; ++d) g.outer *= dims[d];
  for (int d = axis + 1; d < rank; ++d) g.inner *= dims[d];
  g.exclusive = exclusive, g.reverse = reverse;
  return g;
}
DLRT_HD void cumsum_line(const ScanGeom& g, const float* x, float* y, int64_t line) {
  const int64_t o = line / g.inner, i = line % g.inner;
  const int64_t base = o * g.k * g.inner + i;
  double sum = 0.0;
  for (int64_t step = 0; step < g.k; ++step) {
    const int64_t j = g.reverse ? g.k - 1 - step : step;
    const int64_t at = base + j * g.inner;
    const double v = static_cast<double>(x[at]);
    if (!g.exclusive) sum += v;
    y[at] = static_cast<float>(sum);
    if (g.exclusive) sum += v;
  }
}

// top_k, one thread per row of x (rows, n): selection, no scratch. "a ranks before b" is a
// strict total order on (value, index): NaN above every number, then the larger value, then
// the lower index. Pick r is the best element ranking after pick r-1, so k passes over the
// row (O(k n)); unsorted output is then put in index order (insertion sort of k).
DLRT_HD bool top_k_before(float va, int64_t ia, float vb, int64_t ib) {
  const bool na = va != va, nb = vb != vb;
  if (na != nb) return na;
  if (!na && va != vb) return va > vb;
  return ia < ib;
}
DLRT_HD void top_k_row(const float* x, int64_t n, int64_t k, bool sorted, float* values,
                       int64_t* indices, int64_t row) {
  const float* xr = x + row * n;
  float* vr = values + row * k;
  int64_t* ir = indices + row * k;
  for (int64_t r = 0; r < k; ++r) {
    int64_t best = -1;
    for (int64_t j = 0; j < n; ++j) {
      if (r > 0 && !top_k_before(vr[r - 1], ir[r - 1], xr[j], j)) continue;  // taken already
      if (best < 0 || top_k_before(xr[j], j, xr[best], best)) best = j;
    }
    vr[r] = xr[best];
    ir[r] = best;
  }
  if (sorted) return;
  for (int64_t a = 1; a < k; ++a)
    for (int64_t b = a; b > 0 && ir[b - 1] > ir[b]; --b) {
      const float v = vr[b];
      vr[b] = vr[b - 1], vr[b - 1] = v;
      const int64_t i = ir[b];
      ir[b] = ir[b - 1], ir[b - 1] = i;
    }
}

// ---- lstm_cell, lstm_cell_grad (rnn.cu) -----------------------------------------------------
// One thread per element (b, j) of the (B,H) state; z = zx + h U (cuBLASLt, beta 1) sits in
// act (B,4H) when the gate kernel runs, which overwrites it with the activations. In float
// with expf/tanhf, as the elementwise kernels.

// The four gate blocks of row b at column j of a (B,4H) buffer: i, f, g, o at j, H+j, 2H+j, 3H+j.
DLRT_HD int64_t lstm_gate_index(int64_t b, int64_t j, int64_t h, int gate) {
  return b * 4 * h + int64_t(gate) * h + j;
}

// Element k = b*H + j of lstm_cell's gate pass: reads z from act, writes the activations back,
// and c'[k], h'[k].
DLRT_HD void lstm_cell_at(float* act, const float* c, float* c_next, float* h_next, int64_t h,
                          int64_t k) {
  const int64_t b = k / h, j = k % h;
  float* zi = act + lstm_gate_index(b, j, h, 0);
  float* zf = act + lstm_gate_index(b, j, h, 1);
  float* zg = act + lstm_gate_index(b, j, h, 2);
  float* zo = act + lstm_gate_index(b, j, h, 3);
  const float i = sigmoidf_(*zi), f = sigmoidf_(*zf), g = tanhf(*zg), o = sigmoidf_(*zo);
  const float cn = f * c[k] + i * g;
  *zi = i;
  *zf = f;
  *zg = g;
  *zo = o;
  c_next[k] = cn;
  h_next[k] = o * tanhf(cn);
}

// Element k = b*H + j of lstm_cell_grad (core/ops/infer_rnn.cc's formulas): dz's four gate
// entries of (b, j) and dc[k].
DLRT_HD void lstm_cell_grad_at(const float* dh_next, const float* dc_next, const float* c,
                               const float* c_next, const float* act, float* dz, float* dc,
                               int64_t h, int64_t k) {
  const int64_t b = k / h, j = k % h;
  const float i = act[lstm_gate_index(b, j, h, 0)], f = act[lstm_gate_index(b, j, h, 1)];
  const float g = act[lstm_gate_index(b, j, h, 2)], o = act[lstm_gate_index(b, j, h, 3)];
  const float th = tanhf(c_next[k]), dh = dh_next[k];
  const float dct = dc_next[k] + dh * o * (1.0f - th * th);
  dz[lstm_gate_index(b, j, h, 0)] = dct * g * i * (1.0f - i);
  dz[lstm_gate_index(b, j, h, 1)] = dct * c[k] * f * (1.0f - f);
  dz[lstm_gate_index(b, j, h, 2)] = dct * i * (1.0f - g * g);
  dz[lstm_gate_index(b, j, h, 3)] = dh * th * o * (1.0f - o);
  dc[k] = dct * f;
}

// ---- pointer alignment (host only: matmul.cc picks its cuBLASLt algorithm by it) ----------

// The largest power of two, at most `cap`, dividing every pointer's address: the alignment
// a kernel may assume for all of them. No pointers: `cap`.
inline size_t common_alignment(std::initializer_list<const void*> pointers, size_t cap) {
  uintptr_t bits = 0;
  for (const void* p : pointers) bits |= reinterpret_cast<uintptr_t>(p);
  size_t align = 1;
  while (align < cap && (bits & align) == 0) align <<= 1;
  return align;
}

}  // namespace dlrt::cuda::math
