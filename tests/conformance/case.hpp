// tests/conformance/case.hpp: the case table of the conformance suite.
//
// A Case is one concrete call of one op: its input tensors (dtype, dims and a value
// generator that suits the op), its attributes, and what the driver should do with the
// outputs. The table is made from the op schema (core/ops): one case per sample that an op's
// schema entry declares (cases_from_schema.cc). Nothing here talks to a device or to libdlrt,
// so cases_test.cc checks the table against the registry without any plugin.
//
// What it is not: the oracle. Expected values come from the reference device at run time
// (conformance_test.cc); this file only decides what to ask.
#pragma once

#include <dlrt/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace dlrt::conformance {

using Dims = std::vector<int64_t>;

// ---- random numbers ------------------------------------------------------------------------

// splitmix64: small, portable, and the same stream on every platform and standard library,
// so a seed printed on one machine replays on another.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  double uniform(double lo, double hi);     // [lo, hi)
  int64_t integer(int64_t lo, int64_t hi);  // [lo, hi], inclusive
  bool coin() { return (next() >> 63) != 0; }

 private:
  uint64_t state_;
};

// The seed of case `index` of `op` under the run's seed: replaying one case needs only the
// run's seed (a --gtest_filter does not change which numbers a case draws).
uint64_t case_seed(uint64_t run_seed, const std::string& op, size_t index);

// ---- host tensors --------------------------------------------------------------------------

size_t dtype_size(dlrt_dtype dtype);       // 0 for an unknown dtype
const char* dtype_name(dlrt_dtype dtype);  // "f32"
int64_t num_elements(const Dims& dims);
std::string format_dims(const Dims& dims);  // "(1,5,7,3)"; "()" for a scalar

// A dense tensor in host memory. Elements are read and written as double (exact for every
// dtype this suite uses: f32, f64, i32, i64 within 2^53, u8, i8, bool, and f16/bf16, whose
// set() rounds to nearest, ties to even, as a device stores them).
struct HostTensor {
  dlrt_dtype dtype = DLRT_F32;
  Dims dims;
  std::vector<uint8_t> bytes;

  HostTensor() = default;
  HostTensor(dlrt_dtype t, Dims d);
  int64_t size() const { return num_elements(dims); }
  double get(int64_t i) const;
  void set(int64_t i, double v);
  // "[1,2,0,3]": the multi-index of flat element i.
  std::string index_text(int64_t i) const;
  dlrt_tensor_desc desc() const;
};

// Fills `t` (dtype and dims already set). `earlier` are the case's inputs generated before
// this one, for values that depend on them (reduce_max_grad's y is the max of x).
using Fill = std::function<void(Rng& rng, HostTensor& t, const std::vector<HostTensor>& earlier)>;

// Value generators.
Fill uniform(double lo, double hi);
// Random sign, magnitude in [lo, hi]: denominators of div, relu_grad's x away from its kink.
Fill away_from_zero(double lo, double hi);
// Every element different, at least (hi-lo)/(2n) apart, in random order: max-pool, argmax,
// reduce_max and softmax never face a tie, so "the first max" is unambiguous.
Fill distinct(double lo, double hi);
// Integers in [lo, hi] (labels, indices, u8 pixels, cast sources).
Fill integers(int64_t lo, int64_t hi);
// Every element `v`.
Fill constant(double v);
// Random bytes: each element any bit pattern of its dtype (integers over their whole range,
// u64's values above 2^63 and i64's extremes included, which no double-valued fill reaches).
Fill bits();

// ---- attributes ----------------------------------------------------------------------------

// One attribute, owning its value; c() views it as the C struct (valid while this lives).
struct Attr {
  std::string name;
  dlrt_attr_type type = DLRT_ATTR_NONE;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  dlrt_attr c() const;
  std::string value_text() const;  // "(1,1)", "SAME", "0.5", "true", "i64"
};
Attr a_int(std::string name, int64_t v);
Attr a_float(std::string name, double v);
Attr a_bool(std::string name, bool v);
Attr a_str(std::string name, std::string v);
Attr a_ints(std::string name, std::vector<int64_t> v);
Attr a_dtype(std::string name, dlrt_dtype v);

// ---- cases ---------------------------------------------------------------------------------

struct TensorSpec {
  std::string name;  // as docs/ops.md names the operand: "x", "w", "labels"
  dlrt_dtype dtype = DLRT_F32;
  Dims dims;
  Fill fill;
};

struct Case {
  std::string op;
  std::vector<TensorSpec> inputs;
  std::vector<Attr> attrs;
  // (output, input) pairs: on the device under test, output `first` is written into input
  // `second`'s tensor (the in-place optimizer updates, as the executor runs them).
  std::vector<std::pair<int, int>> in_place;
  // False when the case uses a dtype beyond f32 tensors and i32/i64/u8 labels, indices and
  // data (f16, f64, ...): the CPU device may then decline it without failing the suite.
  bool required = true;
  std::string note;  // what the case is about, when the shapes do not say it ("NaN rows")
  // A 16-bit variant of an f32 sample: the relative error its rounding may add to the op's
  // tolerance (0 for the schema's own samples; cases_from_schema.cc).
  double narrow_tolerance = 0;

  // "x f32(1,5,7,3), w f32(3,3,3,5); strides=(2,2) padding=SAME [note]"
  std::string describe() const;
  // Host inputs for this case, drawn from `rng`.
  std::vector<HostTensor> make_inputs(Rng& rng) const;
};

// How an op's outputs are compared with the reference (docs/ops.md, Conformance tolerances).
struct Tolerance {
  bool exact = false;  // bit-for-bit value equality (NaN equals NaN)
  double rel = 0;      // else: max|out - ref| / max(1, max|ref|) <= rel
};
// The op's schema says (core/ops: OpDef::tolerance).
Tolerance tolerance_for(const std::string& op);
// The op's, plus the case's narrow_tolerance unless the op is exact.
Tolerance tolerance_for(const Case& c);
// Whether the op draws random numbers with the run's rng offset (OpDef::uses_rng: random_*,
// dropout, multinomial), so that the driver runs it in fresh contexts.
bool draws_random(const std::string& op);

// Every case, in table order (built once): one per sample of every op of the core's op schema
// (cases_from_schema.cc), ops by name.
const std::vector<Case>& all_cases();
// The cases of `op`, in table order.
std::vector<const Case*> cases_for(const std::string& op);

}  // namespace dlrt::conformance
