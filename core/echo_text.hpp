// echo_text.hpp: how error and log messages quote what the user gave (device specs, plugin
// options, settings values). Quoting input in full lets one bad 1 MB value become a 1 MB (or
// repeated: several MB) message; every message that echoes input goes through this helper.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dlrt::core {

// The most characters of one input a message repeats.
inline constexpr size_t kEchoMaxChars = 200;

// `text` itself when it has at most kEchoMaxChars characters; otherwise its first
// kEchoMaxChars characters followed by "... (N bytes in all)", so the reader still sees where
// the value starts and how long it was.
std::string truncated_for_message(std::string_view text, size_t max_chars = kEchoMaxChars);

}  // namespace dlrt::core
