// echo_text.cc: see echo_text.hpp.
#include "echo_text.hpp"

#include <fmt/format.h>

namespace dlrt::core {

std::string truncated_for_message(std::string_view text, size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  // Cut on a UTF-8 character boundary (never inside a multi-byte sequence).
  size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("{}... ({} bytes in all)", text.substr(0, cut), text.size());
}

}  // namespace dlrt::core
