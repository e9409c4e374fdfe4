// core/ops/samples_batch_matmul.cc: samples of batch_matmul (infer_batch_matmul.cc): rank 3
// with equal batches, rank 4 broadcasting both ways ((2,1,3,4) x (1,5,4,2)), every transpose
// pair, a rank-2 operand on either side (a projection shared by the batch), K = 1, and the
// attention shapes (B*H, T, d) x (B*H, d, T) with scores x values after it.
#include "samples.hpp"

namespace dlrt::ops::samples {
namespace {

// a of logical (batch_a..., M, K), b of (batch_b..., K, N), stored transposed when asked.
Sample bmm(Dims batch_a, Dims batch_b, int64_t m, int64_t k, int64_t n, bool ta, bool tb,
           const char* note) {
  Dims a = batch_a, b = batch_b;
  a.push_back(ta ? k : m);
  a.push_back(ta ? m : k);
  b.push_back(tb ? n : k);
  b.push_back(tb ? k : n);
  Sample s;
  s.inputs = {f32_in("a", a, uniform(-2, 2)), f32_in("b", b, uniform(-2, 2))};
  if (ta) s.attrs.emplace("transpose_a", true);
  if (tb) s.attrs.emplace("transpose_b", true);
  s.note = note;
  return s;
}

}  // namespace

std::vector<Sample> batch_matmul(const OpDef&) {
  std::vector<Sample> out;
  for (int t = 0; t < 4; ++t)
    out.push_back(bmm({3}, {3}, 4, 5, 6, t & 1, t & 2, "rank 3, equal batches"));
  out.push_back(bmm({2, 1}, {1, 5}, 3, 4, 2, false, false, "rank 4, both broadcast"));
  out.push_back(bmm({2, 1}, {1, 5}, 3, 4, 2, true, true, "rank 4, both broadcast, transposed"));
  out.push_back(bmm({4}, {}, 7, 3, 5, false, false, "rank-2 b: one matrix for every batch"));
  out.push_back(bmm({}, {2, 3}, 4, 6, 2, false, true, "rank-2 a against rank-4 b"));
  out.push_back(bmm({2, 1}, {3}, 2, 3, 4, false, false, "rank 4 x rank 3"));
  out.push_back(bmm({5}, {5}, 3, 1, 4, false, false, "K = 1"));
  out.push_back(bmm({8}, {8}, 16, 8, 16, false, true, "attention scores Q.K^T (B*H, T, d)"));
  out.push_back(bmm({8}, {8}, 16, 16, 8, false, false, "attention output P.V"));
  out.push_back(bmm({1}, {1}, 1, 1, 1, false, false, "1x1x1"));
  return out;
}

}  // namespace dlrt::ops::samples
