// matmul.cc: 2-D matrix product with transpose flags, and its fused form with a bias and an
// activation. No batching: a is (M,K) or (K,M), b is (K,N) or (N,K), c is (M,N).
#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

struct MatmulGeom {
  int64_t m = 0, k = 0, n = 0;
  bool ta = false, tb = false;
  // a[i,p] and b[p,j] of the logical (untransposed) product, as offsets into the stored buffers.
  int64_t a_at(int64_t i, int64_t p) const { return ta ? p * m + i : i * k + p; }
  int64_t b_at(int64_t p, int64_t j) const { return tb ? j * k + p : p * n + j; }
};

// m, k, n from a's dims, the flags and c's dims (the schema checked that they agree).
MatmulGeom matmul_geom(const OpView& op) {
  const TensorView& a = op.input(0);
  MatmulGeom g;
  g.ta = op.get_bool("transpose_a");
  g.tb = op.get_bool("transpose_b");
  g.k = g.ta ? a.dims[0] : a.dims[1];
  g.m = op.output(0).dims[0];
  g.n = op.output(0).dims[1];
  return g;
}

// a: (M,K) [(K,M) if ta], b: (K,N) [(N,K) if tb], bias: (N) or null -> c: (M,N)
template <typename T>
void matmul(const MatmulGeom& g, const T* a, const T* b, const T* bias, Act act, T* c) {
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < g.k; ++p) acc += double(a[g.a_at(i, p)]) * double(b[g.b_at(p, j)]);
      if (bias != nullptr) acc += double(bias[j]);
      c[i * g.n + j] = static_cast<T>(apply(act, acc));
    }
}

void check_matmul(const OpView& op) {
  expect_float(op, op.input(0), "a");
  if (op.name() == "matmul_bias_act") parse_activation(op);
}

void run_matmul(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  MatmulGeom g = matmul_geom(op);
  bool fused = op.name() == "matmul_bias_act";
  Act act = fused ? parse_activation(op) : Act::kNone;
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    matmul<T>(g, static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
              fused ? static_cast<const T*>(in[2]) : nullptr, act, static_cast<T*>(out[0]));
  });
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"matmul", run_matmul, check_matmul});
  t.push_back({"matmul_bias_act", run_matmul, check_matmul});
}

}  // namespace dlrt::reference::detail
