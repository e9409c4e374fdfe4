// tests/conformance/compare.hpp: one output of a device against the reference's.
//
// Relative-to-scale error, as docs/ops.md defines it: max|out - ref| / max(1, max|ref|),
// over finite reference values. A NaN or infinity must be matched by the same value (a NaN in
// the reference is what the spec asks for, e.g. log(-1) or an out-of-range label; a NaN in
// the output where the reference is finite is usually the poison the driver wrote before the
// run, i.e. an element the device never wrote). Exact ops compare values for equality;
// integer and bool outputs compare by their bytes whatever the op's tolerance.
#pragma once

#include <string>

#include "case.hpp"

namespace dlrt::conformance {

struct Comparison {
  bool ok = true;
  std::string problem;   // when !ok: "dims (2,3) != (3,2)" or "" for a value mismatch
  double max_error = 0;  // relative-to-scale (or absolute, for exact ops); inf for a NaN mismatch
  double scale = 1;      // max(1, max|ref|)
  int64_t where = -1;    // flat index of the worst element
  double expected = 0, got = 0;
  int64_t mismatches = 0;  // elements over the tolerance
  // "max error 3.2e-02 (tolerance 1e-05, scale 4.1) at [0,2,1] (flat 7): expected 1.25 got
  // 1.21; 3 of 60 elements over"
  std::string text(const HostTensor& ref, const Tolerance& tol) const;
};

Comparison compare(const HostTensor& ref, const HostTensor& out, const Tolerance& tol);

}  // namespace dlrt::conformance
