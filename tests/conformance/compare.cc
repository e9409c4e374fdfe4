// tests/conformance/compare.cc: see compare.hpp.
#include "compare.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace dlrt::conformance {

Comparison compare(const HostTensor& ref, const HostTensor& out, const Tolerance& tol) {
  Comparison c;
  if (ref.dtype != out.dtype || ref.dims != out.dims) {
    c.ok = false;
    c.problem = std::string("output is ") + dtype_name(out.dtype) + format_dims(out.dims) +
                ", reference is " + dtype_name(ref.dtype) + format_dims(ref.dims);
    c.max_error = std::numeric_limits<double>::infinity();
    return c;
  }
  const int64_t n = ref.size();
  double max_abs = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double r = ref.get(i);
    if (std::isfinite(r)) max_abs = std::max(max_abs, std::fabs(r));
  }
  // Integers (and bool) have one right answer whatever the op's tolerance: they compare by
  // their bytes, so a u64 or i64 off by one is caught even where doubles cannot tell.
  const bool integer = ref.dtype != DLRT_F32 && ref.dtype != DLRT_F64 && ref.dtype != DLRT_F16 &&
                       ref.dtype != DLRT_BF16;
  const size_t es = dtype_size(ref.dtype);
  c.scale = tol.exact || integer ? 1.0 : std::max(1.0, max_abs);
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    const double r = ref.get(i), o = out.get(i);
    double err;
    if (integer) {
      const size_t at = static_cast<size_t>(i) * es;
      const bool same = std::memcmp(ref.bytes.data() + at, out.bytes.data() + at, es) == 0;
      err = same ? 0 : std::max(std::fabs(o - r), 1.0);  // >= 1 where doubles round together
    } else if (std::isnan(r) || std::isnan(o)) {
      err = std::isnan(r) && std::isnan(o) ? 0 : inf;
    } else if (std::isinf(r) || std::isinf(o)) {
      err = r == o ? 0 : inf;
    } else {
      err = std::fabs(o - r) / c.scale;
    }
    const bool bad = tol.exact || integer ? err != 0 : !(err <= tol.rel);
    if (bad) ++c.mismatches;
    if (c.where < 0 || err > c.max_error) {
      c.max_error = err;
      c.where = i;
      c.expected = r;
      c.got = o;
    }
  }
  c.ok = c.mismatches == 0;
  return c;
}

std::string Comparison::text(const HostTensor& ref, const Tolerance& tol) const {
  if (!problem.empty()) return problem;
  std::ostringstream os;
  os.precision(9);
  os << "max error " << max_error;
  if (tol.exact) os << " (exact)";
  else os << " (tolerance " << tol.rel << ", scale " << scale << ")";
  if (where >= 0)
    os << " at " << ref.index_text(where) << " (flat " << where << "): expected " << expected
       << " got " << got;
  if (where >= 0 && std::isnan(got) && !std::isnan(expected))
    os << " (NaN is the poison written before the run: an element never written?)";
  os << "; " << mismatches << " of " << ref.size() << " elements over";
  return os.str();
}

}  // namespace dlrt::conformance
