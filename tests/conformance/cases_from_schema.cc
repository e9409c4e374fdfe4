// tests/conformance/cases_from_schema.cc: the case table, made from the op schema.
//
// Every op of the core's registry (core/ops) declares its samples — operand shapes,
// attributes and value ranges — in its schema entry (core/ops/sample.hpp). This file turns
// each sample into a Case: value ranges become this suite's seeded generators, attributes
// become C attributes, and a sample marked in_place runs with the op's in-place pairs. So a
// new op in the schema is in the suite with nothing written here.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "case.hpp"
#include "ops/op_registry.hpp"
#include "ops/sample.hpp"

namespace dlrt::conformance {
namespace {

// Labels in [0,K), except that the first element gets K and the last -1 when `out_of_range`.
Fill labels(int64_t k, bool out_of_range) {
  return [k, out_of_range](Rng& rng, HostTensor& t, const std::vector<HostTensor>&) {
    for (int64_t i = 0; i < t.size(); ++i) t.set(i, static_cast<double>(rng.integer(0, k - 1)));
    if (out_of_range) {
      t.set(0, static_cast<double>(k));
      t.set(t.size() - 1, -1);
    }
  };
}

// reduce_max_grad's y: the max of earlier[0] (x) over the sample's axes, computed here so
// that y is exactly what reduce_max gives (max is exact in any precision).
Fill max_of_x(std::vector<int64_t> axes) {
  return [axes](Rng&, HostTensor& y, const std::vector<HostTensor>& earlier) {
    const HostTensor& x = earlier.at(0);
    const int64_t rank = static_cast<int64_t>(x.dims.size());
    std::vector<bool> reduced(x.dims.size(), axes.empty());
    for (int64_t a : axes) reduced[a < 0 ? a + rank : a] = true;
    std::vector<double> best(static_cast<size_t>(y.size()),
                             -std::numeric_limits<double>::infinity());
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

Fill fill_for(const ops::Values& v, const ops::AttrMap& attrs) {
  switch (v.kind) {
    case ops::Values::kUniform:
      return uniform(v.lo, v.hi);
    case ops::Values::kAwayFromZero:
      return away_from_zero(v.lo, v.hi);
    case ops::Values::kDistinct:
      return distinct(v.lo, v.hi);
    case ops::Values::kIntegers:
      return integers(static_cast<int64_t>(v.lo), static_cast<int64_t>(v.hi));
    case ops::Values::kConstant:
      return constant(v.lo);
    case ops::Values::kLabels:
      return labels(static_cast<int64_t>(v.lo), v.out_of_range);
    case ops::Values::kMaxOfInput0: {
      auto it = attrs.find("axes");
      return max_of_x(it == attrs.end() ? std::vector<int64_t>{} : it->second.as_ints());
    }
  }
  throw std::logic_error("unknown ops::Values kind");
}

Attr attr_for(const std::string& name, const ops::AttrValue& v) {
  switch (v.type()) {
    case DLRT_ATTR_INT:
      return a_int(name, v.as_int());
    case DLRT_ATTR_FLOAT:
      return a_float(name, v.as_float());
    case DLRT_ATTR_BOOL:
      return a_bool(name, v.as_bool());
    case DLRT_ATTR_STRING:
      return a_str(name, v.as_string());
    case DLRT_ATTR_INTS:
      return a_ints(name, v.as_ints());
    case DLRT_ATTR_DTYPE:
      return a_dtype(name, v.as_dtype());
    case DLRT_ATTR_FLOATS: {
      Attr a;
      a.name = name;
      a.type = DLRT_ATTR_FLOATS;
      a.floats = v.as_floats();
      return a;
    }
    default:
      break;
  }
  throw std::logic_error("attribute '" + name + "' of unknown type");
}

Case case_for(const ops::OpDef& def, const ops::Sample& s) {
  Case c;
  c.op = def.name;
  for (const ops::SampleInput& in : s.inputs)
    c.inputs.push_back(TensorSpec{in.name, in.dtype, in.dims, fill_for(in.values, s.attrs)});
  for (const auto& [name, value] : s.attrs) c.attrs.push_back(attr_for(name, value));
  if (s.in_place)
    for (ops::InPlace p : def.in_place) c.in_place.emplace_back(p.output, p.input);
  c.required = s.required;
  c.note = s.note;
  return c;
}

}  // namespace

Tolerance tolerance_for(const std::string& op) {
  const ops::OpDef* def = ops::find_op(op);
  if (def == nullptr) throw std::invalid_argument("tolerance_for: unknown op '" + op + "'");
  return {def->tolerance.exact, def->tolerance.rel};
}

bool draws_random(const std::string& op) {
  const ops::OpDef* def = ops::find_op(op);
  if (def == nullptr) throw std::invalid_argument("draws_random: unknown op '" + op + "'");
  return def->uses_rng;
}

const std::vector<Case>& all_cases() {
  static const std::vector<Case>* table = [] {
    auto* t = new std::vector<Case>();
    for (const ops::OpDef* def : ops::all_ops())
      for (const ops::Sample& s : ops::op_samples(*def)) t->push_back(case_for(*def, s));
    return t;
  }();
  return *table;
}

}  // namespace dlrt::conformance
