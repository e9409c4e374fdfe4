// core/ops/samples_misc.cc: samples of matmul and matmul_bias_act, softmax/log_softmax, the
// sparse cross-entropy loss, argmax, equal_count, fill, the random ops, dropout, cast,
// gather_rows, copy and the optimizer updates (samples.hpp).
#include "samples.hpp"

namespace dlrt::ops::samples {
namespace {

struct MatmulShape {
  int64_t m, k, n;
};
const MatmulShape kMatmul[] = {{1, 13, 7}, {5, 3, 9}, {17, 67, 10}, {8, 8, 8}, {3, 1, 4}};

// a: (M,K), or (K,M) when transposed; b: (K,N), or (N,K) when transposed.
Sample matmul_sample(MatmulShape s, bool ta, bool tb) {
  const Values u = uniform(-1, 1);
  return {{f32_in("a", ta ? Dims{s.k, s.m} : Dims{s.m, s.k}, u),
           f32_in("b", tb ? Dims{s.n, s.k} : Dims{s.k, s.n}, u)},
          {{"transpose_a", ta}, {"transpose_b", tb}}};
}

// Realistic optimizer magnitudes: params ~1, gradients ~0.1, Adam's v >= 0, step >= 1; each
// attribute set both with separate outputs and in place.
const Dims kUpdateShapes[] = {{10}, {3, 3, 2, 4}, {}};

}  // namespace

SampleFn matmul(bool fused) {
  return [fused](const OpDef&) {
    std::vector<Sample> out;
    if (!fused) {
      // Every transpose combination, batch 1, K = 1, odd sizes, a longer K, the defaults.
      for (int i = 0; i < 5; ++i) out.push_back(matmul_sample(kMatmul[i], i & 1, i & 2));
      out.push_back(matmul_sample(kMatmul[2], true, true));
      out.push_back({{f32_in("a", {4, 6}, uniform(-2, 2)), f32_in("b", {6, 3}, uniform(-2, 2))},
                     {},
                     true,
                     "defaults"});
      return out;
    }
    const char* acts[] = {"none", "relu", "sigmoid", "tanh"};
    for (int a = 0; a < 4; ++a)
      for (int t : {a, 3 - a}) {
        const MatmulShape s = kMatmul[(a + t) % 5];
        Sample c = matmul_sample(s, t & 1, t & 2);
        c.attrs.emplace("activation", acts[a]);
        c.inputs.push_back(f32_in("bias", {s.n}, uniform(-1, 1)));
        out.push_back(std::move(c));
      }
    return out;
  };
}

// Default axis, middle and first axes, negative axis, one element, and logits large enough
// to overflow exp() without the max subtraction.
std::vector<Sample> softmax(const OpDef&) {
  const Values u = uniform(-5, 5);
  return {
      {{f32_in("x", {4, 10}, u)}},
      {{f32_in("x", {3, 5, 7}, u)}, {{"axis", 1}}},
      {{f32_in("x", {3, 5, 7}, u)}, {{"axis", 0}}},
      {{f32_in("x", {2, 6, 3}, u)}, {{"axis", -2}}},
      {{f32_in("x", {1, 1}, uniform(-2, 2))}},
      {{f32_in("x", {2, 9}, uniform(50, 95))}, {}, true, "needs max subtraction"},
  };
}

// Labels i32 and i64, batch 1, large logits, out-of-range labels.
std::vector<Sample> sparse_xent(const OpDef&) {
  const Values u = uniform(-4, 4);
  return {
      {{f32_in("logits", {8, 10}, u), typed_in("labels", DLRT_I32, {8}, labels(10))}},
      {{f32_in("logits", {1, 3}, u), typed_in("labels", DLRT_I64, {1}, labels(3))}},
      {{f32_in("logits", {5, 7}, u), typed_in("labels", DLRT_I64, {5}, labels(7))}},
      {{f32_in("logits", {4, 6}, uniform(-60, 60)), typed_in("labels", DLRT_I32, {4}, labels(6))},
       {},
       true,
       "large logits"},
      {{f32_in("logits", {4, 5}, u), typed_in("labels", DLRT_I32, {4}, labels(5, true))},
       {},
       true,
       "labels K and -1 give NaN rows"},
  };
}

// Distinct values (the first max is the only max), every axis, i32 and i64 out.
std::vector<Sample> argmax(const OpDef&) {
  const Values d = distinct(-5, 5);
  return {
      {{f32_in("x", {4, 10}, d)}},
      {{f32_in("x", {3, 5, 7}, d)}, {{"axis", 1}, {"output_type", DLRT_I64}}},
      {{f32_in("x", {3, 5, 7}, d)}, {{"axis", 0}}},
      {{f32_in("x", {3, 5, 7}, d)}, {{"axis", -2}, {"output_type", DLRT_I32}}},
      {{f32_in("x", {9}, d)}, {{"axis", 0}}, true, "to a scalar"},
  };
}

// Few classes, so there are matches; i32, i64 and mixed.
std::vector<Sample> equal_count(const OpDef&) {
  return {
      {{typed_in("a", DLRT_I32, {50}, integers(0, 3)),
        typed_in("b", DLRT_I32, {50}, integers(0, 3))}},
      {{typed_in("a", DLRT_I64, {17}, integers(0, 2)),
        typed_in("b", DLRT_I64, {17}, integers(0, 2))}},
      {{typed_in("a", DLRT_I32, {9}, integers(0, 1)), typed_in("b", DLRT_I64, {9}, integers(0, 1))},
       {},
       true,
       "mixed index types"},
      {{typed_in("a", DLRT_I64, {1}, constant(4)), typed_in("b", DLRT_I64, {1}, constant(4))}},
  };
}

std::vector<Sample> fill(const OpDef&) {
  return {
      {{}, {{"shape", Ints{2, 3}}, {"value", 1.5}}},
      {{}, {{"shape", Ints{7}}}, true, "default value 0"},
      {{}, {{"shape", Ints{1}}, {"value", -3}}, true, "int value widened"},
      {{}, {{"shape", Ints{3, 4}}, {"value", 7.0}, {"dtype", DLRT_I32}}, false},
      {{}, {{"shape", Ints{2, 2}}, {"value", 200.0}, {"dtype", DLRT_U8}}, false},
      {{}, {{"shape", Ints{3}}, {"value", -7.5}, {"dtype", DLRT_I16}}, false},
      {{}, {{"shape", Ints{2, 3}}, {"value", 1e19}, {"dtype", DLRT_U64}}, false, "u64 above 2^63"},
  };
}

// Compared exactly (the same Philox stream everywhere). Odd counts exercise the last
// incomplete group of 4 and the last Box-Muller pair.
std::vector<Sample> random_uniform(const OpDef&) {
  return {
      {{}, {{"shape", Ints{7}}}},
      {{}, {{"shape", Ints{3, 5}}, {"minval", -2.0}, {"maxval", 3.0}, {"seed", 42}}},
      {{}, {{"shape", Ints{2, 3, 5}}, {"seed", -1}}, true, "all 64 seed bits set"},
  };
}

std::vector<Sample> random_normal(const OpDef&) {
  return {
      {{}, {{"shape", Ints{7}}}},
      {{}, {{"shape", Ints{4, 5}}, {"mean", 1.0}, {"stddev", 2.0}, {"seed", 7}}},
      {{}, {{"shape", Ints{1}}, {"seed", int64_t{123456789012345}}}},
      {{}, {{"shape", Ints{3}}, {"mean", -1.0}, {"stddev", 0.0}}, true, "stddev 0"},
  };
}

std::vector<Sample> dropout(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      {{f32_in("x", {4, 5}, u)}, {{"rate", 0.5}, {"seed", 1}}},
      {{f32_in("x", {7}, u)}, {{"rate", 0.0}}, true, "rate 0 keeps everything"},
      {{f32_in("x", {2, 3, 4}, u)}, {{"rate", 0.3}, {"seed", 99}}},
      {{f32_in("x", {}, u)}, {{"rate", 0.25}, {"seed", 5}}},
  };
}

