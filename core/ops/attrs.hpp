// core/ops/attrs.hpp: typed attribute values, their specs (type, default, required,
// allowed values) and the one function that turns what a caller gave into the complete,
// checked attribute set of an op: `resolve_attrs`.
//
// The seven attribute types are those of dlrt_attr (types.h): int, float, bool, string,
// ints, floats, dtype. `AttrValue` owns its value; `to_c_attr` views it as a dlrt_attr whose
// pointers point into the AttrValue (so it must outlive the view).
#pragma once

#include <dlrt/names.hpp>  // attr_type_name
#include <dlrt/types.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "status.hpp"

namespace dlrt::ops {

using Ints = std::vector<int64_t>;
using Floats = std::vector<double>;

class AttrValue {
 public:
  AttrValue() : v_(int64_t{0}) {}
  // Any integer type but bool is an int attribute (so 1, 1L and int64_t{1} all work).
  template <typename I,
            std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  AttrValue(I v) : v_(static_cast<int64_t>(v)) {}   // NOLINT
  AttrValue(double v) : v_(v) {}                    // NOLINT
  AttrValue(bool v) : v_(v) {}                      // NOLINT
  AttrValue(const char* v) : v_(std::string(v)) {}  // NOLINT: else it would become a bool
  AttrValue(std::string v) : v_(std::move(v)) {}    // NOLINT
  AttrValue(Ints v) : v_(std::move(v)) {}           // NOLINT
  AttrValue(std::initializer_list<int64_t> v) : v_(Ints(v)) {}  // {2, 2}
  AttrValue(Floats v) : v_(std::move(v)) {}                     // NOLINT
  AttrValue(dlrt_dtype v) : v_(v) {}                            // NOLINT

  dlrt_attr_type type() const;

  // Preconditions: type() is the matching type (resolve_attrs guarantees it for the
  // attributes of an instantiated op). A mismatch throws std::bad_variant_access, which
  // instantiate() turns into INTERNAL.
  int64_t as_int() const { return std::get<int64_t>(v_); }
  double as_float() const { return std::get<double>(v_); }
  bool as_bool() const { return std::get<bool>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const Ints& as_ints() const { return std::get<Ints>(v_); }
  const Floats& as_floats() const { return std::get<Floats>(v_); }
  dlrt_dtype as_dtype() const { return std::get<dlrt_dtype>(v_); }

  friend bool operator==(const AttrValue& a, const AttrValue& b) { return a.v_ == b.v_; }
  friend bool operator!=(const AttrValue& a, const AttrValue& b) { return !(a == b); }

 private:
  std::variant<int64_t, double, bool, std::string, Ints, Floats, dlrt_dtype> v_;
};

// Attribute name -> value. Ordered, so materialised descriptors list attributes by name.
using AttrMap = std::map<std::string, AttrValue, std::less<>>;

// As error messages show values: 3, 0.001, true, "VALID", (1,1), (0.5,2), f32.
std::string to_string(const AttrValue& value);

// What an op accepts for one attribute. Build with optional_attr/required_attr and chain
// the restrictions: optional_attr("padding", "VALID").one_of({"VALID", "SAME"}).
struct AttrSpec {
  std::string name;
  dlrt_attr_type type = DLRT_ATTR_NONE;
  bool required = false;
  std::optional<AttrValue> default_value;    // set iff !required
  std::vector<std::string> allowed_strings;  // string: one of these (empty: any)
  std::vector<dlrt_dtype> allowed_dtypes;    // dtype: one of these (empty: any valid dtype)
  int length = -1;                           // ints/floats: exactly this many (-1: any)
  std::optional<int64_t> min_value;          // int/ints: every element >= this
  std::string doc;
  // Values other than the default whose behaviour the conformance suite must see (float and
  // int attributes; strings and bools are covered by their allowed values). Each one not
  // already in an op's samples adds a sample (sample.hpp, vary_attributes).
  std::vector<AttrValue> sample_values;

  AttrSpec& one_of(std::vector<std::string> values);
  AttrSpec& dtypes(std::vector<dlrt_dtype> values);
  AttrSpec& exactly(int n);
  AttrSpec& at_least(int64_t min);
  AttrSpec& describe(std::string text);
  AttrSpec& try_values(std::vector<AttrValue> values);
};
AttrSpec optional_attr(std::string name, AttrValue default_value);
AttrSpec required_attr(std::string name, dlrt_attr_type type);

// Checks the restrictions of `spec` on a value of the right type.
Status check_attr_value(std::string_view op, const AttrSpec& spec, const AttrValue& value);

// The complete attribute set of an op from what the caller gave:
//   - an attribute not in `specs` is an error naming it and listing the accepted names;
//   - a value of the wrong type is an error (an int is accepted where a float is expected,
//     and widened: momentum=1 means 1.0);
//   - a missing required attribute is an error; a missing optional one gets its default;
//   - every value passes check_attr_value.
Result<AttrMap> resolve_attrs(std::string_view op, const std::vector<AttrSpec>& specs,
                              const AttrMap& given);

// A dlrt_attr read from a caller (the reader side of the ABI: fields past struct_size are
// absent; a NULL string or list pointer with a non-zero count is an error).
Result<AttrValue> attr_from_c(std::string_view op, const dlrt_attr& attr);

// A dlrt_attr that views `value` (pointers into `name` and `value`; both must outlive it).
dlrt_attr to_c_attr(const std::string& name, const AttrValue& value);

}  // namespace dlrt::ops
