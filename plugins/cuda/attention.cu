// attention.cu: the CUDA plugin's kernels for causal_mask, attention and attention_grad (f32;
// core/ops/infer_attention.cc has the arithmetic, attention_geom.hpp the geometry).
//
//   causal_mask     one thread per element (grid-stride): x or `fill` by causal_keep.
//   attention       one block of kThreads per (problem, query row). The row's keys are taken
//                   kThreads at a time: thread t scores key j0 + t (q from shared memory), the
//                   block's max and sum of the chunk come from a fixed shared-memory tree, the
//                   running (m, l) are updated by attn_online_rescale (FlashAttention's online
//                   softmax), and the threads owning output columns fold the chunk's p_j v_j
//                   into the row's accumulator (shared). o = acc / l, lse = m + log l.
//   attention_grad  two kernels, no atomics (deterministic):
//                   dq: a block per (problem, query row): delta = do.o, then per key chunk
//                       dS_j (attn_prob, attn_ds) in shared memory, dq += sum_j dS_j k_j;
//                   dk, dv: a block per (problem, key j) over the query rows that see j
//                       (attn_first_query): p_i, dS_i per row chunk, dv += sum_i p_i do_i,
//                       dk += sum_i dS_i q_i (delta_i recomputed per block: a Dv-long dot).
// Key/query order inside a chunk and the trees are fixed, so every run gives the same bits.
// The per-pair arithmetic and the online update are kernel_math.hpp's (attn_*), replayed on
// the host by kernel_math_test.cc.
#include <string>

#include "attention_geom.hpp"
#include "kernel_math.hpp"
#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 128;  // a power of two (the trees halve it)

// The block's max / sum of each thread's v (every thread gets it back); red has kThreads.
__device__ float block_max(float* red, float v) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (int(threadIdx.x) < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  const float r = red[0];
  __syncthreads();
  return r;
}
__device__ float block_sum(float* red, float v) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (int(threadIdx.x) < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  const float r = red[0];
  __syncthreads();
  return r;
}

struct AttnDims {
  int64_t tq, tk, d, dv;
  float scale;
  bool causal;
};

__global__ void causal_mask_kernel(const float* x, float* y, int64_t n, int64_t tq, int64_t tk,
                                   float fill) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n;
       e += int64_t(gridDim.x) * blockDim.x)
    y[e] = math::causal_keep(e, tq, tk) ? x[e] : fill;
}

// Shared memory: q (d), acc (dv), p (kThreads), red (kThreads).
__global__ void attention_kernel(const float* q, const float* k, const float* v, float* o,
                                 float* lse, AttnDims g) {
  extern __shared__ float sh[];
  float* qs = sh;
  float* acc = qs + g.d;
  float* ps = acc + g.dv;
  float* red = ps + kThreads;
  const int64_t row = blockIdx.x, h = row / g.tq, i = row % g.tq;
  const int t = int(threadIdx.x);
  const float* kh = k + h * g.tk * g.d;
  const float* vh = v + h * g.tk * g.dv;
  for (int64_t c = t; c < g.d; c += kThreads) qs[c] = q[row * g.d + c];
  for (int64_t c = t; c < g.dv; c += kThreads) acc[c] = 0.0f;
  __syncthreads();
  const int64_t n = math::attn_key_end(i, g.tq, g.tk, g.causal);
  math::AttnOnline st = math::attn_online_init();  // every thread holds the same copy
  for (int64_t j0 = 0; j0 < n; j0 += kThreads) {
    const int64_t j = j0 + t;
    const float s = j < n ? g.scale * math::attn_dot(qs, kh + j * g.d, g.d) : -INFINITY;
    const float alpha = math::attn_online_rescale(st, block_max(red, s));
    const float p = j < n ? expf(s - st.m) : 0.0f;
    ps[t] = p;
    st.l += block_sum(red, p);  // its barriers also publish ps
    const int64_t cn = n - j0 < kThreads ? n - j0 : kThreads;
    for (int64_t c = t; c < g.dv; c += kThreads) {
      float a = acc[c] * alpha;
      for (int64_t jj = 0; jj < cn; ++jj) a += ps[jj] * vh[(j0 + jj) * g.dv + c];
      acc[c] = a;
    }
    __syncthreads();  // ps is rewritten by the next chunk
  }
  for (int64_t c = t; c < g.dv; c += kThreads) o[row * g.dv + c] = acc[c] / st.l;
  if (t == 0) lse[row] = math::attn_lse(st);
}

