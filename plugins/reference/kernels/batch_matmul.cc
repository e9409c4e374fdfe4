// batch_matmul.cc: the batched matrix product over broadcast batch dims (docs/ops.md,
// batch_matmul_geom.hpp), written as the loop of its definition: for each batch element of c,
// the matrices of a and b it reads, multiplied with double accumulation.
#include "batch_matmul_geom.hpp"
#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

template <typename T>
void batch_matmul(const plugin::BatchMatmulGeom& g, const T* a, const T* b, T* c) {
  const int64_t m = g.m, k = g.k, n = g.n;
  for (int64_t i = 0; i < g.batch_count(); ++i) {
    const T* ai = a + g.a_matrix(i) * g.a_size();
    const T* bi = b + g.b_matrix(i) * g.b_size();
    T* ci = c + i * m * n;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col) {
        double acc = 0.0;
        for (int64_t p = 0; p < k; ++p) {
          const T av = g.ta ? ai[p * m + r] : ai[r * k + p];
          const T bv = g.tb ? bi[col * k + p] : bi[p * n + col];
          acc += double(av) * double(bv);
        }
        ci[r * n + col] = static_cast<T>(acc);
      }
  }
}

void check_batch_matmul(const OpView& op) { expect_float(op, op.input(0), "a"); }

void run_batch_matmul(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const plugin::BatchMatmulGeom g = plugin::batch_matmul_geom(op);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    batch_matmul<T>(g, static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                    static_cast<T*>(out[0]));
  });
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) { t.push_back({"batch_matmul", run_batch_matmul, check_batch_matmul}); }

}  // namespace dlrt::reference::detail
