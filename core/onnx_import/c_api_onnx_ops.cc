// c_api_onnx_ops.cc: dlrt/onnx_ops.h, the converter table (converters(), convert_*.cc) as a
// static listing: each ONNX op, its one-line description, and the registered dlrt ops that
// description names outside parentheses.
#include <dlrt/onnx_ops.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "onnx_import/node_context.hpp"
#include "ops/op_registry.hpp"

namespace {

struct Entry {
  std::string onnx_op, maps_to;
  std::vector<std::string> dlrt_ops;
};

// The dlrt ops `text` names outside parentheses: each word of [a-z0-9_] that is a registered
// op, once, in order. Parentheses hold notes ("(+ transpose for axis != 0)", "(fused into
// conv2d_bias_act)"), not the ops the converter needs; alternatives ("a or b") are all kept,
// since which one a node takes depends on the model.
std::vector<std::string> named_ops(const std::string& text) {
  std::vector<std::string> ops;
  std::string word;
  int depth = 0;
  auto flush = [&] {
    if (!word.empty() && dlrt::ops::find_op(word) != nullptr &&
        std::find(ops.begin(), ops.end(), word) == ops.end())
      ops.push_back(word);
    word.clear();
  };
  for (char ch : text) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (ch == '(') ++depth;
    if (ch == ')' && depth > 0) --depth;
    if (depth == 0 && (std::islower(u) || std::isdigit(u) || ch == '_')) word += ch;
    else flush();
  }
  flush();
  return ops;
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> list = [] {
    std::vector<Entry> out;
    for (const auto& [name, info] : dlrt::onnx_import::converters().all())  // a std::map: sorted
      out.push_back(Entry{name, info.maps_to, named_ops(info.maps_to)});
    return out;
  }();
  return list;
}

const Entry* entry(size_t index) {
  try {
    return index < entries().size() ? &entries()[index] : nullptr;
  } catch (...) {
    return nullptr;
  }
}

}  // namespace

DLRT_API size_t dlrt_onnx_op_count(void) {
  try {
    return entries().size();
  } catch (...) {
    return 0;
  }
}

DLRT_API const char* dlrt_onnx_op_name(size_t index) {
  const Entry* e = entry(index);
  return e != nullptr ? e->onnx_op.c_str() : nullptr;
}

DLRT_API const char* dlrt_onnx_op_maps_to(size_t index) {
  const Entry* e = entry(index);
  return e != nullptr ? e->maps_to.c_str() : nullptr;
}

DLRT_API size_t dlrt_onnx_op_dlrt_op_count(size_t index) {
  const Entry* e = entry(index);
  return e != nullptr ? e->dlrt_ops.size() : 0;
}

DLRT_API const char* dlrt_onnx_op_dlrt_op(size_t index, size_t k) {
  const Entry* e = entry(index);
  return e != nullptr && k < e->dlrt_ops.size() ? e->dlrt_ops[k].c_str() : nullptr;
}
