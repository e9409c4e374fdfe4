// op_signatures.cc: the op schema (dlrt_op_signature_get) for the binding: OpSig, cached per
// op for run_op's conversions, and _dlrt.op_signatures(), from which dlrt/raw_ops.py makes
// one Python function per op and tools/python/gen_stubs.py its stub. No op is listed here.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "bindings.hpp"

namespace dlrt::python {

namespace {

dlrt_op_signature c_signature(const std::string& op) {
  dlrt_op_signature s{};
  s.struct_size = DLRT_STRUCT_SIZE(dlrt_op_signature);
  dlrt::check(dlrt_op_signature_get(op.c_str(), &s));
  return s;
}

nb::object attr_value(const dlrt_attr* a) {
  if (a == nullptr) return nb::none();
  switch (a->type) {
    case DLRT_ATTR_INT:
      return nb::int_(a->i);
    case DLRT_ATTR_FLOAT:
      return nb::float_(a->f);
    case DLRT_ATTR_STRING:
      return nb::str(a->s != nullptr ? a->s : "");
    case DLRT_ATTR_BOOL:
      return nb::bool_(a->i != 0);
    case DLRT_ATTR_DTYPE:
      return nb::int_(a->i);
    case DLRT_ATTR_INTS:
      return nb::cast(std::vector<int64_t>(a->ints, a->ints + a->count));
    case DLRT_ATTR_FLOATS:
      return nb::cast(std::vector<double>(a->floats, a->floats + a->count));
    default:
      return nb::none();
  }
}


nb::dict signature_dict(const dlrt_op_signature& s) {
  nb::dict d;
  d["name"] = s.name;
  d["doc"] = s.doc;
  nb::list inputs;
  for (size_t i = 0; i < s.num_inputs; ++i) {
    const dlrt_op_input_info& in = *s.inputs[i];
    nb::dict x;
    x["name"] = in.name;
    x["shape"] = in.shape;
    x["variadic"] = in.variadic != 0;
    x["min_count"] = in.min_count;
    x["differentiable"] = in.differentiable != 0;
    x["type_var"] = in.type_var;
    x["dtypes"] = std::vector<int32_t>(in.dtypes, in.dtypes + in.num_dtypes);
    inputs.append(x);
  }
  d["inputs"] = inputs;
  nb::list outputs;
  for (size_t i = 0; i < s.num_outputs; ++i) outputs.append(nb::str(s.output_names[i]));
  d["outputs"] = outputs;
  d["variadic_outputs"] = s.variadic_outputs != 0;
  d["uses_rng"] = s.uses_rng != 0;
  d["stateful"] = s.stateful != 0;
  d["differentiable"] = s.differentiable != 0;
  d["no_gradient_reason"] = s.no_gradient_reason;
  nb::list attrs;
  for (size_t i = 0; i < s.num_attrs; ++i) {
    const dlrt_op_attr_info& a = *s.attrs[i];
    nb::dict x;
    x["name"] = a.name;
    x["type"] = attr_type_name(a.type);
    x["required"] = a.required != 0;
    x["default"] = attr_value(a.default_value);
    x["doc"] = a.doc;
    nb::list allowed;
    for (size_t k = 0; k < a.num_allowed_strings; ++k) allowed.append(nb::str(a.allowed_strings[k]));
    x["allowed"] = allowed;
    attrs.append(x);
  }
  d["attrs"] = attrs;
  return d;
}

}  // namespace

const OpSig& op_signature(const std::string& op) {
  static std::mutex mutex;
  static auto* cache = new std::unordered_map<std::string, std::unique_ptr<OpSig>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<OpSig>& slot = (*cache)[op];
  if (slot == nullptr) {
    dlrt_op_signature s{};
    try {
      s = c_signature(op);
    } catch (...) {
      cache->erase(op);
      throw;
    }
    auto sig = std::make_unique<OpSig>();
    sig->name = s.name;
    for (size_t i = 0; i < s.num_inputs; ++i) {
      const dlrt_op_input_info& in = *s.inputs[i];
      OpSig::Input x;
      x.name = in.name;
      x.variadic = in.variadic != 0;
      x.type_var = in.type_var;
      for (size_t k = 0; k < in.num_dtypes; ++k) x.dtypes.push_back(static_cast<dlrt_dtype>(in.dtypes[k]));
      sig->inputs.push_back(std::move(x));
    }
    sig->num_outputs = s.num_outputs;
    sig->variadic_outputs = s.variadic_outputs != 0;
    for (size_t i = 0; i < s.num_attrs; ++i)
      sig->attrs.push_back({s.attrs[i]->name, static_cast<dlrt_attr_type>(s.attrs[i]->type)});
    slot = std::move(sig);
  }
  return *slot;
}

void bind_op_signatures(nb::module_& m) {
  m.def(
      "op_signatures",
      [] {
        nb::list out;
        const size_t n = dlrt_op_count();
        for (size_t i = 0; i < n; ++i) out.append(signature_dict(c_signature(dlrt_op_name(i))));
        return out;
      },
      "Every op of the schema: name, doc, inputs, outputs, attrs (with types and defaults).");
  m.def(
      "op_signature", [](const std::string& op) { return signature_dict(c_signature(op)); },
      nb::arg("op"), "One op's signature (NotFoundError for an unknown op).");
}

}  // namespace dlrt::python
