// core/ops/op_instance.cc: instantiate(), the generic checks, and the materialised descriptor.
#include "op_instance.hpp"

#include <fmt/format.h>

#include <exception>
#include <new>

#include "op_registry.hpp"

namespace dlrt::ops {

// Everything the descriptor points into. Heap-allocated once and never moved, so the raw
// pointers in `desc`, `input_ptrs`, ... stay valid for the OpInstance's life.
struct OpInstance::Storage {
  const OpDef* def = nullptr;
  std::vector<TensorType> inputs, outputs;
  AttrMap attrs;  // map nodes (keys and values) never move
  std::vector<dlrt_tensor_desc> input_descs, output_descs;
  std::vector<const dlrt_tensor_desc*> input_ptrs, output_ptrs;
  std::vector<dlrt_attr> c_attrs;
  std::vector<const dlrt_attr*> attr_ptrs;
  dlrt_op_desc desc{};
};

OpInstance::OpInstance(std::unique_ptr<Storage> storage) : s_(std::move(storage)) {}
OpInstance::OpInstance(OpInstance&&) noexcept = default;
OpInstance& OpInstance::operator=(OpInstance&&) noexcept = default;
OpInstance::~OpInstance() = default;

const OpDef& OpInstance::def() const { return *s_->def; }
const std::vector<TensorType>& OpInstance::inputs() const { return s_->inputs; }
const std::vector<TensorType>& OpInstance::outputs() const { return s_->outputs; }
const AttrMap& OpInstance::attrs() const { return s_->attrs; }
const dlrt_op_desc& OpInstance::desc() const { return s_->desc; }

namespace {

dlrt_tensor_desc to_c_desc(const TensorType& t) {
  dlrt_tensor_desc d{};
  d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
  d.dtype = t.dtype;
  d.rank = t.rank();
  for (int i = 0; i < t.rank(); ++i) d.dims[i] = t.dims[i];
  d.layout = DLRT_LAYOUT_DENSE;
  return d;
}

// Fills the C views once every vector in `s` has its final size.
void materialise(OpInstance::Storage& s);

// rank <= DLRT_MAX_RANK and every dim >= 1 (docs/ops.md "Decisions": no zero-sized tensors).
Status check_dims(std::string_view op, const std::string& what, const TensorType& t) {
  if (t.rank() > DLRT_MAX_RANK)
    return invalid_argument("{}: {} has rank {}, more than DLRT_MAX_RANK ({})", op, what, t.rank(),
                            DLRT_MAX_RANK);
  for (int a = 0; a < t.rank(); ++a)
    if (t.dims[a] < 1)
      return invalid_argument("{}: {} has dim {} = {} in {}, expected >= 1", op, what, a, t.dims[a],
                              format_dims(t.dims));
  return Status();
}

// The count of a call's inputs: exactly the declared ones, or, when the last is variadic,
// the others plus at least its min_count.
Status check_input_count(const OpDef& def, const std::vector<TensorType>& inputs) {
  std::vector<std::string> names;
  for (const InputSpec& in : def.inputs) names.push_back(in.variadic ? in.name + "..." : in.name);
  if (def.variadic_inputs()) {
    const size_t fixed = def.inputs.size() - 1;
    const size_t least = fixed + static_cast<size_t>(def.inputs.back().min_count);
    if (inputs.size() >= least) return Status();
    return invalid_argument("{}: expected at least {} input{} ({}), got {}", def.name, least,
                            least == 1 ? "" : "s", fmt::join(names, ", "), inputs.size());
  }
  if (inputs.size() == def.inputs.size()) return Status();
  return invalid_argument("{}: expected {} input{} ({}), got {}", def.name, def.inputs.size(),
                          def.inputs.size() == 1 ? "" : "s", fmt::join(names, ", "), inputs.size());
}

Status check_inputs(const OpDef& def, const std::vector<TensorType>& inputs) {
  DLRT_OPS_RETURN_IF_ERROR(check_input_count(def, inputs));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputSpec& spec = def.input_spec(i);
    const std::string what = fmt::format("input {} ({})", i, spec.name);
    DLRT_OPS_RETURN_IF_ERROR(check_dims(def.name, what, inputs[i]));
    bool allowed = false;
    for (dlrt_dtype d : spec.dtypes) allowed |= d == inputs[i].dtype;
    if (!allowed)
      return invalid_argument("{}: {} has dtype {}, expected {}", def.name, what,
                              dtype_name(inputs[i].dtype), format_dtypes(spec.dtypes));
    // The first earlier input with the same type variable fixes the dtype.
    for (size_t j = 0; j < i && spec.type_var != 0; ++j) {
      if (def.input_spec(j).type_var != spec.type_var) continue;
      if (inputs[j].dtype != inputs[i].dtype)
        return invalid_argument("{}: {} has dtype {}, expected {} to match input {} ({})", def.name,
                                what, dtype_name(inputs[i].dtype), dtype_name(inputs[j].dtype), j,
                                def.input_spec(j).name);
      break;
    }
  }
  return Status();
}

Result<OpInstance::Storage*> build(const OpDef& def, const std::vector<TensorType>& inputs,
                                   const AttrMap& given, OpInstance::Storage& s) {
  DLRT_OPS_RETURN_IF_ERROR(check_inputs(def, inputs));
  Result<AttrMap> attrs = resolve_attrs(def.name, def.attrs, given);
  if (!attrs.ok()) return attrs.status();
  InferContext ctx(def, inputs, *attrs);
  DLRT_OPS_RETURN_IF_ERROR(def.infer(ctx));
  // The infer function's own contract, checked so that a bug there is not a plugin crash.
  // A variadic last output stands for one or more.
  const bool count_ok = def.variadic_outputs() ? ctx.outputs().size() >= def.outputs.size()
                                               : ctx.outputs().size() == def.outputs.size();
  if (!count_ok)
    return Status(DLRT_INTERNAL,
                  fmt::format("{}: inference gave {} outputs, the op has {}{}", def.name,
                              ctx.outputs().size(), def.variadic_outputs() ? "at least " : "",
                              def.outputs.size()));
  for (size_t o = 0; o < ctx.outputs().size(); ++o)
    DLRT_OPS_RETURN_IF_ERROR(check_dims(
        def.name, fmt::format("output {} ({})", o, def.output_spec(o).name), ctx.outputs()[o]));
  for (const auto& [name, value] : ctx.normalized()) {
    auto it = attrs->find(name);
    if (it == attrs->end())
      return Status(DLRT_INTERNAL, fmt::format("{}: inference normalised '{}', which is not an "
                                               "attribute of the op",
                                               def.name, name));
    it->second = value;
  }
  s.def = &def;
  s.inputs = inputs;
  s.outputs = std::move(ctx.outputs());
  s.attrs = std::move(*attrs);
  materialise(s);
  return &s;
}

void materialise(OpInstance::Storage& s) {
  for (const TensorType& t : s.inputs) s.input_descs.push_back(to_c_desc(t));
  for (const TensorType& t : s.outputs) s.output_descs.push_back(to_c_desc(t));
  for (const auto& d : s.input_descs) s.input_ptrs.push_back(&d);
  for (const auto& d : s.output_descs) s.output_ptrs.push_back(&d);
  for (const auto& [name, value] : s.attrs) s.c_attrs.push_back(to_c_attr(name, value));
  for (const auto& a : s.c_attrs) s.attr_ptrs.push_back(&a);
  s.desc.struct_size = DLRT_STRUCT_SIZE(dlrt_op_desc);
  s.desc.op = s.def->name.c_str();  // the registry's OpDef outlives every instance
  s.desc.num_inputs = s.input_ptrs.size();
  s.desc.inputs = s.input_ptrs.data();
  s.desc.num_outputs = s.output_ptrs.size();
  s.desc.outputs = s.output_ptrs.data();
  s.desc.num_attrs = s.attr_ptrs.size();
  s.desc.attrs = s.attr_ptrs.data();
  s.desc.op_version = s.def->version;
}

// Turns anything thrown inside (a bug, or out of memory) into a status: nothing leaves the
// registry's API as an exception.
template <typename Fn>
Result<OpInstance> guarded(std::string_view op, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return Status(DLRT_RESOURCE_EXHAUSTED, fmt::format("{}: out of host memory", op));
  } catch (const std::exception& e) {
    return Status(DLRT_INTERNAL, fmt::format("{}: internal error: {}", op, e.what()));
  } catch (...) {
    return Status(DLRT_INTERNAL, fmt::format("{}: internal error", op));
  }
}

}  // namespace

