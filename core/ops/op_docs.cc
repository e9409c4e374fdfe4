// core/ops/op_docs.cc: see op_docs.hpp.
#include "op_docs.hpp"

#include <fmt/format.h>

#include <map>
#include <vector>

#include "op_registry.hpp"

namespace dlrt::ops {
namespace {

// Family -> heading, in the order the page shows them.
const std::vector<std::pair<std::string, std::string>> kFamilies = {
    {"conv_pool", "Convolution and pooling"},
    {"elementwise", "Elementwise, bias and activation gradients"},
    {"reduce_shape", "Reductions and shapes"},
    {"misc", "Matmul, softmax, losses, generators, data movement"},
    {"norm", "Normalization"},
    {"rnn", "Recurrent cells"},
    {"attention", "Attention"},
    {"train", "Optimizer updates"},
};

// A table cell: '|' would end it.
std::string cell(std::string s) {
  for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.insert(i, "\\");
  return s;
}

std::string inputs_text(const OpDef& d) {
  if (d.inputs.empty()) return "—";
  std::vector<std::string> parts;
  for (const InputSpec& in : d.inputs)
    parts.push_back(
        fmt::format("{}{}{} {}", in.name, in.variadic ? fmt::format("... ({}+)", in.min_count) : "",
                    in.shape.empty() ? "" : " " + in.shape, cell(format_dtypes(in.dtypes))));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string outputs_text(const OpDef& d) {
  std::vector<std::string> parts;
  for (const OutputSpec& o : d.outputs)
    parts.push_back((o.variadic ? o.name + "..." : o.name) +
                    (o.shape.empty() ? "" : " " + o.shape));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string attrs_text(const OpDef& d) {
  if (d.attrs.empty()) return "—";
  std::vector<std::string> parts;
  for (const AttrSpec& a : d.attrs) {
    std::string s = a.required ? fmt::format("{} (required {})", a.name, attr_type_name(a.type))
                               : fmt::format("{} {}", a.name, to_string(*a.default_value));
    if (!a.allowed_strings.empty()) s += fmt::format(" of {}", fmt::join(a.allowed_strings, "\\|"));
    parts.push_back(s);
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string properties_text(const OpDef& d) {
  std::vector<std::string> p;
  if (d.uses_rng) p.push_back("random");
  if (d.stateful) p.push_back("stateful");
  if (!d.in_place.empty()) p.push_back("in place");
  p.push_back(d.no_gradient.empty() ? "gradient" : "no gradient");
  p.push_back(d.tolerance.exact ? "exact" : fmt::format("tol {:g}", d.tolerance.rel));
  return fmt::format("{}", fmt::join(p, ", "));
}

}  // namespace

std::string op_table_markdown() {
  std::map<std::string, std::vector<const OpDef*>> by_family;
  for (const OpDef* d : all_ops()) by_family[d->family].push_back(d);
  std::string out =
      fmt::format("{} ops, version 1 unless the v column says otherwise.\n", all_ops().size());
  for (const auto& [family, heading] : kFamilies) {
    auto it = by_family.find(family);
    if (it == by_family.end()) continue;
    out += fmt::format("\n### {}\n\n", heading);
    out += "| op | v | inputs | outputs | attributes (default) | properties | computes |\n";
    out += "|---|---|---|---|---|---|---|\n";
    for (const OpDef* d : it->second)
      out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} |\n", d->name, d->version,
                         inputs_text(*d), outputs_text(*d), attrs_text(*d), properties_text(*d),
                         d->doc);
  }
  return out;
}

Result<std::string> with_op_table(const std::string& document) {
  const size_t begin = document.find(kOpTableBegin);
  const size_t end = document.find(kOpTableEnd);
  if (begin == std::string::npos || end == std::string::npos || end < begin)
    return invalid_argument("the document lacks the marker lines '{}' ... '{}' (in that order)",
                            kOpTableBegin, kOpTableEnd);
  const size_t body = begin + std::string(kOpTableBegin).size();
  return document.substr(0, body) + "\n" + op_table_markdown() + document.substr(end);
}

}  // namespace dlrt::ops
