// core/ops/attrs.cc: see attrs.hpp.
#include "attrs.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "shape_util.hpp"

namespace dlrt::ops {

dlrt_attr_type AttrValue::type() const {
  // Index order of the variant: int64_t, double, bool, string, Ints, Floats, dlrt_dtype.
  static constexpr dlrt_attr_type kTypes[] = {DLRT_ATTR_INT,    DLRT_ATTR_FLOAT, DLRT_ATTR_BOOL,
                                              DLRT_ATTR_STRING, DLRT_ATTR_INTS,  DLRT_ATTR_FLOATS,
                                              DLRT_ATTR_DTYPE};
  return kTypes[v_.index()];
}

std::string to_string(const AttrValue& value) {
  switch (value.type()) {
    case DLRT_ATTR_INT:
      return std::to_string(value.as_int());
    case DLRT_ATTR_FLOAT:
      return fmt::format("{}", value.as_float());
    case DLRT_ATTR_BOOL:
      return value.as_bool() ? "true" : "false";
    case DLRT_ATTR_STRING:
      return fmt::format("\"{}\"", value.as_string());
    case DLRT_ATTR_INTS:
      return format_dims(value.as_ints());
    case DLRT_ATTR_FLOATS:
      return fmt::format("({})", fmt::join(value.as_floats(), ","));
    case DLRT_ATTR_DTYPE:
      return dtype_name(value.as_dtype());
    case DLRT_ATTR_NONE:
      break;
  }
  return "?";
}

AttrSpec& AttrSpec::one_of(std::vector<std::string> values) {
  allowed_strings = std::move(values);
  return *this;
}
AttrSpec& AttrSpec::dtypes(std::vector<dlrt_dtype> values) {
  allowed_dtypes = std::move(values);
  return *this;
}
AttrSpec& AttrSpec::exactly(int n) {
  length = n;
  return *this;
}
AttrSpec& AttrSpec::at_least(int64_t min) {
  min_value = min;
  return *this;
}
AttrSpec& AttrSpec::try_values(std::vector<AttrValue> values) {
  sample_values = std::move(values);
  return *this;
}

AttrSpec& AttrSpec::describe(std::string text) {
  doc = std::move(text);
  return *this;
}

AttrSpec optional_attr(std::string name, AttrValue default_value) {
  AttrSpec spec;
  spec.name = std::move(name);
  spec.type = default_value.type();
  spec.default_value = std::move(default_value);
  return spec;
}

AttrSpec required_attr(std::string name, dlrt_attr_type type) {
  AttrSpec spec;
  spec.name = std::move(name);
  spec.type = type;
  spec.required = true;
  return spec;
}

Status check_attr_value(std::string_view op, const AttrSpec& spec, const AttrValue& value) {
  const std::string shown = to_string(value);
  if (spec.type == DLRT_ATTR_STRING && !spec.allowed_strings.empty() &&
      std::find(spec.allowed_strings.begin(), spec.allowed_strings.end(), value.as_string()) ==
          spec.allowed_strings.end()) {
    return invalid_argument("{}: attribute '{}' is {}, expected one of \"{}\"", op, spec.name,
                            shown, fmt::join(spec.allowed_strings, "\", \""));
  }
  if (spec.type == DLRT_ATTR_DTYPE) {
    const dlrt_dtype d = value.as_dtype();
    const bool allowed = spec.allowed_dtypes.empty()
                             ? is_valid_dtype(d)
                             : std::find(spec.allowed_dtypes.begin(), spec.allowed_dtypes.end(),
                                         d) != spec.allowed_dtypes.end();
    if (!allowed) {
      return invalid_argument("{}: attribute '{}' is {}, expected {}", op, spec.name, shown,
                              spec.allowed_dtypes.empty() ? std::string("a valid dtype")
                                                          : format_dtypes(spec.allowed_dtypes));
    }
  }
  if (spec.length >= 0) {
    const size_t n = spec.type == DLRT_ATTR_INTS     ? value.as_ints().size()
                     : spec.type == DLRT_ATTR_FLOATS ? value.as_floats().size()
                                                     : 0;
    if (n != static_cast<size_t>(spec.length))
      return invalid_argument("{}: attribute '{}' {} has {} values, expected {}", op, spec.name,
                              shown, n, spec.length);
  }
  if (spec.min_value) {
    const Ints single = spec.type == DLRT_ATTR_INT ? Ints{value.as_int()} : Ints{};
    const Ints& values = spec.type == DLRT_ATTR_INTS ? value.as_ints() : single;
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] < *spec.min_value) {
        if (spec.type == DLRT_ATTR_INT)
          return invalid_argument("{}: attribute '{}' is {}, expected >= {}", op, spec.name,
                                  values[i], *spec.min_value);
        return invalid_argument("{}: attribute '{}' {} has {} at index {}, expected >= {}", op,
                                spec.name, shown, values[i], i, *spec.min_value);
      }
    }
  }
  return Status();
}

