// core/ops/samples_reduce_shape.cc: samples of the reductions (reduce_sum/mean/max,
// reduce_max_grad) and of the ops that only restate a shape (broadcast_to, reshape, flatten,
// transpose). Reductions cover all axes (the default), one axis, negative axes, several axes,
// keepdims and scalars; the shape ops also move integer and u8 data.
#include "samples.hpp"

namespace dlrt::ops::samples {
namespace {

struct Reduction {
  Dims x;
  Ints axes;  // as given to the op (may be negative); empty = all
  bool keepdims;
  bool defaults;  // give no attribute at all (axes [] and keepdims false)
};

const Reduction kReductions[] = {
    {{3, 5, 7}, {}, false, true},
    {{3, 5, 7}, {1}, false, false},
    {{3, 5, 7}, {-1}, true, false},
    {{3, 5, 7}, {0, 2}, false, false},
    {{2, 3, 4, 5}, {-3, -1}, true, false},
    {{2, 3, 4, 5}, {1, 2, 3}, false, false},
    {{7}, {0}, true, false},
    {{1, 9}, {}, true, false},
    {{}, {}, false, false},  // a scalar reduces to itself
};

AttrMap reduce_attrs(const Reduction& r) {
  if (r.defaults) return {};
  return {{"axes", r.axes}, {"keepdims", r.keepdims}};
}

// The dims of reduce_*(x) for r.
Dims reduced_dims(const Reduction& r) {
  const int64_t rank = static_cast<int64_t>(r.x.size());
  std::vector<bool> reduced(r.x.size(), r.axes.empty());
  for (int64_t a : r.axes) reduced[a < 0 ? a + rank : a] = true;
  Dims y;
  for (size_t k = 0; k < r.x.size(); ++k) {
    if (!reduced[k]) y.push_back(r.x[k]);
    else if (r.keepdims) y.push_back(1);
  }
  return y;
}

Sample max_grad(const Reduction& r, Values x, std::string note = "") {
  const Dims y = reduced_dims(r);
  return {{f32_in("x", r.x, x), f32_in("y", y, max_of_input0()), f32_in("dy", y, uniform(-2, 2))},
          reduce_attrs(r),
          true,
          std::move(note)};
}

}  // namespace

SampleFn reduce(ReducePass pass) {
  return [pass](const OpDef&) {
    std::vector<Sample> out;
    const Values u = uniform(-2, 2);
    for (const Reduction& r : kReductions) {
      switch (pass) {
        case ReducePass::kSum:
        case ReducePass::kMean:
          out.push_back({{f32_in("x", r.x, u)}, reduce_attrs(r)});
          break;
        case ReducePass::kMax:
          out.push_back({{f32_in("x", r.x, distinct(-3, 3))}, reduce_attrs(r)});
          break;
        case ReducePass::kMaxGrad:
          out.push_back(max_grad(r, distinct(-3, 3)));
          break;
      }
    }
    // f64 (not required: a device may decline it), over two axes of three.
    if (pass != ReducePass::kMaxGrad)
      out.push_back({{typed_in("x", DLRT_F64, {3, 4, 5}, pass == ReducePass::kMax ? distinct(-3, 3) : u)},
                     {{"axes", Ints{0, 2}}},
                     false,
                     "f64"});
    switch (pass) {
      // A sum or mean over many elements (accumulation order matters at 1e-4).
      case ReducePass::kSum:
        out.push_back({{f32_in("x", {2000}, uniform(-1, 1))}});
        break;
      case ReducePass::kMean:
        out.push_back({{f32_in("x", {3, 1000}, uniform(0, 10))}, {{"axes", Ints{1}}}});
        break;
      // Ties are well defined for the gradient: dy is split equally among the maxima.
      case ReducePass::kMaxGrad:
        out.push_back(max_grad({{4, 6}, {1}, true, false}, integers(0, 2),
                               "ties: dy split among the maxima"));
        break;
      case ReducePass::kMax:
        break;
    }
    return out;
  };
}

std::vector<Sample> broadcast_to(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      {{f32_in("x", {3, 1}, u)}, {{"shape", Ints{2, 3, 4}}}},
      {{f32_in("x", {5}, u)}, {{"shape", Ints{4, 5}}}},
      {{f32_in("x", {}, u)}, {{"shape", Ints{2, 2}}}},
      {{f32_in("x", {1, 1}, u)}, {{"shape", Ints{3, 1, 2}}}},
      {{typed_in("x", DLRT_I32, {1, 3}, integers(-50, 50))}, {{"shape", Ints{4, 3}}}, false},
  };
}

// -1 inferred, to rank 1, to a scalar, integer data.
std::vector<Sample> reshape(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      {{f32_in("x", {2, 3, 4}, u)}, {{"shape", Ints{4, -1}}}},
      {{f32_in("x", {2, 3, 4}, u)}, {{"shape", Ints{24}}}},
      {{f32_in("x", {1}, u)}, {{"shape", Ints{}}}, true, "to a scalar"},
      {{typed_in("x", DLRT_I64, {6}, integers(-1000, 1000))}, {{"shape", Ints{1, 2, 1, 3}}}, false},
  };
}

std::vector<Sample> flatten(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      {{f32_in("x", {2, 3, 4, 5}, u)}},
      {{f32_in("x", {7}, u)}, {}, true, "rank 1 gives (N,1)"},
      {{f32_in("x", {1, 4, 4, 3}, u)}},
      {{typed_in("x", DLRT_U8, {2, 5, 5}, integers(0, 255))}, {}, false},
  };
}

// NHWC<->NCHW, 2-D, a rotation, 5-D, integer data.
std::vector<Sample> transpose(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      {{f32_in("x", {2, 3, 4, 5}, u)}, {{"perm", Ints{0, 3, 1, 2}}}},
      {{f32_in("x", {2, 3, 4, 5}, u)}, {{"perm", Ints{0, 2, 3, 1}}}},
      {{f32_in("x", {3, 5}, u)}, {{"perm", Ints{1, 0}}}},
      {{f32_in("x", {2, 3, 4}, u)}, {{"perm", Ints{2, 0, 1}}}},
      {{f32_in("x", {2, 1, 3, 2, 3}, u)}, {{"perm", Ints{4, 2, 0, 3, 1}}}},
      {{typed_in("x", DLRT_I32, {3, 7}, integers(-99, 99))}, {{"perm", Ints{1, 0}}}, false},
      {{typed_in("x", DLRT_I16, {2, 3, 5}, bits())}, {{"perm", Ints{2, 0, 1}}}, false, "i16"},
      {{typed_in("x", DLRT_U64, {3, 4}, bits())}, {{"perm", Ints{1, 0}}}, false, "u64"},
  };
}

}  // namespace dlrt::ops::samples
