// core/ops/samples_seq.cc: samples of the sequence ops of infer_seq.cc.
//
// one_hot: ids of rank 0, 1 and 2 (B,T), i32 and i64, depth 1 and an odd depth, custom on/off
// values, integer outputs, and ids drawn from [-1, depth] so that out-of-range ids (an all-off
// row on every device) are compared too.
#include "samples.hpp"

namespace dlrt::ops::samples {

std::vector<Sample> one_hot(const OpDef&) {
  std::vector<Sample> out;
  out.push_back({{typed_in("indices", DLRT_I32, {7}, integers(-1, 5))}, {{"depth", 5}}});
  out.push_back({{typed_in("indices", DLRT_I64, {4, 6}, integers(-1, 11))},
                 {{"depth", 11}, {"on_value", 2.5}, {"off_value", -0.5}},
                 true,
                 "rank-2 ids (B,T), on/off values"});
  out.push_back({{typed_in("indices", DLRT_I32, {}, integers(0, 3))}, {{"depth", 4}}, true,
                 "a scalar id"});
  out.push_back({{typed_in("indices", DLRT_I64, {9}, integers(-1, 1))}, {{"depth", 1}}, true,
                 "depth 1"});
  out.push_back({{typed_in("indices", DLRT_I32, {3, 2, 5}, integers(-2, 7))},
                 {{"depth", 7}, {"dtype", DLRT_I32}, {"on_value", 3.0}},
                 true,
                 "i32 output"});
  out.push_back({{typed_in("indices", DLRT_I64, {2, 33}, integers(0, 100))},
                 {{"depth", 101}, {"dtype", DLRT_I64}, {"off_value", -1.0}},
                 true,
                 "i64 output, large depth"});
  return out;
}

std::vector<Sample> cumsum(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      {{f32_in("x", {4, 10}, u)}, {{"axis", 1}}},
      {{f32_in("x", {3, 5, 7}, u)}, {{"axis", 0}, {"exclusive", true}}},
      {{f32_in("x", {3, 5, 7}, u)}, {{"axis", 1}, {"reverse", true}}},
      {{f32_in("x", {3, 5, 7}, u)}, {{"axis", -1}, {"exclusive", true}, {"reverse", true}}},
      {{f32_in("x", {6, 1, 3}, u)}, {{"axis", 1}, {"exclusive", true}}, true, "a length-1 axis"},
      {{f32_in("x", {1000}, u)}, {}, true, "a long axis"},
      // Other numbers (not required: a device may decline them): f64, i32, i64, and i8 whose
      // sums wrap.
      {{typed_in("x", DLRT_F64, {3, 5}, u)}, {{"axis", 1}}, false, "f64"},
      {{typed_in("x", DLRT_I32, {3, 5, 7}, integers(-50, 50))}, {{"axis", 1}, {"exclusive", true}},
       false, "i32"},
      {{typed_in("x", DLRT_I64, {4, 6}, integers(-1000, 1000))}, {{"axis", 0}, {"reverse", true}},
       false, "i64"},
      {{typed_in("x", DLRT_I8, {40}, integers(-128, 127))}, {}, false, "i8, wrapping"},
      {{typed_in("x", DLRT_U16, {3, 40}, integers(0, 65535))}, {{"axis", 1}}, false,
       "u16, wrapping"},
      {{typed_in("x", DLRT_I16, {40, 2}, integers(-32768, 32767))}, {{"reverse", true}}, false,
       "i16, wrapping"},
      {{typed_in("x", DLRT_U32, {30}, integers(0, 4294967295.0))}, {{"exclusive", true}}, false,
       "u32, wrapping"},
      {{typed_in("x", DLRT_U64, {5, 7}, bits())}, {{"axis", 1}}, false, "u64, wrapping"},
  };
}

std::vector<Sample> top_k(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      {{f32_in("x", {4, 10}, u)}, {{"k", 3}}},
      {{f32_in("x", {3, 5, 7}, u)}, {{"k", 7}}, true, "k = N: a full sort"},
      {{f32_in("x", {9}, u)}, {{"k", 1}}, true, "k = 1: the max"},
      {{f32_in("x", {2, 1000}, u)}, {{"k", 40}}, true, "a vocabulary row"},
      {{f32_in("x", {6, 12}, integers(-2, 2))}, {{"k", 5}}, true, "ties: lower index first"},
      {{f32_in("x", {3, 4, 11}, integers(-2, 2))}, {{"k", 4}, {"sorted", false}}, true,
       "unsorted: index order"},
  };
}

}  // namespace dlrt::ops::samples
