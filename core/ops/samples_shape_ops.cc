// core/ops/samples_shape_ops.cc: samples of concat, split, slice, slice_grad, pad and pad_grad
// (infer_shape_ops.cc). They cover every axis position and negative axes, one and several
// parts, strides above 1 and below 0, bounds that clamp, both pad modes, batch 1, odd sizes
// and channel counts that are not multiples of 8, and integer data for the ops that only move
// elements.
#include <limits>

#include "samples.hpp"

namespace dlrt::ops::samples {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Sample one(SampleInput x, AttrMap attrs, std::string note = "") {
  return {{std::move(x)}, std::move(attrs), true, std::move(note)};
}

}  // namespace

std::vector<Sample> concat(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      {{f32_in("x", {2, 3}, u), f32_in("x", {2, 5}, u)}, {{"axis", int64_t{1}}}},
      {{f32_in("x", {1, 4, 4, 3}, u), f32_in("x", {1, 4, 4, 5}, u), f32_in("x", {1, 4, 4, 1}, u)},
       {{"axis", int64_t{-1}}},
       true,
       "channels, negative axis, batch 1"},
      {{f32_in("x", {3, 5}, u), f32_in("x", {1, 5}, u)}, {{"axis", int64_t{0}}}},
      {{f32_in("x", {2, 3, 5, 4}, u), f32_in("x", {2, 3, 1, 4}, u)}, {{"axis", int64_t{-2}}}},
      {{f32_in("x", {2, 1, 3}, u), f32_in("x", {2, 4, 3}, u), f32_in("x", {2, 2, 3}, u),
        f32_in("x", {2, 1, 3}, u)},
       {{"axis", int64_t{1}}},
       true,
       "four inputs, a middle axis"},
      {{f32_in("x", {7}, u)}, {{"axis", int64_t{0}}}, true, "one input"},
      {{typed_in("x", DLRT_I32, {2, 3}, integers(-99, 99)),
        typed_in("x", DLRT_I32, {2, 2}, integers(-99, 99))},
       {{"axis", int64_t{1}}},
       true,
       "integer data"},
      {{typed_in("x", DLRT_U32, {3, 2}, bits()), typed_in("x", DLRT_U32, {1, 2}, bits())},
       {{"axis", int64_t{0}}},
       false,
       "u32 data"},
  };
}

std::vector<Sample> split(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      one(f32_in("x", {5, 3}, u), {{"sizes", Ints{2, 3}}}),
      one(f32_in("x", {2, 7}, u), {{"axis", int64_t{-1}}, {"sizes", Ints{3, -1, 2}}}, "a -1 size"),
      one(f32_in("x", {1, 4, 6, 6}, u), {{"axis", int64_t{3}}, {"num", int64_t{3}}}),
      one(f32_in("x", {6}, u), {{"num", int64_t{2}}}),
      one(f32_in("x", {2, 3, 4}, u), {{"axis", int64_t{1}}, {"num", int64_t{1}}}, "one part"),
      one(f32_in("x", {3, 5, 2}, u), {{"axis", int64_t{-2}}, {"sizes", Ints{1, 1, 3}}}),
      one(typed_in("x", DLRT_I64, {4, 6}, integers(-1000, 1000)),
          {{"axis", int64_t{1}}, {"num", int64_t{2}}}, "integer data"),
  };
}