Result<AttrMap> resolve_attrs(std::string_view op, const std::vector<AttrSpec>& specs,
                              const AttrMap& given) {
  auto find_spec = [&](std::string_view name) -> const AttrSpec* {
    for (const AttrSpec& s : specs)
      if (s.name == name) return &s;
    return nullptr;
  };
  for (const auto& [name, value] : given) {
    if (find_spec(name) == nullptr) {
      std::vector<std::string> names;
      for (const AttrSpec& s : specs) names.push_back(s.name);
      std::sort(names.begin(), names.end());
      return invalid_argument(
          "{}: unknown attribute '{}' (accepted: {})", op, name,
          names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", ")));
    }
  }
  AttrMap out;
  for (const AttrSpec& spec : specs) {
    auto it = given.find(spec.name);
    if (it == given.end()) {
      if (spec.required)
        return invalid_argument("{}: missing required attribute '{}' ({})", op, spec.name,
                                attr_type_name(spec.type));
      out.emplace(spec.name, *spec.default_value);
      continue;
    }
    AttrValue value = it->second;
    if (spec.type == DLRT_ATTR_FLOAT && value.type() == DLRT_ATTR_INT)
      value = AttrValue(static_cast<double>(value.as_int()));  // widening, see attrs.hpp
    if (value.type() != spec.type)
      return invalid_argument("{}: attribute '{}' must be {}, got {} {}", op, spec.name,
                              attr_type_name(spec.type), attr_type_name(value.type()),
                              to_string(value));
    DLRT_OPS_RETURN_IF_ERROR(check_attr_value(op, spec, value));
    out.emplace(spec.name, std::move(value));
  }
  return out;
}

Result<AttrValue> attr_from_c(std::string_view op, const dlrt_attr& a) {
  const size_t size = a.struct_size;
  const char* name = DLRT_HAS_FIELD(dlrt_attr, name, size) ? a.name : nullptr;
  if (name == nullptr) return invalid_argument("{}: an attribute has no name", op);
  const int32_t type = DLRT_HAS_FIELD(dlrt_attr, type, size) ? a.type : DLRT_ATTR_NONE;
  const int64_t i = DLRT_HAS_FIELD(dlrt_attr, i, size) ? a.i : 0;
  const double f = DLRT_HAS_FIELD(dlrt_attr, f, size) ? a.f : 0.0;
  const char* s = DLRT_HAS_FIELD(dlrt_attr, s, size) ? a.s : nullptr;
  const int64_t* ints = DLRT_HAS_FIELD(dlrt_attr, ints, size) ? a.ints : nullptr;
  const double* floats = DLRT_HAS_FIELD(dlrt_attr, floats, size) ? a.floats : nullptr;
  const size_t count = DLRT_HAS_FIELD(dlrt_attr, count, size) ? a.count : 0;
  switch (type) {
    case DLRT_ATTR_INT:
      return AttrValue(i);
    case DLRT_ATTR_FLOAT:
      return AttrValue(f);
    case DLRT_ATTR_BOOL:
      if (i != 0 && i != 1)
        return invalid_argument("{}: attribute '{}' is a bool holding {}, expected 0 or 1", op,
                                name, i);
      return AttrValue(i == 1);
    case DLRT_ATTR_STRING:
      if (s == nullptr) return invalid_argument("{}: string attribute '{}' is NULL", op, name);
      return AttrValue(std::string(s));
    case DLRT_ATTR_DTYPE:
      if (!is_valid_dtype(static_cast<int32_t>(i)))
        return invalid_argument("{}: attribute '{}' holds {}, not a dtype", op, name, i);
      return AttrValue(static_cast<dlrt_dtype>(i));
    case DLRT_ATTR_INTS:
      if (count > 0 && ints == nullptr)
        return invalid_argument("{}: attribute '{}' has {} ints but a NULL array", op, name, count);
      return AttrValue(Ints(ints, ints + count));
    case DLRT_ATTR_FLOATS:
      if (count > 0 && floats == nullptr)
        return invalid_argument("{}: attribute '{}' has {} floats but a NULL array", op, name,
                                count);
      return AttrValue(Floats(floats, floats + count));
    default:
      return invalid_argument("{}: attribute '{}' has unknown type {}", op, name, type);
  }
}

dlrt_attr to_c_attr(const std::string& name, const AttrValue& value) {
  dlrt_attr a{};
  a.struct_size = DLRT_STRUCT_SIZE(dlrt_attr);
  a.name = name.c_str();
  a.type = value.type();
  switch (value.type()) {
    case DLRT_ATTR_INT:
      a.i = value.as_int();
      break;
    case DLRT_ATTR_FLOAT:
      a.f = value.as_float();
      break;
    case DLRT_ATTR_BOOL:
      a.i = value.as_bool() ? 1 : 0;
      break;
    case DLRT_ATTR_STRING:
      a.s = value.as_string().c_str();
      break;
    case DLRT_ATTR_DTYPE:
      a.i = value.as_dtype();
      break;
    case DLRT_ATTR_INTS:
      a.ints = value.as_ints().data();
      a.count = value.as_ints().size();
      break;
    case DLRT_ATTR_FLOATS:
      a.floats = value.as_floats().data();
      a.count = value.as_floats().size();
      break;
    case DLRT_ATTR_NONE:
      break;
  }
  return a;
}

}  // namespace dlrt::ops
