// core/ops/samples_elementwise.cc: samples of the elementwise family (samples.hpp). Shapes:
// scalars, rank 1 of odd length, ranks 3 and 4; binary ops broadcast both ways (a stretches to
// b and b to a) and from rank 0.
#include "samples.hpp"
#include "shape_util.hpp"

namespace dlrt::ops::samples {
namespace {

const Dims kUnaryShapes[] = {{}, {7}, {3, 5, 7}, {2, 3, 4, 5}};

// (a, b) pairs: same shape, b broadcast into a, a broadcast into b, both stretch, scalars.
const std::pair<Dims, Dims> kBinaryShapes[] = {
    {{3, 5, 7}, {3, 5, 7}}, {{2, 3, 4, 5}, {5}},  // b stretches (bias-like)
    {{4, 1}, {2, 3, 4, 6}},                       // a stretches, both ways within one pair of dims
    {{3, 1, 5}, {4, 1}},                          // both stretch: (3,4,5)
    {{}, {2, 3}},                                 // rank-0 a
    {{6, 1}, {1}},                                // size-1 b of rank 1
};

}  // namespace

SampleFn unary(Values x, std::vector<Sample> extra) {
  return [x, extra](const OpDef& def) {
    std::vector<Sample> out;
    for (const Dims& d : kUnaryShapes) out.push_back({{f32_in(def.inputs[0].name, d, x)}});
    out.insert(out.end(), extra.begin(), extra.end());
    return out;
  };
}

SampleFn activation_grad(Values second) {
  return [second](const OpDef& def) {
    std::vector<Sample> out;
    for (const Dims& d : kUnaryShapes)
      out.push_back({{f32_in("dy", d, uniform(-2, 2)), f32_in(def.inputs[1].name, d, second)}});
    return out;
  };
}

SampleFn binary(Values b, Values a, std::vector<Sample> extra) {
  return [a, b, extra](const OpDef&) {
    std::vector<Sample> out;
    for (const auto& [da, db] : kBinaryShapes)
      out.push_back({{f32_in("a", da, a), f32_in("b", db, b)}});
    out.insert(out.end(), extra.begin(), extra.end());
    return out;
  };
}

// The ops of kNumericTypes again on each non-float type and f64: i32 against a broadcast row,
// i64 against a scalar, i8, u8, i16, u16 and u32 over their whole range (sums, differences and
// products wrap), u64 as random bit patterns (values above 2^63 too, and products that wrap
// many times over), f64. Not required: a device may decline them (the f32 samples are the
// contract).
std::vector<Sample> integer_binary() {
  auto pair = [](dlrt_dtype d, Dims da, Dims db, Values v, const char* note) {
    return Sample{{typed_in("a", d, da, v), typed_in("b", d, db, v)}, {}, false, note};
  };
  return {
      pair(DLRT_I32, {3, 5}, {5}, integers(-50, 50), "i32"),
      pair(DLRT_I64, {2, 3}, {}, integers(-1000, 1000), "i64 with a scalar"),
      pair(DLRT_I8, {4, 6}, {4, 6}, integers(-128, 127), "i8, wrapping"),
      pair(DLRT_U8, {4, 1}, {1, 6}, integers(0, 255), "u8, wrapping"),
      pair(DLRT_I16, {3, 5}, {3, 5}, integers(-32768, 32767), "i16, wrapping"),
      pair(DLRT_U16, {2, 1, 4}, {3, 1}, integers(0, 65535), "u16, wrapping"),
      pair(DLRT_U32, {5, 3}, {}, integers(0, 4294967295.0), "u32 with a scalar, wrapping"),
      pair(DLRT_U64, {4, 4}, {4}, bits(), "u64, every bit pattern"),
      pair(DLRT_F64, {3, 4}, {4}, integers(-3, 3), "f64"),
  };
}

SampleFn comparison() { return binary(integers(-2, 2), integers(-2, 2), integer_binary()); }

std::vector<Sample> where(const OpDef&) {
  // (cond, x, y): all one shape; cond stretched; x and y stretched; a scalar cond; each of the
  // three stretched along a different axis: (3,1,1), (1,4,1), (5) -> (3,4,5).
  struct Shapes {
    Dims cond, x, y;
  };
  const Shapes shapes[] = {
      {{3, 5, 7}, {3, 5, 7}, {3, 5, 7}}, {{7}, {2, 3, 7}, {2, 3, 7}},
      {{2, 3, 4}, {3, 1}, {}},           {{}, {4, 6}, {4, 6}},
      {{3, 1, 1}, {1, 4, 1}, {5}},
  };
  std::vector<Sample> out;
  for (const Shapes& s : shapes)
    out.push_back({{typed_in("cond", DLRT_BOOL, s.cond, integers(0, 1)),
                    f32_in("x", s.x, uniform(-2, 2)), f32_in("y", s.y, uniform(-2, 2))}});
  // x and y of any dtype: i64 (ONNX's index arithmetic), bool, and each element size of the
  // wider integers (u16, u32, u64).
  for (dlrt_dtype d : {DLRT_I64, DLRT_BOOL, DLRT_U16, DLRT_U32, DLRT_U64})
    out.push_back({{typed_in("cond", DLRT_BOOL, {3, 4}, integers(0, 1)),
                    typed_in("x", d, {3, 4}, integers(0, 1000)), typed_in("y", d, {4}, integers(0, 1))},
                   {},
                   false,
                   dtype_name(d)});
  return out;
}

SampleFn bias(bool grad) {
  return [grad](const OpDef&) {
    // NHWC (C last) at ranks 1, 2 and 4; NCHW (C is dim 1) at ranks 2 and 4; C not a
    // multiple of 8. The first leaves data_format to its default.
    struct BiasShape {
      const char* format;
      Dims x;
      int64_t c;
      bool defaults;
    };
    const BiasShape shapes[] = {
        {"NHWC", {2, 5, 7, 3}, 3, true},  {"NHWC", {4, 10}, 10, false}, {"NHWC", {7}, 7, false},
        {"NCHW", {2, 3, 5, 7}, 3, false}, {"NCHW", {3, 9}, 9, false},
    };
    std::vector<Sample> out;
    const Values u = uniform(-2, 2);
    for (const BiasShape& s : shapes) {
      Sample c;
      if (!s.defaults) c.attrs.emplace("data_format", s.format);
      if (grad) c.inputs = {f32_in("dy", s.x, u)};
      else c.inputs = {f32_in("x", s.x, u), f32_in("b", {s.c}, u)};
      out.push_back(std::move(c));
    }
    return out;
  };
}

}  // namespace dlrt::ops::samples
