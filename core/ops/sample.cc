// core/ops/sample.cc: op_samples (an op's samples plus one per uncovered attribute value) and
// the image helper of sample.hpp.
#include "sample.hpp"

#include "op_def.hpp"

namespace dlrt::ops {
namespace {

// The values of `spec` whose behaviour a sample must show: every allowed string, both bools,
// the declared sample values.
std::vector<AttrValue> behaviour_values(const AttrSpec& spec) {
  std::vector<AttrValue> out;
  if (spec.type == DLRT_ATTR_STRING)
    for (const std::string& s : spec.allowed_strings) out.emplace_back(s);
  if (spec.type == DLRT_ATTR_BOOL) out = {AttrValue(false), AttrValue(true)};
  out.insert(out.end(), spec.sample_values.begin(), spec.sample_values.end());
  return out;
}

// Whether some sample runs `name` = `value` (a sample that leaves it out runs the default).
bool covered(const std::vector<Sample>& samples, const AttrSpec& spec, const AttrValue& value) {
  for (const Sample& s : samples) {
    auto it = s.attrs.find(spec.name);
    if (it != s.attrs.end() ? it->second == value
                            : (spec.default_value && *spec.default_value == value))
      return true;
  }
  return false;
}

}  // namespace

std::vector<Sample> op_samples(const OpDef& def) {
  std::vector<Sample> out = def.samples ? def.samples(def) : std::vector<Sample>{};
  if (out.empty()) return out;
  const Sample first = out.front();
  for (const AttrSpec& spec : def.attrs)
    for (const AttrValue& v : behaviour_values(spec)) {
      if (covered(out, spec, v)) continue;
      Sample s = first;
      s.attrs.insert_or_assign(spec.name, v);
      s.note = spec.name + " = " + to_string(v);
      out.push_back(std::move(s));
    }
  return out;
}

Dims image_dims(const std::string& format, int64_t n, int64_t h, int64_t w, int64_t c) {
  return format == "NCHW" ? Dims{n, c, h, w} : Dims{n, h, w, c};
}

}  // namespace dlrt::ops
