// dlrt/op_info.hpp: what the library says about its ops: the list of every op with its
// one-line doc (docs/ops.md), and OpSupport, a device's yes or no-with-a-reason to "can you run
// this op?" (Context::op_supported, Context::op_probe).
#ifndef DLRT_OP_INFO_HPP_
#define DLRT_OP_INFO_HPP_

#include <cstddef>
#include <string>
#include <vector>

#include "dlrt/error.hpp"

namespace dlrt {

// A device's answer to "can you run this op?": supported, or the code and reason it gave
// (UNIMPLEMENTED with the plugin's words; NOT_FOUND for an unknown op).
struct OpSupport {
  bool supported = true;
  dlrt_code code = DLRT_OK;
  std::string reason;  // "" when supported

  explicit operator bool() const noexcept { return supported; }

  // Takes (and frees) a status from dlrt_op_supported / dlrt_op_probe: NULL is "yes".
  static OpSupport from_status(dlrt_status* status) {
    OpSupport s;
    if (status == nullptr) return s;
    detail::Owner<dlrt_status> owned(status);
    s.supported = false;
    s.code = dlrt_status_code(owned.get());
    s.reason = detail::str(dlrt_status_message(owned.get()));
    return s;
  }
};

// One op the library knows (docs/ops.md): its name and one-line doc.
struct OpInfo {
  std::string name;
  std::string doc;
};

// Every op, sorted by name (dlrt_op_count / dlrt_op_name / dlrt_op_doc).
inline std::vector<OpInfo> op_list() {
  std::vector<OpInfo> out;
  const size_t n = dlrt_op_count();
  out.reserve(n);
  for (size_t i = 0; i < n; ++i)
    out.push_back({detail::str(dlrt_op_name(i)), detail::str(dlrt_op_doc(i))});
  return out;
}

}  // namespace dlrt

#endif  // DLRT_OP_INFO_HPP_
