// device_spec.cc: see device_spec.hpp. A hand-written parser, because every error must say
// which part was wrong and what would have been right.
#include "device_spec.hpp"

#include <fmt/format.h>

#include <cctype>
#include <climits>
#include <vector>

#include "echo_text.hpp"
#include "status.hpp"

namespace dlrt::core {
namespace {

constexpr const char* kExpected =
    "expected /job:<name>/replica:<n>/task:<n>/device:<TYPE>:<n> (every part optional) or a "
    "short form such as GPU:0, /CPU:0, cpu or GPU";

// Input echoed in a message, cut to kEchoMaxChars (a spec can be any length).
std::string shown(std::string_view s) { return truncated_for_message(s); }

[[noreturn]] void bad(std::string_view text, const std::string& what) {
  fail(DLRT_INVALID_ARGUMENT,
       fmt::format("bad device spec '{}': {}", truncated_for_message(text), what));
}

std::string lower(std::string_view s) {
  std::string out;
  for (char c : s) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string upper(std::string_view s) {
  std::string out;
  for (char c : s) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

bool is_upper_identifier(std::string_view s) {
  if (!is_identifier(s)) return false;
  for (char c : s)
    if (std::islower(static_cast<unsigned char>(c))) return false;
  return true;
}

// A non-negative decimal that fits int32_t; -1 if `s` is not one.
int32_t parse_index(std::string_view s) {
  if (s.empty() || s.size() > 10) return -1;
  long long v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
    v = v * 10 + (c - '0');
  }
  return v > INT32_MAX ? -1 : static_cast<int32_t>(v);
}

// "<TYPE>" or "<TYPE>:<n>" or "<TYPE>:*" (what follows "device:" or forms a short spec).
void parse_type_and_index(std::string_view text, std::string_view part, std::string_view body,
                          DeviceSpec& spec) {
  size_t colon = body.find(':');
  std::string_view type = body.substr(0, colon);
  if (!is_identifier(type))
    bad(text, fmt::format("device type '{}' in '{}' is not a name; expected letters, digits "
                          "or _ such as CPU or GPU",
                          shown(type), shown(part)));
  if (type.size() > kMaxTypeLength)
    bad(text,
        fmt::format("device type '{}' is longer than {} characters", shown(type), kMaxTypeLength));
  spec.type = upper(type);
  if (colon == std::string_view::npos) return;
  std::string_view index = body.substr(colon + 1);
  if (index == "*") return;  // "any device of this type"
  spec.index = parse_index(index);
  if (spec.index < 0)
    bad(text, fmt::format("bad device index '{}' in '{}': expected a non-negative integer or *",
                          shown(index), shown(part)));
}

}  // namespace

bool DeviceSpec::is_local() const {
  return (job.empty() || job == "localhost") && replica <= 0 && task <= 0;
}

DeviceSpec parse_device_spec(std::string_view text) {
  if (text.empty()) bad(text, std::string("it is empty; ") + kExpected);
  std::string_view rest = text;
  if (rest.front() == '/') rest.remove_prefix(1);
  if (rest.empty()) bad(text, std::string("nothing follows '/'; ") + kExpected);

  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t slash = rest.find('/', start);
    parts.push_back(rest.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }

  DeviceSpec spec;
  // Order rank of the last part seen: job 1, replica 2, task 3, device 4.
  int last_rank = 0;
  auto ordered = [&](int rank, std::string_view part) {
    if (rank == last_rank)
      bad(text, fmt::format("'{}' repeats a part that was already given", shown(part)));
    if (rank < last_rank)
      bad(text,
          fmt::format("'{}' is out of order; parts go job, replica, task, device", shown(part)));
    last_rank = rank;
  };

  for (std::string_view part : parts) {
    if (part.empty())
      bad(text, std::string("it has an empty part ('//' or a trailing '/'); ") + kExpected);
    size_t colon = part.find(':');
    std::string key = lower(part.substr(0, colon));
    std::string_view value =
        colon == std::string_view::npos ? std::string_view() : part.substr(colon + 1);
    if (key == "job" && colon != std::string_view::npos) {
      ordered(1, part);
      bool ok = !value.empty() && value.size() <= kMaxJobLength;
      for (char c : value)
        ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
      if (!ok)
        bad(text, fmt::format("bad job name '{}': expected 1 to {} letters, digits, _ or -",
                              shown(value), kMaxJobLength));
      spec.job = std::string(value);
    } else if ((key == "replica" || key == "task") && colon != std::string_view::npos) {
      ordered(key == "replica" ? 2 : 3, part);
      int32_t n = parse_index(value);
      if (n < 0)
        bad(text, fmt::format("bad {} '{}' in '{}': expected a non-negative integer", key,
                              shown(value), shown(part)));
      (key == "replica" ? spec.replica : spec.task) = n;
    } else if (key == "device" && colon != std::string_view::npos) {
      ordered(4, part);
      parse_type_and_index(text, part, value, spec);
    } else {
      // Short form: "GPU:0", "GPU", "cpu:0", "cpu". Only as the device part.
      std::string_view type = part.substr(0, colon);
      bool looks_like_type = key == "cpu" || key == "gpu" || is_upper_identifier(type);
      if (!looks_like_type)
        bad(text, fmt::format("unknown part '{}'; expected job:<name>, replica:<n>, task:<n>, "
                              "device:<TYPE>:<n>, or a short device form TYPE:<n> (TYPE in "
                              "upper case, or cpu/gpu)",
                              shown(part)));
      ordered(4, part);
      parse_type_and_index(text, part, part, spec);
    }
  }
  return spec;
}

std::string format_device_spec(const DeviceSpec& spec) {
  std::string out =
      fmt::format("/job:{}/replica:{}/task:{}", spec.job.empty() ? "localhost" : spec.job,
                  spec.replica < 0 ? 0 : spec.replica, spec.task < 0 ? 0 : spec.task);
  if (!spec.type.empty())
    out += fmt::format("/device:{}:{}", spec.type, spec.index < 0 ? 0 : spec.index);
  return out;
}

std::string short_device_name(const std::string& type, int32_t index) {
  return fmt::format("/device:{}:{}", type, index);
}

std::string full_device_name(const std::string& type, int32_t index) {
  return "/job:localhost/replica:0/task:0" + short_device_name(type, index);
}

}  // namespace dlrt::core
