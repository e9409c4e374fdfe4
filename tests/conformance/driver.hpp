// tests/conformance/driver.hpp: what the conformance driver (conformance_test.cc) shares with
// the other tests of its binary: owners for C handles, and the status text messages print.
#pragma once

#include <dlrt/dlrt.h>

#include <memory>
#include <string>

namespace dlrt::conformance {

struct StatusFree {
  void operator()(dlrt_status* s) const { dlrt_status_free(s); }
};
using StatusPtr = std::unique_ptr<dlrt_status, StatusFree>;
struct TensorDestroy {
  void operator()(dlrt_tensor* t) const { dlrt_tensor_destroy(t); }
};
using TensorPtr = std::unique_ptr<dlrt_tensor, TensorDestroy>;
struct ContextDestroy {
  void operator()(dlrt_context* c) const { dlrt_context_destroy(c); }
};
using ContextPtr = std::unique_ptr<dlrt_context, ContextDestroy>;

// "OK" or "INVALID_ARGUMENT: conv2d: ...".
inline std::string status_text(const dlrt_status* s) {
  if (s == nullptr) return "OK";
  return std::string(dlrt_code_name(dlrt_status_code(s))) + ": " + dlrt_status_message(s);
}

}  // namespace dlrt::conformance
