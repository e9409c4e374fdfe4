// versioned.hpp: writing a versioned ABI struct (one that starts with `size_t struct_size`)
// into a buffer the host sized, by the rule in plugin.h: write at most min(our size, the
// reader's size) bytes, never past what the reader declared, and report the size written.
// Not part of the SDK: internal to this repository's plugins.
#pragma once

#include <dlrt/plugin.h>

#include <cstring>
#include <string>

#include "plugin_support.hpp"

namespace dlrt::plugin {

// Copies `filled` into `*out`, whose struct_size the caller (the host) set to the size it was
// compiled with. Fields past that size are not written; out->struct_size becomes the number
// of bytes that are valid. `what` names the argument in the error for a bad struct_size.
template <typename T>
void write_versioned(T* out, const T& filled, const char* what) {
  require(out, what);
  if (out->struct_size < sizeof(size_t))
    fail(DLRT_INVALID_ARGUMENT,
         std::string(g_plugin_name) + ": " + what + "->struct_size is " +
             std::to_string(out->struct_size) +
             ", expected the caller's sizeof (set it with DLRT_STRUCT_SIZE)");
  size_t n = out->struct_size < sizeof(T) ? out->struct_size : sizeof(T);
  std::memcpy(reinterpret_cast<unsigned char*>(out) + sizeof(size_t),
              reinterpret_cast<const unsigned char*>(&filled) + sizeof(size_t), n - sizeof(size_t));
  out->struct_size = n;
}

}  // namespace dlrt::plugin
