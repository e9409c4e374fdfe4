// core/ops/op_def.cc: OpDef's lookups and signature, InferContext's message helpers.
#include "op_def.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace dlrt::ops {

std::string to_string(const TensorType& t) { return dtype_name(t.dtype) + format_dims(t.dims); }

const AttrSpec* OpDef::find_attr(std::string_view attr) const {
  for (const AttrSpec& a : attrs)
    if (a.name == attr) return &a;
  return nullptr;
}

int OpDef::input_index(std::string_view input) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].name == input) return static_cast<int>(i);
  return -1;
}

std::string OpDef::signature() const {
  std::vector<std::string> ins, outs, as;
  for (const InputSpec& in : inputs)
    ins.push_back(fmt::format("{}{}: {}{}{}", in.name, in.variadic ? "..." : "",
                              format_dtypes(in.dtypes), in.shape.empty() ? "" : " ", in.shape));
  for (const OutputSpec& out : outputs) outs.push_back(out.variadic ? out.name + "..." : out.name);
  for (const AttrSpec& a : attrs)
    as.push_back(a.required ? fmt::format("{}: {} (required)", a.name, attr_type_name(a.type))
                            : fmt::format("{}: {} = {}", a.name, attr_type_name(a.type),
                                          to_string(*a.default_value)));
  std::string s = fmt::format("{}({}) -> {}", name, fmt::join(ins, ", "), fmt::join(outs, ", "));
  if (!as.empty()) s += fmt::format("; {}", fmt::join(as, ", "));
  return s;
}

std::string InferContext::label(int i) const {
  return fmt::format("input {} ({})", i, def_.input_spec(i).name);
}

Status InferContext::expect_rank(int i, int rank, std::string_view dims_doc) const {
  if (this->rank(i) == rank) return Status();
  return error("{} must have rank {}{}{}, got rank {}", label(i), rank, dims_doc.empty() ? "" : " ",
               dims_doc, this->rank(i));
}

Status InferContext::expect_min_rank(int i, int min_rank) const {
  if (rank(i) >= min_rank) return Status();
  return error("{} must have rank >= {}, got rank {}", label(i), min_rank, rank(i));
}

Status InferContext::expect_same_dims(int i, int j) const {
  if (dims(i) == dims(j)) return Status();
  return error("{} has dims {}, expected {} to match {}", label(j), format_dims(dims(j)),
               format_dims(dims(i)), label(i));
}

const AttrValue& InferContext::attr(std::string_view n) const {
  auto it = attrs_.find(n);
  // Cannot happen for an attribute of the OpDef: resolve_attrs filled every one.
  if (it == attrs_.end()) throw std::logic_error(def_.name + ": no attribute " + std::string(n));
  return it->second;
}

}  // namespace dlrt::ops
