// op_view.hpp: a read-only, self-contained view of one op instance (a `dlrt_op_desc`), plus the
// small shape helpers every backend needs to agree on: dtype sizes, conv/pool windows from the
// explicit pads the core gives, NHWC/NCHW indexing, broadcast strides, axis normalisation.
//
//   dlrt::plugin::OpView op(desc);                    // copies everything it needs
//   const auto& x = op.input(0);                      // x.dtype, x.dims, x.numel, x.bytes
//   auto strides = op.get_ints("strides");            // throws INVALID_ARGUMENT if missing
//   auto win = dlrt::plugin::window_of(op, 0, H, KH, s, d, OH);  // pads as the core gave them
//
// What it is not: a validator of op semantics, nor a registry of defaults. The core hands a
// plugin only descriptors its op schema (core/ops) accepted: operand counts, dtypes, dims,
// inferred outputs and every attribute (defaults filled, paddings explicit); docs/design.md,
// "What a plugin may trust". A plugin's check therefore answers only what it can run (dtype,
// layout, attribute values it implements) and never re-derives a shape. A missing or mistyped
// attribute here can only come from a host that broke that contract, and throws
// `Error(DLRT_INVALID_ARGUMENT, ...)` naming the op and the attribute.
//
// The view owns copies of the names, dims and attribute values, so a kernel may keep it after
// the `dlrt_op_desc` it was made from is gone (kernel_create copies what it keeps).
// Header-only; internal to this repository's plugins, not part of the SDK.
#pragma once

#include <algorithm>
#include <dlrt/plugin.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plugin_support.hpp"

