// core/ops/samples_elementwise.cc: samples of the elementwise family (samples.hpp). Shapes:
// scalars, rank 1 of odd length, ranks 3 and 4; binary ops broadcast both ways (a stretches to
// b and b to a) and from rank 0.
#include "samples.hpp"

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

SampleFn comparison() { return binary(integers(-2, 2), integers(-2, 2)); }

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
