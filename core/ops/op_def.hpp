// core/ops/op_def.hpp: what the registry knows about one op.
//
// An OpDef is the machine-readable form of one row of docs/ops.md: the op's name, its
// inputs (name, allowed dtypes, the shape it expects), its outputs, its attributes with
// defaults, which inputs are differentiable, which outputs may alias which inputs, and the
// function that infers output types from input types and (complete) attributes.
// The OpDefs themselves live in the infer_*.cc files, one per op family.
#pragma once

#include <dlrt/types.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "attrs.hpp"
#include "sample.hpp"
#include "shape_util.hpp"
#include "status.hpp"

namespace dlrt::ops {

// The static type of a value in a graph: element type and dense dims.
struct TensorType {
  dlrt_dtype dtype = DLRT_DTYPE_INVALID;
  Dims dims;

  int rank() const { return static_cast<int>(dims.size()); }
  int64_t num_elements() const { return ops::num_elements(dims); }
  friend bool operator==(const TensorType& a, const TensorType& b) {
    return a.dtype == b.dtype && a.dims == b.dims;
  }
  friend bool operator!=(const TensorType& a, const TensorType& b) { return !(a == b); }
};
std::string to_string(const TensorType& t);  // "f32(1,28,28,1)"

using DtypeSet = std::vector<dlrt_dtype>;
// Float operands: f32 everywhere, f16/bf16 where a device supports them (its op_supported
// says no otherwise; the registry accepts them).
inline const DtypeSet kFloatTypes = {DLRT_F32, DLRT_F16, DLRT_BF16};
// Labels and indices.
inline const DtypeSet kIndexTypes = {DLRT_I32, DLRT_I64};
// Numbers of every kind: the floats, f64 and the integers, signed and unsigned, 8 to 64 bits
// (ONNX models compare, add and take the maximum of shape arithmetic, token ids, 8-bit pixels
// and 16-bit audio samples). Ops that admit them compute integers in their own type, wrapping
// modulo 2^bits as C++'s unsigned arithmetic (NumPy's).
inline const DtypeSet kNumericTypes = {DLRT_F32, DLRT_F16, DLRT_BF16, DLRT_F64, DLRT_I32, DLRT_I64,
                                       DLRT_U8,  DLRT_I8,  DLRT_U16,  DLRT_I16, DLRT_U32, DLRT_U64};
// Data-movement operands (copy, reshape, gather_rows, cast, ...): any dtype.
inline const DtypeSet kAllTypes = {DLRT_F32, DLRT_F16, DLRT_BF16, DLRT_F64, DLRT_I32,
                                   DLRT_I64, DLRT_U8,  DLRT_I8,   DLRT_U16, DLRT_I16,
                                   DLRT_U32, DLRT_U64, DLRT_BOOL};

struct InputSpec {
  std::string name;   // "x"
  DtypeSet dtypes;    // allowed element types
  std::string shape;  // for docs and messages: "(N,H,W,C)"; "" when any shape
  // Inputs sharing a non-zero type variable must have the same dtype (ONNX's "T").
  char type_var = 'T';
  bool differentiable = true;  // autodiff propagates a gradient to this input
  // Variadic: only the last input may be; it stands for `min_count` or more inputs of one
  // spec (concat's x...), all sharing its type variable. Their count is the call's.
  bool variadic = false;
  int min_count = 1;
};

struct OutputSpec {
  std::string name;
  std::string shape;  // for docs: "(N,OH,OW,Co)"
  // Variadic: only the last output may be; the op's inference decides how many (split's
  // y..., one per part, at least one).
  bool variadic = false;
};

// Output `output` may share its buffer with input `input` (optimizer updates).
struct InPlace {
  int output;
  int input;
  friend bool operator==(InPlace a, InPlace b) {
    return a.output == b.output && a.input == b.input;
  }
};

class InferContext;
// Fills ctx's outputs, or explains (via ctx.error) why the inputs/attributes do not fit.
// Runs after the generic checks: input count, dtypes, type variables, dims >= 1, and a
// complete, type-checked attribute set.
using InferFn = Status (*)(InferContext& ctx);

// How the conformance suite compares a device's outputs with the reference device's
// (docs/ops.md, "Conformance tolerances"): exact (bit-for-bit values, NaN equals NaN) or
// max|out - ref| / max(1, max|ref|) <= rel.
struct Tolerance {
  bool exact = false;
  double rel = 1e-5;
};
inline constexpr Tolerance kExact{true, 0};
inline constexpr Tolerance kElementwiseTol{false, 1e-5};  // one rounding per element
inline constexpr Tolerance kReductionTol{false, 1e-4};    // sums whose order differs
inline constexpr Tolerance kGemmTol{false, 1e-3};         // long dot products (conv, matmul)

// The op's conformance samples (sample.hpp), built from its own definition, so a family's
// shape set is written once and each op of it only names its value ranges.
using SampleFn = std::function<std::vector<Sample>(const struct OpDef&)>;

struct OpDef {
  std::string name;
  std::string family;  // "conv_pool", "elementwise", "reduce_shape", "misc", "train"
  std::string doc;     // one line, for dlprobe --ops
  std::vector<InputSpec> inputs;
  std::vector<OutputSpec> outputs;
  std::vector<AttrSpec> attrs;
  InferFn infer = nullptr;
  std::vector<InPlace> in_place;