std::vector<Sample> slice(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      one(f32_in("x", {5, 7}, u), {{"begin", Ints{1, 2}}, {"end", Ints{4, 7}}}),
      one(f32_in("x", {2, 9, 9, 3}, u),
          {{"axes", Ints{1, 2}},
           {"begin", Ints{1, 0}},
           {"end", Ints{8, 9}},
           {"strides", Ints{2, 3}}},
          "strides > 1, batch 2"),
      one(f32_in("x", {7}, u), {{"begin", Ints{-3}}, {"end", Ints{kMax}}},
          "negative begin, end"
          " INT64_MAX"),
      one(f32_in("x", {6, 5}, u),
          {{"axes", Ints{-1}}, {"begin", Ints{10}}, {"end", Ints{-10}}, {"strides", Ints{-2}}},
          "negative stride, both bounds clamp"),
      one(f32_in("x", {4, 5, 3}, u),
          {{"axes", Ints{0}}, {"begin", Ints{-1}}, {"end", Ints{kMin}}, {"strides", Ints{-1}}},
          "reversed, end INT64_MIN"),
      one(f32_in("x", {3, 4}, u), {{"begin", Ints{0, 1}}, {"end", Ints{100, -1}}}, "end clamps"),
      one(f32_in("x", {1, 3, 5, 5}, u),
          {{"axes", Ints{2, 3}}, {"begin", Ints{1, 1}}, {"end", Ints{4, 5}}}, "spatial, batch 1"),
      one(typed_in("x", DLRT_I32, {3, 8}, integers(-99, 99)),
          {{"axes", Ints{1}}, {"begin", Ints{1}}, {"end", Ints{8}}, {"strides", Ints{3}}},
          "integer data"),
  };
}

std::vector<Sample> slice_grad(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      one(f32_in("dy", {3, 5}, u),
          {{"shape", Ints{5, 7}}, {"begin", Ints{1, 2}}, {"end", Ints{4, 7}}}),
      one(f32_in("dy", {2, 4, 3, 3}, u),
          {{"shape", Ints{2, 9, 9, 3}},
           {"axes", Ints{1, 2}},
           {"begin", Ints{1, 0}},
           {"end", Ints{8, 9}},
           {"strides", Ints{2, 3}}},
          "strides > 1"),
      one(f32_in("dy", {6, 3}, u),
          {{"shape", Ints{6, 5}},
           {"axes", Ints{-1}},
           {"begin", Ints{10}},
           {"end", Ints{-10}},
           {"strides", Ints{-2}}},
          "negative stride"),
      one(f32_in("dy", {3}, u), {{"shape", Ints{7}}, {"begin", Ints{-3}}, {"end", Ints{kMax}}}),
  };
}

// The first sample is constant mode (op_samples varies `value` on it).
std::vector<Sample> pad(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      one(f32_in("x", {3, 4}, u), {{"pads", Ints{1, 2, 0, 1}}}),
      one(f32_in("x", {1, 5, 5, 3}, u), {{"pads", Ints{0, 1, 2, 0, 0, 2, 1, 0}}, {"value", 0.5}},
          "spatial, batch 1"),
      one(f32_in("x", {4}, u), {{"pads", Ints{0, 0}}}, "no padding"),
      one(f32_in("x", {3, 4}, u), {{"pads", Ints{2, 1, 1, 3}}, {"mode", "reflect"}},
          "reflect, pads up to dim - 1"),
      one(f32_in("x", {2, 5, 5, 3}, u),
          {{"pads", Ints{0, 2, 1, 0, 0, 2, 3, 0}}, {"mode", "reflect"}}, "reflect, spatial"),
      one(f32_in("x", {7}, u), {{"pads", Ints{6, 6}}, {"mode", "reflect"}}, "reflect, rank 1"),
  };
}

std::vector<Sample> pad_grad(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      one(f32_in("dy", {5, 8}, u), {{"pads", Ints{2, 1, 0, 3}}}),
      one(f32_in("dy", {2, 9, 9, 3}, u), {{"pads", Ints{0, 2, 1, 0, 0, 2, 3, 0}}}),
      one(f32_in("dy", {19}, u), {{"pads", Ints{6, 6}}}, "every cell reflected"),
      one(f32_in("dy", {1, 4, 6, 5}, u), {{"pads", Ints{0, 0, 1, 1, 0, 1, 2, 0}}}, "batch 1"),
  };
}

}  // namespace dlrt::ops::samples