// dq. Shared memory: q (d), do (dv), dq acc (d), ds (kThreads), red (kThreads).
__global__ void attention_dq_kernel(const float* dout, const float* q, const float* k,
                                    const float* v, const float* o, const float* lse, float* dq,
                                    AttnDims g) {
  extern __shared__ float sh[];
  float* qs = sh;
  float* dos = qs + g.d;
  float* acc = dos + g.dv;
  float* ds = acc + g.d;
  float* red = ds + kThreads;
  const int64_t row = blockIdx.x, h = row / g.tq, i = row % g.tq;
  const int t = int(threadIdx.x);
  const float* kh = k + h * g.tk * g.d;
  const float* vh = v + h * g.tk * g.dv;
  float part = 0.0f;
  for (int64_t c = t; c < g.d; c += kThreads) {
    qs[c] = q[row * g.d + c];
    acc[c] = 0.0f;
  }
  for (int64_t c = t; c < g.dv; c += kThreads) {
    dos[c] = dout[row * g.dv + c];
    part += dos[c] * o[row * g.dv + c];
  }
  const float delta = block_sum(red, part);  // its barriers publish qs and dos
  const float l = lse[row];
  const int64_t n = math::attn_key_end(i, g.tq, g.tk, g.causal);
  for (int64_t j0 = 0; j0 < n; j0 += kThreads) {
    const int64_t j = j0 + t;
    float d_s = 0.0f;
    if (j < n) {
      const float p = math::attn_prob(g.scale * math::attn_dot(qs, kh + j * g.d, g.d), l);
      d_s = math::attn_ds(p, math::attn_dot(dos, vh + j * g.dv, g.dv), delta, g.scale);
    }
    ds[t] = d_s;
    __syncthreads();
    const int64_t cn = n - j0 < kThreads ? n - j0 : kThreads;
    for (int64_t c = t; c < g.d; c += kThreads) {
      float a = acc[c];
      for (int64_t jj = 0; jj < cn; ++jj) a += ds[jj] * kh[(j0 + jj) * g.d + c];
      acc[c] = a;
    }
    __syncthreads();
  }
  for (int64_t c = t; c < g.d; c += kThreads) dq[row * g.d + c] = acc[c];
}

// dk, dv of key j. Shared memory: k_j (d), v_j (dv), dk acc (d), dv acc (dv), p, ds (kThreads).
__global__ void attention_dkv_kernel(const float* dout, const float* q, const float* k,
                                     const float* v, const float* o, const float* lse,
                                     float* dk, float* dv, AttnDims g) {
  extern __shared__ float sh[];
  float* ks = sh;
  float* vs = ks + g.d;
  float* dk_acc = vs + g.dv;
  float* dv_acc = dk_acc + g.d;
  float* ps = dv_acc + g.dv;
  float* ds = ps + kThreads;
  const int64_t key = blockIdx.x, h = key / g.tk, j = key % g.tk;
  const int t = int(threadIdx.x);
  const float* qh = q + h * g.tq * g.d;
  const float* doh = dout + h * g.tq * g.dv;
  const float* oh = o + h * g.tq * g.dv;
  const float* lh = lse + h * g.tq;
  for (int64_t c = t; c < g.d; c += kThreads) {
    ks[c] = k[key * g.d + c];
    dk_acc[c] = 0.0f;
  }
  for (int64_t c = t; c < g.dv; c += kThreads) {
    vs[c] = v[key * g.dv + c];
    dv_acc[c] = 0.0f;
  }
  __syncthreads();
  const int64_t first = math::attn_first_query(j, g.tq, g.tk, g.causal);
  for (int64_t i0 = first; i0 < g.tq; i0 += kThreads) {
    const int64_t i = i0 + t;
    float p = 0.0f, d_s = 0.0f;
    if (i < g.tq) {
      const float* doi = doh + i * g.dv;
      p = math::attn_prob(g.scale * math::attn_dot(qh + i * g.d, ks, g.d), lh[i]);
      const float delta = math::attn_dot(doi, oh + i * g.dv, g.dv);
      d_s = math::attn_ds(p, math::attn_dot(doi, vs, g.dv), delta, g.scale);
    }
    ps[t] = p;
    ds[t] = d_s;
    __syncthreads();
    const int64_t cn = g.tq - i0 < kThreads ? g.tq - i0 : kThreads;
    for (int64_t c = t; c < g.dv; c += kThreads) {
      float a = dv_acc[c];
      for (int64_t ii = 0; ii < cn; ++ii) a += ps[ii] * doh[(i0 + ii) * g.dv + c];
      dv_acc[c] = a;
    }
    for (int64_t c = t; c < g.d; c += kThreads) {
      float a = dk_acc[c];
      for (int64_t ii = 0; ii < cn; ++ii) a += ds[ii] * qh[(i0 + ii) * g.d + c];
      dk_acc[c] = a;
    }
    __syncthreads();
  }
  for (int64_t c = t; c < g.d; c += kThreads) dk[key * g.d + c] = dk_acc[c];
  for (int64_t c = t; c < g.dv; c += kThreads) dv[key * g.dv + c] = dv_acc[c];
}

