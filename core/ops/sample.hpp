// core/ops/sample.hpp: the samples of an op — concrete operand shapes, attributes and value
// ranges that the schema itself declares, so that adding an op to the schema adds it to
// everything that needs example calls:
//   - dlprobe --ops and dlrt_op_probe ask each device about the op's first sample
//     (op_examples.hpp);
//   - the conformance suite (tests/conformance) runs every sample on every device against
//     the reference device;
//   - the registry's tests instantiate every sample (each must be a valid call).
//
// A sample is plain data: it says which values an operand should hold (uniform in [-2,2),
// distinct, labels in [0,K), ...) but draws none; the conformance suite draws them with its
// own seeded generator. Family helpers (samples_*.cc) build the usual shape sets once —
// unary elementwise: a scalar, an odd rank-1 length, ranks 3 and 4; images: batch 1 and 2,
// odd sizes, channel counts that are not multiples of 8, SAME and VALID, strides, dilations —
// and an op's entry only names its value ranges and attributes.
#pragma once

#include <dlrt/types.h>

#include <string>
#include <vector>

#include "attrs.hpp"
#include "shape_util.hpp"

namespace dlrt::ops {

struct OpDef;

// What values one operand should hold.
struct Values {
  enum Kind {
    kUniform,       // uniform in [lo, hi)
    kAwayFromZero,  // random sign, magnitude in [lo, hi] (denominators, relu_grad's x)
    kDistinct,      // all different, >= (hi-lo)/(2n) apart, shuffled: no ties for max/argmax
    kIntegers,      // integers in [lo, hi]
    kConstant,      // every element lo
    kLabels,        // integers in [0, lo); with `out_of_range`, the first is lo and the last -1
    kMaxOfInput0,   // the max of input 0 over the sample's "axes"/"keepdims" (reduce_max's y)
    kBits,          // random bit patterns: every value of an integer dtype (u64's top half too)
  };
  Kind kind = kUniform;
  double lo = -1, hi = 1;
  bool out_of_range = false;
};
inline Values uniform(double lo, double hi) { return {Values::kUniform, lo, hi}; }
inline Values away_from_zero(double lo, double hi) { return {Values::kAwayFromZero, lo, hi}; }
inline Values distinct(double lo, double hi) { return {Values::kDistinct, lo, hi}; }
inline Values integers(double lo, double hi) { return {Values::kIntegers, lo, hi}; }
inline Values constant(double v) { return {Values::kConstant, v, v}; }
inline Values labels(int64_t k, bool out_of_range = false) {
  return {Values::kLabels, static_cast<double>(k), 0, out_of_range};
}
inline Values max_of_input0() { return {Values::kMaxOfInput0, 0, 0}; }
inline Values bits() { return {Values::kBits, 0, 0}; }

struct SampleInput {
  std::string name;  // the operand's name in the schema ("x", "w", "labels")
  dlrt_dtype dtype = DLRT_F32;
  Dims dims;
  Values values;
};

struct Sample {
  std::vector<SampleInput> inputs;
  AttrMap attrs;  // what the caller gives; defaults fill the rest
  // False when the sample uses a dtype beyond f32 tensors and i32/i64/u8 labels, indices and
  // data (f16, f64, ...): the CPU device may decline it without failing the suite.
  bool required = true;
  std::string note;  // what the sample is about when the shapes do not say it ("NaN rows")
  // Run with the op's in-place pairs (OpDef::in_place): outputs written into their inputs'
  // tensors, as the executor runs the optimizer updates.
  bool in_place = false;
};

// Shorthands for the sample tables.
inline SampleInput f32_in(std::string name, Dims dims, Values v) {
  return {std::move(name), DLRT_F32, std::move(dims), v};
}
inline SampleInput typed_in(std::string name, dlrt_dtype dtype, Dims dims, Values v) {
  return {std::move(name), dtype, std::move(dims), v};
}

// Every sample of `def`: its own (def.samples), then one more for each behaviour-changing
// attribute value that none of them uses — every allowed string, both bools, each
// AttrSpec::sample_values entry — made from the first sample by setting that attribute.
std::vector<Sample> op_samples(const OpDef& def);

// (N,H,W,C) or (N,C,H,W).
Dims image_dims(const std::string& format, int64_t n, int64_t h, int64_t w, int64_t c);

}  // namespace dlrt::ops
