// batch_matmul_geom.hpp: the geometry of batch_matmul (docs/ops.md) that every backend shares.
//
//   a (batch_a..., M, K) [stored (..., K, M) if ta], b (batch_b..., K, N) [(..., N, K) if tb]
//   -> c (batch..., M, N), batch = the numpy broadcast of batch_a and batch_b.
//
// The batch dims are padded on the left with 1s to c's batch rank; `a_matrix(i)` is the index
// of the matrix of a (in a's own row-major batch order) that c's batch element i reads — a
// broadcast dim contributes nothing. Header-only; plain integers so the cuda plugin can use it
// on the host.
#pragma once

#include <cstdint>
#include <vector>

#include "op_view.hpp"

namespace dlrt::plugin {

struct BatchMatmulGeom {
  int64_t m = 0, k = 0, n = 0;
  bool ta = false, tb = false;
  std::vector<int64_t> batch;          // c's batch dims
  std::vector<int64_t> a_bdims, b_bdims;  // a's and b's, padded with leading 1s to batch.size()

  int64_t batch_count() const {
    int64_t c = 1;
    for (int64_t d : batch) c *= d;
    return c;
  }
  int64_t a_matrix(int64_t i) const { return source_matrix(i, a_bdims); }
  int64_t b_matrix(int64_t i) const { return source_matrix(i, b_bdims); }
  // Elements per stored matrix.
  int64_t a_size() const { return m * k; }
  int64_t b_size() const { return k * n; }
  // True when the operand's batch dims are all 1 (one matrix for every batch element) or all
  // equal to c's (one matrix each): the two cases one strided-batched GEMM covers, with a
  // batch stride of 0 or of the matrix size.
  bool a_uniform() const { return uniform(a_bdims); }
  bool b_uniform() const { return uniform(b_bdims); }
  static bool all_ones(const std::vector<int64_t>& d) {
    for (int64_t x : d)
      if (x != 1) return false;
    return true;
  }

 private:
  int64_t source_matrix(int64_t i, const std::vector<int64_t>& src) const {
    int64_t idx = 0, stride = 1;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t coord = i % batch[d];
      i /= batch[d];
      if (src[d] != 1) idx += coord * stride;
      stride *= src[d];
    }
    return idx;
  }
  bool uniform(const std::vector<int64_t>& src) const { return all_ones(src) || src == batch; }
};

// From the op's operand and output descriptors (the schema checked that they agree).
inline BatchMatmulGeom batch_matmul_geom(const OpView& op) {
  BatchMatmulGeom g;
  g.ta = op.get_bool("transpose_a");
  g.tb = op.get_bool("transpose_b");
  const auto& a = op.input(0).dims;
  const auto& b = op.input(1).dims;
  const auto& c = op.output(0).dims;
  const size_t rc = c.size();
  g.m = c[rc - 2];
  g.n = c[rc - 1];
  g.k = g.ta ? a[a.size() - 2] : a[a.size() - 1];
  g.batch.assign(c.begin(), c.end() - 2);
  const size_t nb = g.batch.size();
  g.a_bdims.assign(nb, 1);
  g.b_bdims.assign(nb, 1);
  for (size_t i = 0; i + 2 < a.size(); ++i) g.a_bdims[nb - (a.size() - 2) + i] = a[i];
  for (size_t i = 0; i + 2 < b.size(); ++i) g.b_bdims[nb - (b.size() - 2) + i] = b[i];
  return g;
}

}  // namespace dlrt::plugin