constexpr size_t kMaxShared = 48 * 1024;  // without the opt-in for more

size_t fwd_shared(const plugin::AttentionGeom& g) {
  return sizeof(float) * size_t(g.d + g.dv + 2 * kThreads);
}
size_t dq_shared(const plugin::AttentionGeom& g) {
  return sizeof(float) * size_t(2 * g.d + g.dv + 2 * kThreads);
}
size_t dkv_shared(const plugin::AttentionGeom& g) {
  return sizeof(float) * size_t(2 * g.d + 2 * g.dv + 2 * kThreads);
}

void check_attention(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  require_f32(op);
  const std::string name = op.name();
  if (name == "causal_mask") {
    fill_cost(cost, dev, double(op.input(0).numel), operand_bytes(op));
    return;
  }
  const bool grad = name == "attention_grad";
  const plugin::AttentionGeom g = plugin::attention_geom(op, grad ? 1 : 0);
  const size_t need = grad ? std::max(dq_shared(g), dkv_shared(g)) : fwd_shared(g);
  if (need > kMaxShared)
    plugin::fail(DLRT_UNIMPLEMENTED,
                 "cuda: " + name + ": D = " + std::to_string(g.d) + " and Dv = " +
                     std::to_string(g.dv) + " need " + std::to_string(need) +
                     " bytes of shared memory per block, more than the 48 KiB this kernel uses");
  const double pairs = double(g.heads) * double(g.tq) * double(g.tk) * (g.causal ? 0.5 : 1.0);
  fill_cost(cost, dev, pairs * 2.0 * double(g.d + g.dv) * (grad ? 3.0 : 1.0), operand_bytes(op));
}

AttnDims dims_of(const plugin::AttentionGeom& g) {
  return AttnDims{g.tq, g.tk, g.d, g.dv, float(g.scale), g.causal};
}

std::unique_ptr<Kernel> create_attention(const dlrt_op_desc& desc, const dlrt_device_desc&,
                                         size_t*) {
  OpView op(&desc);
  const std::string name = op.name();
  if (name == "causal_mask") {
    const plugin::CausalMaskGeom m = plugin::causal_mask_geom(op);
    const int64_t n = op.input(0).numel;
    const float fill = float(op.get_float("fill"));
    return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
      check_args(a, 1, 1, 0, "causal_mask");
      if (n > 0)
        causal_mask_kernel<<<grid_for(n), 256, 0, s>>>(in<float>(a, 0), out<float>(a, 0), n,
                                                        m.tq, m.tk, fill);
      check_launch("causal_mask kernel");
    });
  }
  if (name == "attention_grad") {
    const plugin::AttentionGeom g = plugin::attention_geom(op, 1);
    const AttnDims d = dims_of(g);
    const size_t sq = dq_shared(g), skv = dkv_shared(g);
    return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
      check_args(a, 6, 3, 0, "attention_grad");
      if (g.heads * g.tq > 0)
        attention_dq_kernel<<<unsigned(g.heads * g.tq), kThreads, sq, s>>>(
            in<float>(a, 0), in<float>(a, 1), in<float>(a, 2), in<float>(a, 3), in<float>(a, 4),
            in<float>(a, 5), out<float>(a, 0), d);
      if (g.heads * g.tk > 0)
        attention_dkv_kernel<<<unsigned(g.heads * g.tk), kThreads, skv, s>>>(
            in<float>(a, 0), in<float>(a, 1), in<float>(a, 2), in<float>(a, 3), in<float>(a, 4),
            in<float>(a, 5), out<float>(a, 1), out<float>(a, 2), d);
      check_launch("attention_grad kernels");
    });
  }
  const plugin::AttentionGeom g = plugin::attention_geom(op, 0);
  const AttnDims d = dims_of(g);
  const size_t sf = fwd_shared(g);
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 3, 2, 0, "attention");
    if (g.heads * g.tq > 0)
      attention_kernel<<<unsigned(g.heads * g.tq), kThreads, sf, s>>>(
          in<float>(a, 0), in<float>(a, 1), in<float>(a, 2), out<float>(a, 0), out<float>(a, 1),
          d);
    check_launch("attention kernel");
  });
}

}  // namespace

DLRT_CUDA_OPS(t) {
  t.push_back({"causal_mask", &check_attention, &create_attention});
  t.push_back({"attention", &check_attention, &create_attention});
  t.push_back({"attention_grad", &check_attention, &create_attention});
}

}  // namespace dlrt::cuda