  // ---- properties the core reads instead of lists of op names ----
  // The op's meaning version, sent to plugins in dlrt_op_desc.op_version (ABI 1.2). It grows
  // when an op's arithmetic or attributes change meaning; a plugin that only knows an older
  // version answers "unsupported" instead of computing the old meaning silently.
  int version = 1;
  // Draws random numbers with the run count (dlrt_kernel_args.rng_offset /
  // rng_offset_device): the executor gives its device the device-side run-count word so a
  // captured graph draws fresh numbers on every replay.
  bool uses_rng = false;
  // Writes state that outlives the run (the in-place optimizer updates, batch_norm_train's
  // running statistics): a training step (run_assigns) always runs it, even when nothing
  // fetches or assigns its results (core/exec/select.cc).
  bool stateful = false;
  // Why the op has no gradient rule (autodiff's message when it lies on a gradient path);
  // empty when the op is differentiable and core/autodiff has its rule (a test checks both
  // directions).
  std::string no_gradient;
  Tolerance tolerance = kElementwiseTol;
  SampleFn samples;  // never empty in the registry (a test checks)

  // Chainable setters for the tables in infer_*.cc:
  //   unary("relu", ...).gradient_free("...").tol(kExact)
  OpDef& draws_random() {
    uses_rng = true;
    return *this;
  }
  OpDef& with_state() {
    stateful = true;
    return *this;
  }
  OpDef& gradient_free(std::string why) {
    no_gradient = std::move(why);
    return *this;
  }
  OpDef& tol(Tolerance t) {
    tolerance = t;
    return *this;
  }
  OpDef& sampled(SampleFn fn) {
    samples = std::move(fn);
    return *this;
  }
  OpDef& with_attr(AttrSpec spec) {
    attrs.push_back(std::move(spec));
    return *this;
  }
  OpDef& at_version(int v) {
    version = v;
    return *this;
  }

  const AttrSpec* find_attr(std::string_view attr) const;
  int input_index(std::string_view input) const;  // -1 when absent
  // The spec of call input / output i: inputs[i], or the variadic last spec for every i past
  // it. Read these rather than inputs[i] / outputs[i], which are the declared specs only.
  bool variadic_inputs() const { return !inputs.empty() && inputs.back().variadic; }
  bool variadic_outputs() const { return !outputs.empty() && outputs.back().variadic; }
  const InputSpec& input_spec(size_t i) const {
    return i < inputs.size() ? inputs[i] : inputs.back();
  }
  const OutputSpec& output_spec(size_t o) const {
    return o < outputs.size() ? outputs[o] : outputs.back();
  }
  // One line: "conv2d(x: f32|f16|bf16 (N,H,W,C), w: ...) -> y; strides: ints = (1,1), ..."
  std::string signature() const;
};

// What an InferFn sees: the op, its input types and its complete attributes. Gives typed
// attribute access (safe: the attributes were resolved against the OpDef) and builds
// messages with the registry's conventions: "<op>: input 1 (w) ...".
class InferContext {
 public:
  InferContext(const OpDef& def, const std::vector<TensorType>& inputs, const AttrMap& attrs)
      : def_(def), inputs_(inputs), attrs_(attrs) {}

  const OpDef& def() const { return def_; }
  const std::string& op() const { return def_.name; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }  // the call's count
  const TensorType& input(int i) const { return inputs_[i]; }
  const Dims& dims(int i) const { return inputs_[i].dims; }
  int rank(int i) const { return inputs_[i].rank(); }
  // "input 1 (w)"
  std::string label(int i) const;

  int64_t attr_int(std::string_view n) const { return attr(n).as_int(); }
  double attr_float(std::string_view n) const { return attr(n).as_float(); }
  bool attr_bool(std::string_view n) const { return attr(n).as_bool(); }
  const std::string& attr_string(std::string_view n) const { return attr(n).as_string(); }
  const Ints& attr_ints(std::string_view n) const { return attr(n).as_ints(); }
  dlrt_dtype attr_dtype(std::string_view n) const { return attr(n).as_dtype(); }
  const AttrMap& attrs() const { return attrs_; }

  // INVALID_ARGUMENT "<op>: <formatted text>".
  template <typename... Args>
  Status error(fmt::format_string<Args...> format, Args&&... args) const {
    return Status(DLRT_INVALID_ARGUMENT,
                  def_.name + ": " + fmt::format(format, std::forward<Args>(args)...));
  }
  // "conv2d: input 0 (x) must have rank 4 (N,H,W,C), got rank 3"; `dims_doc` may be "".
  Status expect_rank(int i, int rank, std::string_view dims_doc = "") const;
  Status expect_min_rank(int i, int min_rank) const;
  // Input j has exactly the dims of input i.
  Status expect_same_dims(int i, int j) const;

  void add_output(dlrt_dtype dtype, Dims dims) { outputs_.push_back({dtype, std::move(dims)}); }
  std::vector<TensorType>& outputs() { return outputs_; }

  // Replaces an attribute of the instance with what the inference derived, so plugins get
  // it spelled out: conv and pool ops set "pads" to the padding SAME gives. `name` must be
  // an attribute of the OpDef; instantiate applies these after a successful inference.
  void normalize(std::string name, AttrValue value) {
    normalized_.insert_or_assign(std::move(name), std::move(value));
  }
  const AttrMap& normalized() const { return normalized_; }

 private:
  const AttrValue& attr(std::string_view n) const;

  const OpDef& def_;
  const std::vector<TensorType>& inputs_;
  const AttrMap& attrs_;
  std::vector<TensorType> outputs_;
  AttrMap normalized_;
};

}  // namespace dlrt::ops
