// c_api_op_signature.cc: dlrt_op_signature_get, the op schema (core/ops) as plain C structs
// for bindings that make one function per op (the Python package's dlrt.raw_ops).
//
// The C structs point into one table built on first use and kept for the life of the process
// (the OpDefs it reads live as long, see op_registry.hpp), so every pointer handed out is
// static and no caller frees anything.
#include <dlrt/dlrt.h>

#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "c_api_util.hpp"
#include "ops/attrs.hpp"
#include "ops/op_registry.hpp"
#include "status.hpp"

using dlrt::core::fail;
using dlrt::core::guarded;
using dlrt::core::require;
using dlrt::core::write_out;

namespace {

// One op's signature and the storage its pointers point into. Held by unique_ptr so that the
// addresses stay put while the table grows.
struct SignatureStorage {
  std::vector<std::vector<int32_t>> input_dtypes;
  std::vector<dlrt_op_input_info> inputs;
  std::vector<const dlrt_op_input_info*> input_ptrs;
  std::vector<const char*> output_names;
  std::vector<dlrt_attr> defaults;  // views into the OpDef's AttrSpec default values
  std::vector<std::vector<const char*>> allowed;
  std::vector<dlrt_op_attr_info> attrs;
  std::vector<const dlrt_op_attr_info*> attr_ptrs;
  dlrt_op_signature signature{};
};

std::unique_ptr<SignatureStorage> build(const dlrt::ops::OpDef& def) {
  auto s = std::make_unique<SignatureStorage>();
  s->inputs.reserve(def.inputs.size());
  s->input_dtypes.reserve(def.inputs.size());
  for (const dlrt::ops::InputSpec& in : def.inputs) {
    dlrt_op_input_info c{};
    c.struct_size = sizeof(c);
    c.name = in.name.c_str();
    c.shape = in.shape.c_str();
    c.variadic = in.variadic ? 1 : 0;
    c.min_count = in.variadic ? in.min_count : 1;
    c.differentiable = in.differentiable ? 1 : 0;
    c.type_var = static_cast<unsigned char>(in.type_var);
    std::vector<int32_t>& dtypes = s->input_dtypes.emplace_back(in.dtypes.begin(), in.dtypes.end());
    c.num_dtypes = dtypes.size();
    c.dtypes = dtypes.empty() ? nullptr : dtypes.data();
    s->inputs.push_back(c);
  }
  for (const dlrt_op_input_info& c : s->inputs) s->input_ptrs.push_back(&c);

  for (const dlrt::ops::OutputSpec& out : def.outputs) s->output_names.push_back(out.name.c_str());

  // Reserve first: attrs[i].default_value points into defaults, allowed into allowed[i].
  s->defaults.reserve(def.attrs.size());
  s->allowed.reserve(def.attrs.size());
  s->attrs.reserve(def.attrs.size());
  for (const dlrt::ops::AttrSpec& spec : def.attrs) {
    dlrt_op_attr_info c{};
    c.struct_size = sizeof(c);
    c.name = spec.name.c_str();
    c.type = spec.type;
    c.required = spec.required ? 1 : 0;
    if (spec.default_value) {
      s->defaults.push_back(dlrt::ops::to_c_attr(spec.name, *spec.default_value));
      c.default_value = &s->defaults.back();
    }
    c.doc = spec.doc.c_str();
    std::vector<const char*>& allowed = s->allowed.emplace_back();
    for (const std::string& v : spec.allowed_strings) allowed.push_back(v.c_str());
    c.num_allowed_strings = allowed.size();
    c.allowed_strings = allowed.empty() ? nullptr : allowed.data();
    s->attrs.push_back(c);
  }
  for (const dlrt_op_attr_info& c : s->attrs) s->attr_ptrs.push_back(&c);

  dlrt_op_signature& sig = s->signature;
  sig.struct_size = sizeof(sig);
  sig.name = def.name.c_str();
  sig.doc = def.doc.c_str();
  sig.num_inputs = s->input_ptrs.size();
  sig.inputs = s->input_ptrs.empty() ? nullptr : s->input_ptrs.data();
  sig.num_outputs = s->output_names.size();
  sig.output_names = s->output_names.empty() ? nullptr : s->output_names.data();
  sig.variadic_outputs = !def.outputs.empty() && def.outputs.back().variadic ? 1 : 0;
  sig.uses_rng = def.uses_rng ? 1 : 0;
  sig.stateful = def.stateful ? 1 : 0;
  sig.differentiable = def.no_gradient.empty() ? 1 : 0;
  sig.num_attrs = s->attr_ptrs.size();
  sig.attrs = s->attr_ptrs.empty() ? nullptr : s->attr_ptrs.data();
  sig.no_gradient_reason = def.no_gradient.c_str();
  return s;
}

// The signature of `def`, built once per op; thread-safe.
const dlrt_op_signature& signature_of(const dlrt::ops::OpDef& def) {
  static std::mutex mutex;
  static std::unordered_map<const dlrt::ops::OpDef*, std::unique_ptr<SignatureStorage>> table;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<SignatureStorage>& slot = table[&def];
  if (!slot) slot = build(def);
  return slot->signature;
}

}  // namespace

extern "C" {

DLRT_API dlrt_status* dlrt_op_signature_get(const char* op, dlrt_op_signature* out) {
  return guarded([&] {
    require(op, "op");
    require(out, "out");
    const dlrt::ops::OpDef* def = dlrt::ops::find_op(op);
    if (def == nullptr)
      fail(DLRT_NOT_FOUND, fmt::format("unknown op '{}' (dlrt_op_name lists the ops there are)", op));
    write_out(out, signature_of(*def), "dlrt_op_signature_get: out");
  });
}

}  // extern "C"