namespace dlrt::plugin {

// ---- dtypes ------------------------------------------------------------------------------

// Bytes per element; 0 for DLRT_DTYPE_INVALID or an unknown value.
inline size_t dtype_size(int32_t dtype) { return dlrt_dtype_size(dtype); }

// The name used in messages and in docs/ops.md ("f32", "i64", ...).
inline const char* dtype_name(int32_t dtype) {
  const char* name = dlrt_dtype_name(dtype);
  return name != nullptr ? name : "invalid";
}

inline bool dtype_is_float(int32_t dtype) {
  return dtype == DLRT_F32 || dtype == DLRT_F64 || dtype == DLRT_F16 || dtype == DLRT_BF16;
}

// "(2, 3, 4)": dims for messages.
inline std::string dims_string(const std::vector<int64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

inline int64_t product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// ---- tensors -----------------------------------------------------------------------------

// One operand's description, copied out of a dlrt_tensor_desc.
struct TensorView {
  int32_t dtype = DLRT_DTYPE_INVALID;
  int32_t layout = DLRT_LAYOUT_DENSE;
  std::vector<int64_t> dims;  // empty for a scalar
  int64_t numel = 1;          // product of dims (1 for a scalar)
  size_t bytes = 0;           // numel * dtype_size(dtype) (dense layouts only)

  int rank() const { return static_cast<int>(dims.size()); }
  // dims[i]; a negative i counts from the end.
  int64_t dim(int i) const { return dims.at(static_cast<size_t>(i < 0 ? i + rank() : i)); }
  bool dense() const { return layout == DLRT_LAYOUT_DENSE; }
};

inline TensorView tensor_view(const dlrt_tensor_desc& d) {
  TensorView t;
  t.dtype = d.dtype;
  t.layout = d.layout;
  int rank = d.rank < 0 ? 0 : (d.rank > DLRT_MAX_RANK ? DLRT_MAX_RANK : d.rank);
  t.dims.assign(d.dims, d.dims + rank);
  t.numel = product(t.dims);
  t.bytes = static_cast<size_t>(t.numel) * dtype_size(t.dtype);
  return t;
}

// ---- the op ------------------------------------------------------------------------------

class OpView {
 public:
  // An attribute's value, owned.
  struct Attr {
    int32_t type = DLRT_ATTR_NONE;
    int64_t i = 0;
    double f = 0.0;
    std::string s;
    std::vector<int64_t> ints;
    std::vector<double> floats;
  };

  // Copies what it needs from `desc`; throws INVALID_ARGUMENT for a NULL or malformed desc
  // (NULL name or operand, rank out of [0, DLRT_MAX_RANK]).
  explicit OpView(const dlrt_op_desc* desc) {
    if (desc == nullptr) fail(DLRT_INVALID_ARGUMENT, "op descriptor is NULL");
    if (desc->op == nullptr) fail(DLRT_INVALID_ARGUMENT, "op descriptor has no op name");
    name_ = desc->op;
    // ABI 1.2 appended op_version; a 1.0/1.1 host's descriptor stops before it (version 1).
    if (desc->struct_size >= offsetof(dlrt_op_desc, op_version) + sizeof(int32_t))
      version_ = desc->op_version;
    // ABI 1.3 appended constant_inputs; older hosts' descriptors stop before it (none known).
    if (desc->struct_size >= offsetof(dlrt_op_desc, constant_inputs) + sizeof(uint64_t))
      constant_inputs_ = desc->constant_inputs;
    read_operands(desc->num_inputs, desc->inputs, "input", inputs_);
    read_operands(desc->num_outputs, desc->outputs, "output", outputs_);
    for (size_t k = 0; k < desc->num_attrs; ++k) {
      const dlrt_attr* a = desc->attrs != nullptr ? desc->attrs[k] : nullptr;
      if (a == nullptr || a->name == nullptr)
        fail(DLRT_INVALID_ARGUMENT,
             name_ + ": attribute " + std::to_string(k) + " is NULL or unnamed");
      Attr v;
      v.type = a->type;
      v.i = a->i;
      v.f = a->f;
      if (a->type == DLRT_ATTR_STRING) v.s = a->s != nullptr ? a->s : "";
      if (a->type == DLRT_ATTR_INTS && a->count > 0) {
        if (a->ints == nullptr)
          fail(DLRT_INVALID_ARGUMENT, name_ + ": attribute '" + a->name + "' has NULL ints");
        v.ints.assign(a->ints, a->ints + a->count);
      }
      if (a->type == DLRT_ATTR_FLOATS && a->count > 0) {
        if (a->floats == nullptr)
          fail(DLRT_INVALID_ARGUMENT, name_ + ": attribute '" + a->name + "' has NULL floats");
        v.floats.assign(a->floats, a->floats + a->count);
      }
      attrs_[a->name] = std::move(v);
    }
  }

  const std::string& name() const { return name_; }
  // The op's meaning version (dlrt_op_desc.op_version, ABI 1.2; 1 from older hosts).
  int version() const { return version_; }
  // Whether input i holds the same bytes on every run (dlrt_op_desc.constant_inputs, ABI 1.3),
  // so a kernel may prepare from it once; false from older hosts and for i >= 64.
  bool input_is_constant(size_t i) const { return i < 64 && ((constant_inputs_ >> i) & 1u) != 0; }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  const TensorView& input(size_t i) const { return operand(inputs_, i, "input"); }
  const TensorView& output(size_t i) const { return operand(outputs_, i, "output"); }
  const std::vector<TensorView>& inputs() const { return inputs_; }
  const std::vector<TensorView>& outputs() const { return outputs_; }

  bool has(const std::string& attr) const { return attrs_.count(attr) != 0; }
  // NULL when absent.
  const Attr* find(const std::string& attr) const {
    auto it = attrs_.find(attr);
    return it == attrs_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, Attr>& attrs() const { return attrs_; }

  int64_t get_int(const std::string& attr) const { return typed(attr, DLRT_ATTR_INT, "int").i; }
  // Accepts an int attribute too (a widening no one should have to think about: minval=0).
  double get_float(const std::string& attr) const {
    const Attr& a = require_attr(attr);
    if (a.type == DLRT_ATTR_FLOAT) return a.f;
    if (a.type == DLRT_ATTR_INT) return static_cast<double>(a.i);
    mistyped(attr, a, "float");
  }
  bool get_bool(const std::string& attr) const {
    return typed(attr, DLRT_ATTR_BOOL, "bool").i != 0;
  }
  const std::string& get_string(const std::string& attr) const {
    return typed(attr, DLRT_ATTR_STRING, "string").s;
  }
  const std::vector<int64_t>& get_ints(const std::string& attr) const {
    return typed(attr, DLRT_ATTR_INTS, "ints").ints;
  }
  const std::vector<double>& get_floats(const std::string& attr) const {
    return typed(attr, DLRT_ATTR_FLOATS, "floats").floats;
  }
  int32_t get_dtype(const std::string& attr) const {
    return static_cast<int32_t>(typed(attr, DLRT_ATTR_DTYPE, "dtype").i);
  }
  // An ints attribute that must have exactly `n` values (strides, ksize, ...).
  const std::vector<int64_t>& get_ints(const std::string& attr, size_t n) const {
    const auto& v = get_ints(attr);
    if (v.size() != n)
      fail(DLRT_INVALID_ARGUMENT, name_ + ": attribute '" + attr + "' has " +
                                      std::to_string(v.size()) + " values, expected " +
                                      std::to_string(n));
    return v;
  }

  // Whether an operand is f16 or bf16.
  bool has_narrow_float() const {
    for (const auto* list : {&inputs_, &outputs_})
      for (const TensorView& t : *list)
        if (t.dtype == DLRT_F16 || t.dtype == DLRT_BF16) return true;
    return false;
  }
  // The same op with every f16/bf16 operand, and every dtype attribute naming f16/bf16
  // (cast's, fill's), made `wide` (f32 or f64): what a plugin without a 16-bit kernel runs
  // between widening the inputs and rounding the outputs back (docs/ops.md, "16-bit floats").
  OpView with_narrow_floats_as(int32_t wide) const {
    OpView v = *this;
    auto is_narrow = [](int64_t d) { return d == DLRT_F16 || d == DLRT_BF16; };
    for (auto* list : {&v.inputs_, &v.outputs_})
      for (TensorView& t : *list)
        if (is_narrow(t.dtype)) {
          t.dtype = wide;
          t.bytes = static_cast<size_t>(t.numel) * dtype_size(wide);
        }
    for (auto& [name, a] : v.attrs_)
      if (a.type == DLRT_ATTR_DTYPE && is_narrow(a.i)) a.i = wide;
    return v;
  }

  // A view of one part of a fused op as the op of its own it is (a kernel of the fused op built
  // from the parts' kernels): named `op`, with the operands at `inputs` and `outputs` of this
  // one (their constant bits carried along), and this op's attributes.
  OpView part(const std::string& op, const std::vector<size_t>& inputs,
              const std::vector<size_t>& outputs) const {
    OpView v = *this;
    v.name_ = op;
    v.inputs_.clear();
    v.outputs_.clear();
    v.constant_inputs_ = 0;
    for (size_t k = 0; k < inputs.size(); ++k) {
      v.inputs_.push_back(input(inputs[k]));
      if (input_is_constant(inputs[k]) && k < 64) v.constant_inputs_ |= uint64_t(1) << k;
    }
    for (size_t k : outputs) v.outputs_.push_back(output(k));
    return v;
  }

  // Throws INVALID_ARGUMENT "<op>: <message>".
  [[noreturn]] void invalid(const std::string& message) const {
    fail(DLRT_INVALID_ARGUMENT, name_ + ": " + message);
  }
  // Throws UNIMPLEMENTED "<op>: <message>".
  [[noreturn]] void unimplemented(const std::string& message) const {
    fail(DLRT_UNIMPLEMENTED, name_ + ": " + message);
  }

 private:
  void read_operands(size_t n, const dlrt_tensor_desc* const* descs, const char* what,
                     std::vector<TensorView>& out) {
    if (n > 0 && descs == nullptr) fail(DLRT_INVALID_ARGUMENT, name_ + ": " + what + "s are NULL");
    for (size_t i = 0; i < n; ++i) {
      if (descs[i] == nullptr)
        fail(DLRT_INVALID_ARGUMENT, name_ + ": " + what + " " + std::to_string(i) + " is NULL");
      if (descs[i]->rank < 0 || descs[i]->rank > DLRT_MAX_RANK)
        fail(DLRT_INVALID_ARGUMENT, name_ + ": " + what + " " + std::to_string(i) + " has rank " +
                                        std::to_string(descs[i]->rank));
      out.push_back(tensor_view(*descs[i]));
    }
  }
  const TensorView& operand(const std::vector<TensorView>& v, size_t i, const char* what) const {
    if (i >= v.size())
      fail(DLRT_INVALID_ARGUMENT, name_ + ": has " + std::to_string(v.size()) + " " + what +
                                      "s, asked for " + what + " " + std::to_string(i));
    return v[i];
  }
  const Attr& require_attr(const std::string& attr) const {
    auto it = attrs_.find(attr);
    if (it == attrs_.end())
      fail(DLRT_INVALID_ARGUMENT, name_ + ": missing attribute '" + attr + "'");
    return it->second;
  }
  [[noreturn]] void mistyped(const std::string& attr, const Attr& a, const char* expected) const {
    fail(DLRT_INVALID_ARGUMENT, name_ + ": attribute '" + attr + "' has type " +
                                    std::to_string(a.type) + ", expected " + expected);
  }
  const Attr& typed(const std::string& attr, int32_t type, const char* expected) const {
    const Attr& a = require_attr(attr);
    if (a.type != type) mistyped(attr, a, expected);
    return a;
  }

  std::string name_;
  int version_ = 1;
  uint64_t constant_inputs_ = 0;
  std::vector<TensorView> inputs_;
  std::vector<TensorView> outputs_;
  std::map<std::string, Attr> attrs_;
};

// The meaning version of `op` that this repository's plugins implement: 1 for every op except
// those whose meaning a later core changed (the list below, written once for all in-tree
// plugins, which are built with the core they ship with). sgd_update and adam_update are at 2:
// the learning rate became an input.
inline int implemented_version(const std::string& op) {
  if (op == "sgd_update" || op == "adam_update") return 2;
  return 1;
}

// A newer version than implemented (a later core changed what the op computes) is declined
// with a reason instead of being run with the old arithmetic. An older one too: these plugins
// no longer carry the old meanings. Called by each plugin's op_supported and kernel_create.
// A zero op_version (a descriptor zero-filled by hand, as tests build them) reads as 1.
inline void require_known_version(const OpView& op) {
  const int implemented = implemented_version(op.name());
  if (std::max(op.version(), 1) != implemented)
    fail(DLRT_UNIMPLEMENTED, op.name() + " version " + std::to_string(op.version()) +
                                 ": this plugin implements version " + std::to_string(implemented));
}

// ---- windows -----------------------------------------------------------------------------

// One spatial dimension of a convolution or pooling window (docs/ops.md, "padding").
struct Window1D {
  int64_t in = 0, k = 1, stride = 1, dilation = 1;
  int64_t out = 0;         // output size
  int64_t pad_before = 0;  // cells of padding before the first input cell
  int64_t pad_after = 0;
  // Input coordinate read by output `o` at tap `t` (may lie in the padding: < 0 or >= in).
  int64_t input_at(int64_t o, int64_t t) const { return o * stride - pad_before + t * dilation; }
};

// The window of spatial axis `axis` (0: h, 1: w) of a conv or pool op, exactly as the core
// spelled it out: the "pads" attribute (h_before, w_before, h_after, w_after; ONNX's order)
// gives the padding whatever "padding" says (VALID, SAME or EXPLICIT), and `out` is the
// output length read from the output (or dy) tensor the core inferred. Nothing is derived or
// re-checked here: the schema (core/ops) already did both. A descriptor without "pads" comes
// from a host older than ABI 1.2, which this plugin declines (UNIMPLEMENTED, with the reason)
// rather than derive TensorFlow's SAME rule a second time.
inline Window1D window_of(const OpView& op, int axis, int64_t in, int64_t k, int64_t stride,
                          int64_t dilation, int64_t out) {
  if (!op.has("pads"))
    fail(DLRT_UNIMPLEMENTED, op.name() +
                                 ": no 'pads' attribute; this plugin needs the explicit paddings "
                                 "an ABI 1.2 host gives");
  const std::vector<int64_t>& pads = op.get_ints("pads", 4);
  Window1D w;
  w.in = in, w.k = k, w.stride = stride, w.dilation = dilation, w.out = out;
  w.pad_before = pads[axis];
  w.pad_after = pads[axis + 2];
  return w;
}

// The "groups" of a conv op (docs/ops.md: w is (KH,KW,Ci/groups,Co), output channel o reads
// the input channels of group o / (Co/groups)). A descriptor without it comes from a host
// whose convolutions had no groups, which is groups = 1: the same arithmetic, not a guess.
inline int64_t conv_groups(const OpView& op) { return op.has("groups") ? op.get_int("groups") : 1; }

// ---- images: NHWC / NCHW -----------------------------------------------------------------

// The logical (N,H,W,C) of an image tensor stored in `data_format` ("NHWC" or "NCHW"), and the
// flat offset of element (n,h,w,c) in it.
struct ImageShape {
  bool nchw = false;
  int64_t n = 0, h = 0, w = 0, c = 0;

  int64_t index(int64_t in, int64_t ih, int64_t iw, int64_t ic) const {
    return nchw ? ((in * c + ic) * h + ih) * w + iw : ((in * h + ih) * w + iw) * c + ic;
  }
  int64_t numel() const { return n * h * w * c; }
  // Dims as stored: (N,H,W,C) or (N,C,H,W).
  std::vector<int64_t> dims() const {
    return nchw ? std::vector<int64_t>{n, c, h, w} : std::vector<int64_t>{n, h, w, c};
  }
};

// Throws INVALID_ARGUMENT for a format other than NHWC/NCHW.
inline bool is_nchw(const std::string& data_format, const std::string& op) {
  if (data_format == "NHWC") return false;
  if (data_format == "NCHW") return true;
  fail(DLRT_INVALID_ARGUMENT,
       op + ": data_format is '" + data_format + "', expected \"NHWC\" or \"NCHW\"");
}

// From dims as stored: (N,H,W,C) or (N,C,H,W); the schema checked the rank.
inline ImageShape image_shape(const std::vector<int64_t>& dims, bool nchw) {
  ImageShape s;
  s.nchw = nchw;
  s.n = dims.at(0);
  if (nchw) s.c = dims.at(1), s.h = dims.at(2), s.w = dims.at(3);
  else s.h = dims.at(1), s.w = dims.at(2), s.c = dims.at(3);
  return s;
}

inline ImageShape image_shape(int64_t n, int64_t h, int64_t w, int64_t c, bool nchw) {
  ImageShape s;
  s.nchw = nchw, s.n = n, s.h = h, s.w = w, s.c = c;
  return s;
}

// ---- strides and broadcasting ------------------------------------------------------------

// Row-major element strides of `dims`.
inline std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// Element strides of a tensor of dims `in`, seen as a tensor of dims `out` (in broadcasts to
// out): one stride per dim of `out`, 0 where `in` is stretched or absent. Throws
// INVALID_ARGUMENT if `in` does not broadcast to `out`.
inline std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in,
                                              const std::vector<int64_t>& out,
                                              const std::string& op) {
  if (in.size() > out.size())
    fail(DLRT_INVALID_ARGUMENT,
         op + ": " + dims_string(in) + " has more dims than " + dims_string(out));
  std::vector<int64_t> s(out.size(), 0);
  const size_t lead = out.size() - in.size();
  std::vector<int64_t> own = row_major_strides(in);
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == out[lead + i]) s[lead + i] = in[i] == 1 ? 0 : own[i];
    else if (in[i] == 1) s[lead + i] = 0;
    else
      fail(DLRT_INVALID_ARGUMENT,
           op + ": " + dims_string(in) + " does not broadcast to " + dims_string(out));
  }
  return s;
}

// Axis in [-rank, rank) to [0, rank); throws INVALID_ARGUMENT otherwise.
inline int normalize_axis(int64_t axis, int rank, const std::string& op) {
  if (axis < -rank || axis >= rank)
    fail(DLRT_INVALID_ARGUMENT, op + ": axis " + std::to_string(axis) +
                                    " is out of range for rank " + std::to_string(rank));
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace dlrt::plugin
