// dlrt/error.hpp: how the C++ layer turns the C API's statuses into exceptions, and the owner
// type every C++ class holds its C handle in.
//   - `check(status)`: NULL (success) does nothing; any other status is freed and thrown as
//     `dlrt::Error` (its code and message).
//   - `detail::Owner<dlrt_x>`: a std::unique_ptr whose deleter calls the matching
//     dlrt_x_destroy (or _free, _close). A new owned C type adds one Deleter overload here.
#ifndef DLRT_ERROR_HPP_
#define DLRT_ERROR_HPP_

#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "dlrt/dlrt.h"

namespace dlrt {

// A failed dlrt call: the status code and the library's message, e.g.
// code() == DLRT_NOT_FOUND, message() == "no device matches 'GPU:3'; devices: /device:CPU:0".
// what() is "NOT_FOUND: <message>".
class Error : public std::exception {
 public:
  Error(dlrt_code code, std::string message)
      : code_(code),
        message_(std::move(message)),
        what_(std::string(dlrt_code_name(code)) + ": " + message_) {}

  dlrt_code code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  dlrt_code code_;
  std::string message_;
  std::string what_;
};

namespace detail {

// Frees C handles. One overload per owned type; std::unique_ptr picks the right one.
struct Deleter {
  void operator()(dlrt_status* s) const noexcept { dlrt_status_free(s); }
  void operator()(dlrt_context* c) const noexcept { dlrt_context_destroy(c); }
  void operator()(dlrt_tensor* t) const noexcept { dlrt_tensor_destroy(t); }
  void operator()(dlrt_graph* g) const noexcept { dlrt_graph_destroy(g); }
  void operator()(dlrt_executable* e) const noexcept { dlrt_executable_destroy(e); }
  void operator()(dlrt_safetensors* s) const noexcept { dlrt_safetensors_close(s); }
  void operator()(dlrt_strategy* s) const noexcept { dlrt_strategy_destroy(s); }
  void operator()(dlrt_session* s) const noexcept { dlrt_session_destroy(s); }
};

template <typename T>
using Owner = std::unique_ptr<T, Deleter>;

// "" for a NULL C string, so copying a field never crashes on an absent value.
inline std::string str(const char* s) { return s != nullptr ? std::string(s) : std::string(); }

}  // namespace detail

// Throws `Error` when `status` is not OK, and frees it either way. The status is owned
// before anything that can throw (copying the message), so it never leaks.
inline void check(dlrt_status* status) {
  if (status == nullptr) return;
  detail::Owner<dlrt_status> owned(status);
  throw Error(dlrt_status_code(owned.get()), detail::str(dlrt_status_message(owned.get())));
}

}  // namespace dlrt

#endif  // DLRT_ERROR_HPP_
