// dlrt/op_attr.hpp: op attributes, shared by eager ops (Context::run_op) and the graph
// builders (Graph::op, Graph::variable). An OpAttr owns its value; detail::CAttrs lends a
// list of them to one C call as the `const dlrt_attr* const*` array the C API takes.
#ifndef DLRT_OP_ATTR_HPP_
#define DLRT_OP_ATTR_HPP_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dlrt/dlrt.h"

namespace dlrt {

// One op attribute for the builders: {"padding", "SAME"}, {"strides", {2, 2}}, {"seed", 7},
// {"learning_rate", 0.01}, {"transpose_b", true}, {"dtype", DLRT_I32}. Float lists take an
// explicit std::vector<double>. Owns its values; c() views them as a dlrt_attr.
class OpAttr {
 public:
  template <typename I,
            typename std::enable_if<std::is_integral<I>::value && !std::is_same<I, bool>::value,
                                    int>::type = 0>
  OpAttr(std::string name, I value) : name_(std::move(name)), type_(DLRT_ATTR_INT), i_(value) {}
  OpAttr(std::string name, double value)
      : name_(std::move(name)), type_(DLRT_ATTR_FLOAT), f_(value) {}
  OpAttr(std::string name, bool value)
      : name_(std::move(name)), type_(DLRT_ATTR_BOOL), i_(value ? 1 : 0) {}
  OpAttr(std::string name, const char* value)
      : name_(std::move(name)), type_(DLRT_ATTR_STRING), s_(value != nullptr ? value : "") {}
  OpAttr(std::string name, std::string value)
      : name_(std::move(name)), type_(DLRT_ATTR_STRING), s_(std::move(value)) {}
  OpAttr(std::string name, std::initializer_list<int64_t> value)
      : name_(std::move(name)), type_(DLRT_ATTR_INTS), ints_(value) {}
  OpAttr(std::string name, std::vector<int64_t> value)
      : name_(std::move(name)), type_(DLRT_ATTR_INTS), ints_(std::move(value)) {}
  OpAttr(std::string name, std::vector<double> value)
      : name_(std::move(name)), type_(DLRT_ATTR_FLOATS), floats_(std::move(value)) {}
  OpAttr(std::string name, dlrt_dtype value)
      : name_(std::move(name)), type_(DLRT_ATTR_DTYPE), i_(value) {}

  // Points into this object: valid while it lives and is not changed.
  dlrt_attr c() const {
    dlrt_attr a{};
    a.struct_size = DLRT_STRUCT_SIZE(dlrt_attr);
    a.name = name_.c_str();
    a.type = type_;
    a.i = i_;
    a.f = f_;
    a.s = s_.c_str();
    a.ints = ints_.data();
    a.floats = floats_.data();
    a.count = type_ == DLRT_ATTR_INTS     ? ints_.size()
              : type_ == DLRT_ATTR_FLOATS ? floats_.size()
                                          : 0;
    return a;
  }

 private:
  std::string name_;
  dlrt_attr_type type_;
  int64_t i_ = 0;
  double f_ = 0.0;
  std::string s_;
  std::vector<int64_t> ints_;
  std::vector<double> floats_;
};
using OpAttrs = std::vector<OpAttr>;

namespace detail {

// C views of a list of attributes, alive as long as this object (and the OpAttrs).
struct CAttrs {
  explicit CAttrs(const OpAttrs& attrs) {
    values.reserve(attrs.size());
    for (const OpAttr& a : attrs) values.push_back(a.c());
    for (const dlrt_attr& a : values) pointers.push_back(&a);
  }
  const dlrt_attr* const* data() const { return pointers.empty() ? nullptr : pointers.data(); }
  size_t size() const { return pointers.size(); }
  std::vector<dlrt_attr> values;
  std::vector<const dlrt_attr*> pointers;
};
}  // namespace detail

}  // namespace dlrt

#endif  // DLRT_OP_ATTR_HPP_
