// tests/conformance/cases_misc.cc: matmul and matmul_bias_act, softmax/log_softmax, the
// sparse cross-entropy loss, argmax, equal_count, fill, the random ops, dropout, cast,
// gather_rows and copy.
#include "cases_util.hpp"

namespace dlrt::conformance {
namespace {
using detail::f32;
using detail::typed;

struct MatmulShape { int64_t m, k, n; };
const MatmulShape kMatmul[] = {{1, 13, 7}, {5, 3, 9}, {17, 67, 10}, {8, 8, 8}, {3, 1, 4}};

// a: (M,K), or (K,M) when transposed; b: (K,N), or (N,K) when transposed.
Case matmul_case(const char* op, MatmulShape s, bool ta, bool tb, std::vector<Attr> extra = {}) {
  const Fill u = uniform(-1, 1);
  Case c{op,
         {f32("a", ta ? Dims{s.k, s.m} : Dims{s.m, s.k}, u),
          f32("b", tb ? Dims{s.n, s.k} : Dims{s.k, s.n}, u)},
         {a_bool("transpose_a", ta), a_bool("transpose_b", tb)}};
  for (Attr& a : extra) c.attrs.push_back(std::move(a));
  return c;
}

// Labels in [0,K), except that row 0 gets K and the last row -1 when `out_of_range`.
Fill labels(int64_t k, bool out_of_range) {
  return [k, out_of_range](Rng& rng, HostTensor& t, const std::vector<HostTensor>&) {
    for (int64_t i = 0; i < t.size(); ++i) t.set(i, static_cast<double>(rng.integer(0, k - 1)));
    if (out_of_range) {
      t.set(0, static_cast<double>(k));
      t.set(t.size() - 1, -1);
    }
  };
}

}  // namespace

std::vector<Case> misc_cases() {
  std::vector<Case> cases;
  const Fill u = uniform(-2, 2);

  // matmul: every transpose combination, batch 1, K = 1, odd sizes, a longer K.
  for (int i = 0; i < 5; ++i) cases.push_back(matmul_case("matmul", kMatmul[i], i & 1, i & 2));
  cases.push_back(matmul_case("matmul", kMatmul[2], true, true));
  cases.push_back({"matmul", {f32("a", {4, 6}, u), f32("b", {6, 3}, u)}, {}, {}, true, "defaults"});
  const char* acts[] = {"none", "relu", "sigmoid", "tanh"};
  for (int a = 0; a < 4; ++a)
    for (int t : {a, 3 - a}) {
      const MatmulShape s = kMatmul[(a + t) % 5];
      Case c = matmul_case("matmul_bias_act", s, t & 1, t & 2, {a_str("activation", acts[a])});
      c.inputs.push_back(f32("bias", {s.n}, uniform(-1, 1)));
      cases.push_back(std::move(c));
    }

  // softmax / log_softmax: default axis, middle and first axes, negative axis, one element,
  // and logits large enough to overflow exp() without the max subtraction.
  for (const char* op : {"softmax", "log_softmax"}) {
    cases.push_back({op, {f32("x", {4, 10}, uniform(-5, 5))}});
    cases.push_back({op, {f32("x", {3, 5, 7}, uniform(-5, 5))}, {a_int("axis", 1)}});
    cases.push_back({op, {f32("x", {3, 5, 7}, uniform(-5, 5))}, {a_int("axis", 0)}});
    cases.push_back({op, {f32("x", {2, 6, 3}, uniform(-5, 5))}, {a_int("axis", -2)}});
    cases.push_back({op, {f32("x", {1, 1}, u)}});
    cases.push_back({op, {f32("x", {2, 9}, uniform(50, 95))}, {}, {}, true, "needs max subtraction"});
  }

  // sparse_softmax_cross_entropy: labels i32 and i64, batch 1, large logits, out-of-range labels.
  const char* xent = "sparse_softmax_cross_entropy";
  cases.push_back({xent, {f32("logits", {8, 10}, uniform(-4, 4)), typed("labels", DLRT_I32, {8}, labels(10, false))}});
  cases.push_back({xent, {f32("logits", {1, 3}, uniform(-4, 4)), typed("labels", DLRT_I64, {1}, labels(3, false))}});
  cases.push_back({xent, {f32("logits", {5, 7}, uniform(-4, 4)), typed("labels", DLRT_I64, {5}, labels(7, false))}});
  cases.push_back({xent, {f32("logits", {4, 6}, uniform(-60, 60)), typed("labels", DLRT_I32, {4}, labels(6, false))}, {}, {}, true, "large logits"});
  cases.push_back({xent, {f32("logits", {4, 5}, uniform(-4, 4)), typed("labels", DLRT_I32, {4}, labels(5, true))}, {}, {}, true, "labels K and -1 give NaN rows"});

  // argmax: distinct values (the first max is the only max), every axis, i32 and i64 out.
  const Fill d = distinct(-5, 5);
  cases.push_back({"argmax", {f32("x", {4, 10}, d)}});
  cases.push_back({"argmax", {f32("x", {3, 5, 7}, d)}, {a_int("axis", 1), a_dtype("output_type", DLRT_I64)}});
  cases.push_back({"argmax", {f32("x", {3, 5, 7}, d)}, {a_int("axis", 0)}});
  cases.push_back({"argmax", {f32("x", {3, 5, 7}, d)}, {a_int("axis", -2), a_dtype("output_type", DLRT_I32)}});
  cases.push_back({"argmax", {f32("x", {9}, d)}, {a_int("axis", 0)}, {}, true, "to a scalar"});

  // equal_count: few classes, so there are matches; i32, i64 and mixed.
  cases.push_back({"equal_count", {typed("a", DLRT_I32, {50}, integers(0, 3)), typed("b", DLRT_I32, {50}, integers(0, 3))}});
  cases.push_back({"equal_count", {typed("a", DLRT_I64, {17}, integers(0, 2)), typed("b", DLRT_I64, {17}, integers(0, 2))}});
  cases.push_back({"equal_count", {typed("a", DLRT_I32, {9}, integers(0, 1)), typed("b", DLRT_I64, {9}, integers(0, 1))}, {}, {}, true, "mixed index types"});
  cases.push_back({"equal_count", {typed("a", DLRT_I64, {1}, constant(4)), typed("b", DLRT_I64, {1}, constant(4))}});

  // fill
  cases.push_back({"fill", {}, {a_ints("shape", {2, 3}), a_float("value", 1.5)}});
  cases.push_back({"fill", {}, {a_ints("shape", {7})}, {}, true, "default value 0"});
  cases.push_back({"fill", {}, {a_ints("shape", {1}), a_int("value", -3)}, {}, true, "int value widened"});
  cases.push_back({"fill", {}, {a_ints("shape", {3, 4}), a_float("value", 7), a_dtype("dtype", DLRT_I32)}, {}, false});
  cases.push_back({"fill", {}, {a_ints("shape", {2, 2}), a_float("value", 200), a_dtype("dtype", DLRT_U8)}, {}, false});

  // random ops: compared exactly (same Philox stream everywhere). Odd counts exercise the
  // last incomplete group of 4 and the last Box-Muller pair.
  cases.push_back({"random_uniform", {}, {a_ints("shape", {7})}});
  cases.push_back({"random_uniform", {}, {a_ints("shape", {3, 5}), a_float("minval", -2), a_float("maxval", 3), a_int("seed", 42)}});
  cases.push_back({"random_uniform", {}, {a_ints("shape", {2, 3, 5}), a_int("seed", -1)}, {}, true, "all 64 seed bits set"});
  cases.push_back({"random_normal", {}, {a_ints("shape", {7})}});
  cases.push_back({"random_normal", {}, {a_ints("shape", {4, 5}), a_float("mean", 1), a_float("stddev", 2), a_int("seed", 7)}});
  cases.push_back({"random_normal", {}, {a_ints("shape", {1}), a_int("seed", 123456789012345)}});
  cases.push_back({"random_normal", {}, {a_ints("shape", {3}), a_float("mean", -1), a_float("stddev", 0)}, {}, true, "stddev 0"});

  // dropout
  cases.push_back({"dropout", {f32("x", {4, 5}, u)}, {a_float("rate", 0.5), a_int("seed", 1)}});
  cases.push_back({"dropout", {f32("x", {7}, u)}, {a_float("rate", 0)}, {}, true, "rate 0 keeps everything"});
  cases.push_back({"dropout", {f32("x", {2, 3, 4}, u)}, {a_float("rate", 0.3), a_int("seed", 99)}});
  cases.push_back({"dropout", {f32("x", {}, u)}, {a_float("rate", 0.25), a_int("seed", 5)}});

  // cast: float -> int truncates toward zero; images u8 -> f32; labels.
  cases.push_back({"cast", {f32("x", {4, 5}, uniform(-100, 100))}, {a_dtype("dtype", DLRT_I32)}, {}, true, "truncation toward zero"});
  cases.push_back({"cast", {typed("x", DLRT_I32, {9}, integers(-1000, 1000))}, {a_dtype("dtype", DLRT_F32)}});
  cases.push_back({"cast", {typed("x", DLRT_U8, {2, 4, 4, 1}, integers(0, 255))}, {a_dtype("dtype", DLRT_F32)}});
  cases.push_back({"cast", {f32("x", {6}, uniform(-1e6, 1e6))}, {a_dtype("dtype", DLRT_I64)}});
  cases.push_back({"cast", {typed("x", DLRT_I64, {6}, integers(-1000000, 1000000))}, {a_dtype("dtype", DLRT_F32)}});
  cases.push_back({"cast", {f32("x", {5}, u)}, {a_dtype("dtype", DLRT_F32)}, {}, true, "identity"});
  cases.push_back({"cast", {typed("x", DLRT_I32, {5}, integers(-9, 9))}, {a_dtype("dtype", DLRT_I64)}, {}, false});
  cases.push_back({"cast", {f32("x", {8}, uniform(0, 255.9))}, {a_dtype("dtype", DLRT_U8)}, {}, false});

  // gather_rows: indices i32 and i64 in range, rows of rank 1 and 2, u8 data, and indices
  // out of range (zero rows).
  cases.push_back({"gather_rows", {f32("params", {10, 3}, u), typed("indices", DLRT_I32, {7}, integers(0, 9))}});
  cases.push_back({"gather_rows", {f32("params", {6, 2, 3}, u), typed("indices", DLRT_I64, {4}, integers(0, 5))}});
  cases.push_back({"gather_rows", {f32("params", {5, 4}, u), typed("indices", DLRT_I32, {1}, integers(0, 4))}});
  cases.push_back({"gather_rows", {f32("params", {4, 5}, u), typed("indices", DLRT_I64, {6}, integers(-2, 5))}, {}, {}, true, "out-of-range indices give zero rows"});
  cases.push_back({"gather_rows", {typed("params", DLRT_U8, {12, 28}, integers(0, 255)), typed("indices", DLRT_I32, {5}, integers(0, 11))}, {}, {}, false});

  // copy
  cases.push_back({"copy", {f32("x", {3, 5}, u)}});
  cases.push_back({"copy", {f32("x", {}, u)}});
  cases.push_back({"copy", {f32("x", {1}, u)}});
  cases.push_back({"copy", {typed("x", DLRT_I32, {2, 7}, integers(-50, 50))}, {}, {}, false});
  return cases;
}

}  // namespace dlrt::conformance
