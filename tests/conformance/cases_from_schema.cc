// tests/conformance/cases_from_schema.cc: the case table, made from the op schema.
//
// Every op of the core's registry (core/ops) declares its samples — operand shapes,
// attributes and value ranges — in its schema entry (core/ops/sample.hpp). This file turns
// each sample into a Case: value ranges become this suite's seeded generators, attributes
// become C attributes, and a sample marked in_place runs with the op's in-place pairs. So a
// new op in the schema is in the suite with nothing written here. The first samples of each
// op whose f32 inputs may be f16/bf16 come again in those dtypes (narrow_variant below).
#include <algorithm>
#include <cstring>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "case.hpp"
#include "narrow_float.hpp"  // plugins/common
#include "ops/op_instance.hpp"
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
    case ops::Values::kBits:
      return bits();
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

// ---- 16-bit variants (docs/ops.md, "16-bit floats") -----------------------------------------

// How many of an op's samples get f16 and bf16 variants: each variant runs the whole case
// again, and two shapes per op show the conversions; the f32 samples cover the shapes.
constexpr size_t kNarrowVariantsPerOp = 2;

// The extra relative error a 16-bit output may carry: the device rounds its (f32) result and
// the reference its (f64) one, so the two may land one unit in the last place apart — 2^-7 of
// the value for bf16, 2^-10 for f16 — which is at most that much of max(1, max|ref|).
double narrow_tolerance(dlrt_dtype d) { return d == DLRT_BF16 ? 1e-2 : 2e-3; }

// Random f32 values never land on an op's kinks (relu's 0, hard_swish's -3 and 3, clip's
// bounds), where a device and the oracle may take different sides; rounded to 8 or 11 bits
// they often do. The 16-bit variants' random values are therefore moved one unit away from
// any multiple of 1/4, which every kink of the op set is.
Fill off_quarters(Fill fill) {
  return [fill](Rng& rng, HostTensor& t, const std::vector<HostTensor>& earlier) {
    fill(rng, t, earlier);
    for (int64_t i = 0; i < t.size(); ++i) {
      const double v = t.get(i);
      if (!std::isfinite(v) || v * 4 != std::floor(v * 4)) continue;
      uint16_t h = plugin::double_to_narrow(t.dtype, v);
      ++h;  // the next value away from zero (+0 becomes the smallest positive one)
      std::memcpy(t.bytes.data() + i * 2, &h, 2);
    }
  };
}

bool admits(const ops::InputSpec& spec, dlrt_dtype d) {
  return std::find(spec.dtypes.begin(), spec.dtypes.end(), d) != spec.dtypes.end();
}

// The sample with every f32 input whose schema spec admits `narrow` made `narrow`, when that
// is a valid call of the op. None for ops that draw random numbers (a 16-bit draw is the f32
// or f64 draw rounded, and the two oracles draw in different precisions), for samples whose
// values must be distinct (rounding to 8 or 11 bits makes ties, and "the first max" is then a
// choice), for f16 samples whose values leave its range, and for samples without f32 inputs.
std::optional<Case> narrow_variant(const ops::OpDef& def, const ops::Sample& s, dlrt_dtype narrow) {
  if (def.uses_rng || def.inputs.empty()) return std::nullopt;
  ops::Sample v = s;
  bool changed = false;
  for (size_t k = 0; k < v.inputs.size(); ++k) {
    ops::SampleInput& in = v.inputs[k];
    if (in.values.kind == ops::Values::kDistinct || in.values.kind == ops::Values::kMaxOfInput0)
      return std::nullopt;
    // f16's largest finite value is 65504: wider ranges would feed infinities.
    if (narrow == DLRT_F16 && std::max(std::fabs(in.values.lo), std::fabs(in.values.hi)) > 6e4)
      return std::nullopt;
    const ops::InputSpec& spec = def.inputs[std::min(k, def.inputs.size() - 1)];
    if (in.dtype == DLRT_F32 && admits(spec, narrow)) {
      in.dtype = narrow;
      changed = true;
    }
  }
  if (!changed) return std::nullopt;
  std::vector<ops::TensorType> types;
  for (const ops::SampleInput& in : v.inputs) types.push_back({in.dtype, in.dims});
  if (!ops::instantiate(def.name, types, v.attrs).ok()) return std::nullopt;
  Case c = case_for(def, v);
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const ops::Values::Kind kind = v.inputs[k].values.kind;
    if (c.inputs[k].dtype == narrow &&
        (kind == ops::Values::kUniform || kind == ops::Values::kAwayFromZero))
      c.inputs[k].fill = off_quarters(std::move(c.inputs[k].fill));
  }
  c.narrow_tolerance = narrow_tolerance(narrow);
  return c;
}

}  // namespace

Tolerance tolerance_for(const Case& c) {
  Tolerance t = tolerance_for(c.op);
  if (!t.exact) t.rel += c.narrow_tolerance;
  return t;
}

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
    for (const ops::OpDef* def : ops::all_ops()) {
      const std::vector<ops::Sample> samples = ops::op_samples(*def);
      for (const ops::Sample& s : samples) t->push_back(case_for(*def, s));
      // After the op's own cases, so their indices (and seeds) stay as they were.
      for (dlrt_dtype narrow : {DLRT_BF16, DLRT_F16}) {
        size_t made = 0;
        for (const ops::Sample& s : samples) {
          if (made == kNarrowVariantsPerOp) break;
          if (std::optional<Case> c = narrow_variant(*def, s, narrow)) {
            t->push_back(std::move(*c));
            ++made;
          }
        }
      }
    }
    return t;
  }();
  return *table;
}

}  // namespace dlrt::conformance