Result<OpInstance> instantiate(std::string_view op, const std::vector<TensorType>& inputs,
                               const AttrMap& attrs) {
  return guarded(op, [&]() -> Result<OpInstance> {
    const OpDef* def = find_op(op);
    if (def == nullptr) return Status(DLRT_NOT_FOUND, fmt::format("unknown op '{}'", op));
    auto storage = std::make_unique<OpInstance::Storage>();
    Result<OpInstance::Storage*> built = build(*def, inputs, attrs, *storage);
    if (!built.ok()) return built.status();
    return OpInstance(std::move(storage));
  });
}

Result<TensorType> tensor_type_from_c(std::string_view op, std::string_view what,
                                      const dlrt_tensor_desc& d) {
  if (d.struct_size < offsetof(dlrt_tensor_desc, dims))
    return invalid_argument("{}: {} has struct_size {}, too small for a tensor desc", op, what,
                            d.struct_size);
  if (d.rank < 0 || d.rank > DLRT_MAX_RANK)
    return invalid_argument("{}: {} has rank {}, expected 0..{}", op, what, d.rank, DLRT_MAX_RANK);
  if (offsetof(dlrt_tensor_desc, dims) + sizeof(int64_t) * d.rank > d.struct_size)
    return invalid_argument("{}: {} has struct_size {}, too small for rank {}", op, what,
                            d.struct_size, d.rank);
  return TensorType{static_cast<dlrt_dtype>(d.dtype), Dims(d.dims, d.dims + d.rank)};
}