// float -> int truncates toward zero; images u8 -> f32; labels.
std::vector<Sample> cast(const OpDef&) {
  return {
      {{f32_in("x", {4, 5}, uniform(-100, 100))},
       {{"dtype", DLRT_I32}},
       true,
       "truncation toward zero"},
      {{typed_in("x", DLRT_I32, {9}, integers(-1000, 1000))}, {{"dtype", DLRT_F32}}},
      {{typed_in("x", DLRT_U8, {2, 4, 4, 1}, integers(0, 255))}, {{"dtype", DLRT_F32}}},
      {{f32_in("x", {6}, uniform(-1e6, 1e6))}, {{"dtype", DLRT_I64}}},
      {{typed_in("x", DLRT_I64, {6}, integers(-1000000, 1000000))}, {{"dtype", DLRT_F32}}},
      {{f32_in("x", {5}, uniform(-2, 2))}, {{"dtype", DLRT_F32}}, true, "identity"},
      {{typed_in("x", DLRT_I32, {5}, integers(-9, 9))}, {{"dtype", DLRT_I64}}, false},
      {{f32_in("x", {8}, uniform(0, 255.9))}, {{"dtype", DLRT_U8}}, false},
      // The 16-64-bit integers both ways: from floats beyond each range (saturating at both
      // ends, NaN-free), to f32/f64 (u64 from every bit pattern: rounding once), and between
      // integers (saturating: negatives to 0 in the unsigned, large u64 to i64's max).
      {{f32_in("x", {12}, uniform(-70000, 70000))}, {{"dtype", DLRT_U16}}, false, "f32 -> u16"},
      {{f32_in("x", {12}, uniform(-70000, 70000))}, {{"dtype", DLRT_I16}}, false, "f32 -> i16"},
      {{typed_in("x", DLRT_F64, {12}, uniform(-6e9, 6e9))}, {{"dtype", DLRT_U32}}, false,
       "f64 -> u32"},
      {{typed_in("x", DLRT_F64, {12}, uniform(-4e19, 4e19))}, {{"dtype", DLRT_U64}}, false,
       "f64 -> u64, past both ends"},
      {{typed_in("x", DLRT_U16, {9}, integers(0, 65535))}, {{"dtype", DLRT_F32}}, false},
      {{typed_in("x", DLRT_I16, {9}, integers(-32768, 32767))}, {{"dtype", DLRT_F32}}, false},
      {{typed_in("x", DLRT_U32, {9}, integers(0, 4294967295.0))}, {{"dtype", DLRT_F64}}, false},
      {{typed_in("x", DLRT_U64, {16}, bits())}, {{"dtype", DLRT_F32}}, false, "u64 -> f32"},
      {{typed_in("x", DLRT_U64, {16}, bits())}, {{"dtype", DLRT_I64}}, false, "u64 -> i64"},
      {{typed_in("x", DLRT_I64, {16}, bits())}, {{"dtype", DLRT_U64}}, false, "i64 -> u64"},
      {{typed_in("x", DLRT_I16, {9}, integers(-32768, 32767))}, {{"dtype", DLRT_U32}}, false,
       "i16 -> u32"},
      {{typed_in("x", DLRT_U32, {9}, integers(0, 4294967295.0))}, {{"dtype", DLRT_I16}}, false,
       "u32 -> i16"},
      {{typed_in("x", DLRT_U16, {9}, integers(0, 65535))}, {{"dtype", DLRT_BOOL}}, false},
      {{typed_in("x", DLRT_BOOL, {9}, integers(0, 1))}, {{"dtype", DLRT_U64}}, false},
  };
}

