// tests/conformance/cases_reduce_shape.cc: reductions (reduce_sum/mean/max, reduce_max_grad)
// and the ops that only restate a shape (broadcast_to, reshape, flatten, transpose).
// Reductions cover all axes (the default), one axis, negative axes, several axes, keepdims
// and scalars; the shape ops also move integer and u8 data.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cases_util.hpp"

namespace dlrt::conformance {
namespace {
using detail::f32;
using detail::typed;

struct Reduction {
  Dims x;
  std::vector<int64_t> axes;  // as given to the op (may be negative); empty = all
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

std::vector<Attr> reduce_attrs(const Reduction& r) {
  if (r.defaults) return {};
  return {a_ints("axes", r.axes), a_bool("keepdims", r.keepdims)};
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

// reduce_max_grad's y: the max of earlier[0] (x) over r's axes, computed here so that y is
// exactly what reduce_max gives (max is exact in any precision).
Fill max_of_x(Reduction r) {
  return [r](Rng&, HostTensor& y, const std::vector<HostTensor>& earlier) {
    const HostTensor& x = earlier.at(0);
    const int64_t rank = static_cast<int64_t>(x.dims.size());
    std::vector<bool> reduced(x.dims.size(), r.axes.empty());
    for (int64_t a : r.axes) reduced[a < 0 ? a + rank : a] = true;
    std::vector<double> best(static_cast<size_t>(y.size()), -std::numeric_limits<double>::infinity());
    for (int64_t i = 0; i < x.size(); ++i) {
      // Flat index in y: the multi-index of x with reduced axes dropped (their extent is 1
      // under keepdims, so dropping them gives the same flat index).
      int64_t rest = i, yi = 0, stride = 1;
      for (int64_t k = rank - 1; k >= 0; --k) {
        const int64_t idx = rest % x.dims[k];
        rest /= x.dims[k];
        if (!reduced[k]) {
          yi += idx * stride;
          stride *= x.dims[k];
        }
      }
      best[yi] = std::max(best[yi], x.get(i));
    }
    for (int64_t i = 0; i < y.size(); ++i) y.set(i, best[i]);
  };
}

}  // namespace

std::vector<Case> reduce_shape_cases() {
  std::vector<Case> cases;
  const Fill u = uniform(-2, 2);
  for (const Reduction& r : kReductions) {
    cases.push_back({"reduce_sum", {f32("x", r.x, u)}, reduce_attrs(r)});
    cases.push_back({"reduce_mean", {f32("x", r.x, u)}, reduce_attrs(r)});
    cases.push_back({"reduce_max", {f32("x", r.x, distinct(-3, 3))}, reduce_attrs(r)});
    const Dims y = reduced_dims(r);
    cases.push_back({"reduce_max_grad",
                     {f32("x", r.x, distinct(-3, 3)), f32("y", y, max_of_x(r)), f32("dy", y, u)},
                     reduce_attrs(r)});
  }
  // Ties are well defined for the gradient: dy is split equally among the maxima.
  {
    const Reduction r{{4, 6}, {1}, true, false};
    cases.push_back({"reduce_max_grad",
                     {f32("x", r.x, integers(0, 2)), f32("y", reduced_dims(r), max_of_x(r)),
                      f32("dy", reduced_dims(r), u)},
                     reduce_attrs(r), {}, true, "ties: dy split among the maxima"});
  }
  // A mean over many elements (accumulation order matters at 1e-4).
  cases.push_back({"reduce_mean", {f32("x", {3, 1000}, uniform(0, 10))}, {a_ints("axes", {1})}});
  cases.push_back({"reduce_sum", {f32("x", {2000}, uniform(-1, 1))}});

  // broadcast_to
  cases.push_back({"broadcast_to", {f32("x", {3, 1}, u)}, {a_ints("shape", {2, 3, 4})}});
  cases.push_back({"broadcast_to", {f32("x", {5}, u)}, {a_ints("shape", {4, 5})}});
  cases.push_back({"broadcast_to", {f32("x", {}, u)}, {a_ints("shape", {2, 2})}});
  cases.push_back({"broadcast_to", {f32("x", {1, 1}, u)}, {a_ints("shape", {3, 1, 2})}});
  cases.push_back({"broadcast_to", {typed("x", DLRT_I32, {1, 3}, integers(-50, 50))},
                   {a_ints("shape", {4, 3})}, {}, false});

  // reshape: -1 inferred, to rank 1, to a scalar, integer data.
  cases.push_back({"reshape", {f32("x", {2, 3, 4}, u)}, {a_ints("shape", {4, -1})}});
  cases.push_back({"reshape", {f32("x", {2, 3, 4}, u)}, {a_ints("shape", {24})}});
  cases.push_back({"reshape", {f32("x", {1}, u)}, {a_ints("shape", {})}, {}, true, "to a scalar"});
  cases.push_back({"reshape", {typed("x", DLRT_I64, {6}, integers(-1000, 1000))},
                   {a_ints("shape", {1, 2, 1, 3})}, {}, false});

  // flatten
  cases.push_back({"flatten", {f32("x", {2, 3, 4, 5}, u)}});
  cases.push_back({"flatten", {f32("x", {7}, u)}, {}, {}, true, "rank 1 gives (N,1)"});
  cases.push_back({"flatten", {f32("x", {1, 4, 4, 3}, u)}});
  cases.push_back({"flatten", {typed("x", DLRT_U8, {2, 5, 5}, integers(0, 255))}, {}, {}, false});

  // transpose: NHWC<->NCHW, 2-D, a rotation, 5-D, integer data.
  cases.push_back({"transpose", {f32("x", {2, 3, 4, 5}, u)}, {a_ints("perm", {0, 3, 1, 2})}});
  cases.push_back({"transpose", {f32("x", {2, 3, 4, 5}, u)}, {a_ints("perm", {0, 2, 3, 1})}});
  cases.push_back({"transpose", {f32("x", {3, 5}, u)}, {a_ints("perm", {1, 0})}});
  cases.push_back({"transpose", {f32("x", {2, 3, 4}, u)}, {a_ints("perm", {2, 0, 1})}});
  cases.push_back({"transpose", {f32("x", {2, 1, 3, 2, 3}, u)}, {a_ints("perm", {4, 2, 0, 3, 1})}});
  cases.push_back({"transpose", {typed("x", DLRT_I32, {3, 7}, integers(-99, 99))},
                   {a_ints("perm", {1, 0})}, {}, false});
  return cases;
}

}  // namespace dlrt::conformance