Result<OpInstance> instantiate_desc(const dlrt_op_desc& desc) {
  const char* op_name = desc.op != nullptr ? desc.op : "";
  return guarded(op_name, [&]() -> Result<OpInstance> {
    if (desc.struct_size < sizeof(dlrt_op_desc))  // ABI 1.0: every field is required
      return invalid_argument("{}: op desc struct_size {} is smaller than {}", op_name,
                              desc.struct_size, sizeof(dlrt_op_desc));
    if (desc.op == nullptr) return invalid_argument("op desc has a NULL op name");
    auto read_list = [&](const char* kind, size_t n, const dlrt_tensor_desc* const* list,
                         std::vector<TensorType>& out) -> Status {
      if (n > 0 && list == nullptr)
        return invalid_argument("{}: {} {}s but a NULL array", op_name, n, kind);
      for (size_t i = 0; i < n; ++i) {
        const std::string what = fmt::format("{} {}", kind, i);
        if (list[i] == nullptr) return invalid_argument("{}: {} is NULL", op_name, what);
        Result<TensorType> t = tensor_type_from_c(op_name, what, *list[i]);
        if (!t.ok()) return t.status();
        out.push_back(std::move(*t));
      }
      return Status();
    };
    std::vector<TensorType> inputs, given_outputs;
    DLRT_OPS_RETURN_IF_ERROR(read_list("input", desc.num_inputs, desc.inputs, inputs));
    DLRT_OPS_RETURN_IF_ERROR(read_list("output", desc.num_outputs, desc.outputs, given_outputs));
    if (desc.num_attrs > 0 && desc.attrs == nullptr)
      return invalid_argument("{}: {} attributes but a NULL array", op_name, desc.num_attrs);
    AttrMap attrs;
    for (size_t i = 0; i < desc.num_attrs; ++i) {
      if (desc.attrs[i] == nullptr) return invalid_argument("{}: attribute {} is NULL", op_name, i);
      Result<AttrValue> v = attr_from_c(op_name, *desc.attrs[i]);
      if (!v.ok()) return v.status();
      if (!attrs.emplace(desc.attrs[i]->name, std::move(*v)).second)
        return invalid_argument("{}: attribute '{}' is given twice", op_name, desc.attrs[i]->name);
    }
    Result<OpInstance> inst = instantiate(op_name, inputs, attrs);
    if (!inst.ok()) return inst;
    const OpDef& def = inst->def();
    if (given_outputs.size() != inst->outputs().size())
      return invalid_argument("{}: descriptor has {} outputs, expected {}", op_name,
                              given_outputs.size(), inst->outputs().size());
    for (size_t o = 0; o < given_outputs.size(); ++o)
      if (given_outputs[o] != inst->outputs()[o])
        return invalid_argument("{}: output {} ({}) is {} but inference gives {}", op_name, o,
                                def.output_spec(o).name, to_string(given_outputs[o]),
                                to_string(inst->outputs()[o]));
    // Keep the caller's layouts: the registry infers dtypes and dims, not memory formats.
    auto layout = [](const dlrt_tensor_desc* d) {
      return DLRT_HAS_FIELD(dlrt_tensor_desc, layout, d->struct_size) ? d->layout
                                                                      : DLRT_LAYOUT_DENSE;
    };
    for (size_t i = 0; i < desc.num_inputs; ++i)
      inst->s_->input_descs[i].layout = layout(desc.inputs[i]);
    for (size_t o = 0; o < desc.num_outputs; ++o)
      inst->s_->output_descs[o].layout = layout(desc.outputs[o]);
    return inst;
  });
}

}  // namespace dlrt::ops
