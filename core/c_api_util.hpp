// c_api_util.hpp: the shell every exported function of c_api*.cc wears.
//
//   guarded(body)    runs body; anything it throws becomes a dlrt_status* (NULL when it
//                    returns), so no exception ever crosses the C ABI into the caller
//   require(p, what) INVALID_ARGUMENT "<what> is NULL"
//   write_out(out, full, what)  copies a versioned output struct as far as the caller's
//                    out->struct_size reaches, keeping that struct_size (an older caller's
//                    smaller struct is never overrun)
#pragma once

#include <dlrt/status.h>

#include <fmt/format.h>

#include <cstring>

#include "status.hpp"

namespace dlrt::core {

template <typename Fn>
dlrt_status* guarded(Fn&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (...) {
    return status_from_current_exception();
  }
}

template <typename T>
T* require(T* p, const char* what) {
  if (p == nullptr) fail(DLRT_INVALID_ARGUMENT, fmt::format("{} is NULL", what));
  return p;
}

template <typename T>
void write_out(T* out, const T& full, const char* what) {
  size_t n = out->struct_size;
  if (n < sizeof(size_t))
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}->struct_size is {}; set it with DLRT_STRUCT_SIZE", what, n));
  if (n > sizeof(T)) n = sizeof(T);
  std::memcpy(reinterpret_cast<unsigned char*>(out) + sizeof(size_t),
              reinterpret_cast<const unsigned char*>(&full) + sizeof(size_t), n - sizeof(size_t));
}

}  // namespace dlrt::core