// Indices i32 and i64 in range, rows of rank 1 and 2, u8 data, and indices out of range
// (zero rows).
std::vector<Sample> gather_rows(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      {{f32_in("params", {10, 3}, u), typed_in("indices", DLRT_I32, {7}, integers(0, 9))}},
      {{f32_in("params", {6, 2, 3}, u), typed_in("indices", DLRT_I64, {4}, integers(0, 5))}},
      {{f32_in("params", {5, 4}, u), typed_in("indices", DLRT_I32, {1}, integers(0, 4))}},
      {{f32_in("params", {4, 5}, u), typed_in("indices", DLRT_I64, {6}, integers(-2, 5))},
       {},
       true,
       "out-of-range indices give zero rows"},
      {{typed_in("params", DLRT_U8, {12, 28}, integers(0, 255)),
        typed_in("indices", DLRT_I32, {5}, integers(0, 11))},
       {},
       false},
  };
}

std::vector<Sample> copy(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      {{f32_in("x", {3, 5}, u)}},
      {{f32_in("x", {}, u)}},
      {{f32_in("x", {1}, u)}},
      {{typed_in("x", DLRT_I32, {2, 7}, integers(-50, 50))}, {}, false},
  };
}

std::vector<Sample> sgd_update(const OpDef&) {
  struct Sgd {
    double learning_rate;  // an input since version 2
    AttrMap attrs;
    const char* note;
  };
  const Sgd sgd[] = {
      {0.01, {}, ""},
      {0.1, {{"momentum", 0.9}}, ""},
      {0.05, {{"momentum", 0.9}, {"nesterov", true}}, ""},
      {0.5, {{"momentum", 1}}, "int momentum widened"},
  };
  std::vector<Sample> out;
  int k = 0;
  for (const Sgd& s : sgd)
    for (bool in_place : {false, true}) {
      const Dims& d = kUpdateShapes[k++ % 3];
      out.push_back({{f32_in("param", d, uniform(-1, 1)), f32_in("grad", d, uniform(-0.1, 0.1)),
                      f32_in("velocity", d, uniform(-0.01, 0.01)),
                      f32_in("learning_rate", {}, constant(s.learning_rate))},
                     s.attrs,
                     true,
                     s.note,
                     in_place});
    }
  return out;
}

std::vector<Sample> adam_update(const OpDef&) {
  struct Adam {
    AttrMap attrs;
    double step;
    double learning_rate;  // an input since version 2
  };
  const Adam adam[] = {
      {{}, 1, 0.001},
      {{}, 10, 0.001},
      {{{"beta1", 0.8}, {"beta2", 0.99}, {"epsilon", 1e-5}}, 3, 0.01},
      {{}, 1000, 0.002},
  };
  std::vector<Sample> out;
  int k = 0;
  for (const Adam& a : adam)
    for (bool in_place : {false, true}) {
      const Dims& d = kUpdateShapes[k++ % 3];
      out.push_back({{f32_in("param", d, uniform(-1, 1)), f32_in("grad", d, uniform(-0.1, 0.1)),
                      f32_in("m", d, uniform(-0.01, 0.01)), f32_in("v", d, uniform(0, 1e-4)),
                      f32_in("step", {}, constant(a.step)),
                      f32_in("learning_rate", {}, constant(a.learning_rate))},
                     a.attrs,
                     true,
                     "",
                     in_place});
    }
  return out;
}

}  // namespace dlrt::ops::samples
