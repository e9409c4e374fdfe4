// io/safetensors_read.cc: the safetensors header validator and file loader (format and
// error rules in safetensors.hpp).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <set>

#include "io/file_util.hpp"
#include "io/safetensors.hpp"
#include "status.hpp"

namespace dlrt::core::io {
namespace {

using Json = nlohmann::ordered_json;  // keeps the header's key order (metadata, ties)

constexpr const char* kSupported =
    "F32, F16, BF16, F64, I32, I64, U8, I8, U16, I16, U32, U64, BOOL";

struct Dtype {
  const char* name;
  dlrt_dtype dtype;
  size_t size;
};
constexpr Dtype kDtypes[] = {{"F32", DLRT_F32, 4}, {"F16", DLRT_F16, 2}, {"BF16", DLRT_BF16, 2},
                             {"F64", DLRT_F64, 8}, {"I32", DLRT_I32, 4}, {"I64", DLRT_I64, 8},
                             {"U8", DLRT_U8, 1},   {"I8", DLRT_I8, 1},   {"BOOL", DLRT_BOOL, 1},
                             {"U16", DLRT_U16, 2}, {"I16", DLRT_I16, 2}, {"U32", DLRT_U32, 4},
                             {"U64", DLRT_U64, 8}};
// Dtypes of the format that dlrt has no dtype for.
constexpr const char* kUnsupported[] = {
    "F8_E5M2", "F8_E4M3", "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4", "C64"};

// Thrown from the parser callback; turned into DATA_LOSS by the caller.
struct HeaderShapeError {
  std::string what;
};

// Parses the JSON, refusing duplicate keys in any object (nlohmann would keep one silently)
// and nesting deeper than a safetensors header has (root > tensor > shape: 3 levels; the
// limit also keeps a hostile header from building a deep tree).
Json parse_json(const char* begin, const char* end) {
  std::vector<std::set<std::string>> keys;  // one set per open object
  int depth = 0;
  auto callback = [&](int, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
        keys.emplace_back();
        [[fallthrough]];
      case Json::parse_event_t::array_start:
        if (++depth > 3) throw HeaderShapeError{"the header nests deeper than 3 levels"};
        break;
      case Json::parse_event_t::object_end:
        keys.pop_back();
        [[fallthrough]];
      case Json::parse_event_t::array_end:
        --depth;
        break;
      case Json::parse_event_t::key: {
        const std::string& k = parsed.get_ref<const std::string&>();
        if (!keys.back().insert(k).second)
          throw HeaderShapeError{
              fmt::format("duplicate key \"{}\"{}", k,
                          keys.size() == 1 ? " (two tensors with the same name)" : "")};
        break;
      }
      default:
        break;
    }
    return true;
  };
  return Json::parse(begin, end, callback);
}

// A JSON value that must be an integer in [0, 2^63): shape dims and offsets.
bool as_count(const Json& v, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return *out <= uint64_t{INT64_MAX};
  }
  if (v.is_number_integer() && v.get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(v.get<int64_t>());
    return true;
  }
  return false;
}

SafetensorsEntry parse_tensor(const std::string& name, const Json& info, const std::string& src) {
  std::string where = fmt::format("{}: tensor \"{}\"", src, name);
  if (!info.is_object())
    fail(DLRT_DATA_LOSS, fmt::format("{}: expected an object with dtype, shape, data_offsets; got "
                                     "a JSON {}",
                                     where, info.type_name()));
  for (const auto& item : info.items())
    if (item.key() != "dtype" && item.key() != "shape" && item.key() != "data_offsets")
      fail(DLRT_DATA_LOSS, fmt::format("{}: unknown field \"{}\" (expected dtype, shape, "
                                       "data_offsets)",
                                       where, item.key()));
  for (const char* field : {"dtype", "shape", "data_offsets"})
    if (!info.contains(field))
      fail(DLRT_DATA_LOSS, fmt::format("{}: missing field \"{}\"", where, field));

  SafetensorsEntry e;
  e.name = name;
  // dtype
  const Json& dt = info["dtype"];
  if (!dt.is_string())
    fail(DLRT_DATA_LOSS, fmt::format("{}: dtype is a JSON {}, expected a string such as \"F32\"",
                                     where, dt.type_name()));
  const std::string& dts = dt.get_ref<const std::string&>();
  size_t esize = 0;
  for (const Dtype& d : kDtypes)
    if (dts == d.name) e.dtype = d.dtype, esize = d.size;
  if (esize == 0) {
    for (const char* u : kUnsupported)
      if (dts == u)
        fail(DLRT_UNIMPLEMENTED, fmt::format("{}: dtype {} is not supported by dlrt (supported: "
                                             "{})",
                                             where, dts, kSupported));
    fail(DLRT_DATA_LOSS,
         fmt::format("{}: unknown dtype \"{}\" (expected one of {})", where, dts, kSupported));
  }
  // shape
  const Json& shape = info["shape"];
  if (!shape.is_array())
    fail(DLRT_DATA_LOSS, fmt::format("{}: shape is a JSON {}, expected a list of non-negative "
                                     "integers",
                                     where, shape.type_name()));
  if (shape.size() > DLRT_MAX_RANK)
    fail(DLRT_UNIMPLEMENTED, fmt::format("{}: shape has rank {}; dlrt holds at most "
                                         "DLRT_MAX_RANK = {} dims",
                                         where, shape.size(), DLRT_MAX_RANK));
  uint64_t count = 1;
  bool overflow = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    uint64_t d = 0;
    if (!as_count(shape[i], &d))
      fail(DLRT_DATA_LOSS, fmt::format("{}: shape[{}] is {}, expected a non-negative integer "
                                       "(shape must be a list of non-negative integers)",
                                       where, i, shape[i].dump()));
    e.dims.push_back(static_cast<int64_t>(d));
    overflow = overflow || __builtin_mul_overflow(count, d, &count);
  }
  uint64_t nbytes = 0;
  if (overflow || __builtin_mul_overflow(count, uint64_t{esize}, &nbytes))
    fail(DLRT_DATA_LOSS, fmt::format("{}: shape {} overflows: its element count × {} bytes does "
                                     "not fit in 64 bits",
                                     where, shape.dump(), esize));
  // data_offsets
  const Json& off = info["data_offsets"];
  if (!off.is_array() || off.size() != 2 || !as_count(off[0], &e.begin) ||
      !as_count(off[1], &e.end))
    fail(DLRT_DATA_LOSS, fmt::format("{}: data_offsets is {}, expected [begin, end] with "
                                     "non-negative integers",
                                     where, off.dump()));
  if (e.begin > e.end)
    fail(DLRT_DATA_LOSS,
         fmt::format("{}: data_offsets [{}, {}] has begin > end", where, e.begin, e.end));
  if (e.end - e.begin != nbytes)
    fail(DLRT_DATA_LOSS, fmt::format("{}: data_offsets [{}, {}] span {} bytes, but shape {} of {} "
                                     "needs {} × {} = {} (size != product × dtype size)",
                                     where, e.begin, e.end, e.end - e.begin, shape.dump(), dts,
                                     count, esize, nbytes));
  return e;
}

void parse_metadata(const Json& meta, const std::string& src, SafetensorsHeader* out) {
  if (!meta.is_object())
    fail(DLRT_DATA_LOSS, fmt::format("{}: __metadata__ is a JSON {}, expected a string→string map",
                                     src, meta.type_name()));
  for (const auto& item : meta.items()) {
    if (!item.value().is_string())
      fail(DLRT_DATA_LOSS, fmt::format("{}: __metadata__ is not a string→string map: the value "
                                       "of \"{}\" is a JSON {}",
                                       src, item.key(), item.value().type_name()));
    out->metadata.emplace_back(item.key(), item.value().get<std::string>());
  }
}

}  // namespace

SafetensorsHeader parse_safetensors_header(const uint8_t* head, size_t head_size,
                                           uint64_t file_size, const std::string& src) {
  if (file_size < 8 || head_size < 8)
    fail(DLRT_DATA_LOSS, fmt::format("{}: the file is {} bytes; a safetensors file starts with "
                                     "an 8-byte little-endian header length",
                                     src, file_size));
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | head[i];
  if (n > kSafetensorsMaxHeader)
    fail(DLRT_DATA_LOSS, fmt::format("{}: header length {} is larger than the {}-byte limit", src,
                                     n, kSafetensorsMaxHeader));
  if (n > file_size - 8)
    fail(DLRT_DATA_LOSS, fmt::format("{}: header length {} is larger than the file: {} bytes "
                                     "follow the 8-byte length",
                                     src, n, file_size - 8));
  if (head_size - 8 < n)
    fail(DLRT_INTERNAL, fmt::format("{}: parse_safetensors_header given {} of the {} header "
                                    "bytes",
                                    src, head_size - 8, n));

  SafetensorsHeader out;
  out.data_start = 8 + n;
  const uint64_t data_bytes = file_size - out.data_start;
  Json root;
  try {
    const char* text = reinterpret_cast<const char*>(head + 8);
    root = parse_json(text, text + n);
  } catch (const HeaderShapeError& e) {
    fail(DLRT_DATA_LOSS,
         fmt::format("{}: header is not a valid safetensors header: {}", src, e.what));
  } catch (const nlohmann::json::exception& e) {
    fail(DLRT_DATA_LOSS, fmt::format("{}: header is not JSON: {}", src, e.what()));
  }
  if (!root.is_object())
    fail(DLRT_DATA_LOSS,
         fmt::format("{}: header is a JSON {}, expected a JSON object", src, root.type_name()));

  for (const auto& item : root.items()) {
    if (item.key() == "__metadata__") parse_metadata(item.value(), src, &out);
    else out.entries.push_back(parse_tensor(item.key(), item.value(), src));
  }

  // The offsets must tile [0, data_bytes) exactly.
  std::stable_sort(
      out.entries.begin(), out.entries.end(),
      [](const SafetensorsEntry& a, const SafetensorsEntry& b) { return a.begin < b.begin; });
  uint64_t expected = 0;
  const SafetensorsEntry* prev = nullptr;
  for (const SafetensorsEntry& e : out.entries) {
    if (e.begin > expected)
      fail(DLRT_DATA_LOSS,
           prev == nullptr
               ? fmt::format("{}: data_offsets have a gap: the first tensor \"{}\" starts at {}, "
                             "expected 0",
                             src, e.name, e.begin)
               : fmt::format("{}: data_offsets have a gap: tensor \"{}\" starts at {} but \"{}\" "
                             "ends at {} (offsets must be contiguous)",
                             src, e.name, e.begin, prev->name, expected));
    if (e.begin < expected)
      fail(DLRT_DATA_LOSS, fmt::format("{}: data_offsets overlap: tensor \"{}\" [{}, {}) overlaps "
                                       "\"{}\", which ends at {}",
                                       src, e.name, e.begin, e.end, prev->name, expected));
    expected = e.end;
    prev = &e;
  }
  if (expected > data_bytes)
    fail(DLRT_DATA_LOSS, fmt::format("{}: data past the end: tensor \"{}\" ends at byte {} of the "
                                     "data section, which has {} bytes (file truncated?)",
                                     src, prev->name, expected, data_bytes));
  if (expected < data_bytes)
    fail(DLRT_DATA_LOSS, fmt::format("{}: {} trailing bytes after the last tensor's data (the "
                                     "tensors end at byte {} of a {}-byte data section)",
                                     src, data_bytes - expected, expected, data_bytes));
  out.data_bytes = data_bytes;
  return out;
}

std::unique_ptr<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  File file(path);
  const uint64_t size = file.size();
  // The length, then the header it announces (capped: parse_safetensors_header rejects more).
  std::vector<uint8_t> head(8);
  size_t got = file.read(head.data(), 8);
  if (got == 8) {
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | head[i];
    if (n <= kSafetensorsMaxHeader && n <= size - 8) {
      head.resize(8 + n);
      got += file.read(head.data() + 8, n);
    }
  }
  auto out = std::unique_ptr<SafetensorsFile>(new SafetensorsFile());
  out->header_ = parse_safetensors_header(head.data(), got, size, path);
  const uint64_t bytes = out->header_.data_bytes;
  out->data_.reset(static_cast<uint8_t*>(std::malloc(std::max<uint64_t>(bytes, 1))));
  if (out->data_ == nullptr)
    fail(DLRT_RESOURCE_EXHAUSTED,
         fmt::format("{}: cannot allocate {} bytes for its tensors", path, bytes));
  if (file.read(out->data_.get(), bytes) != bytes)
    fail(DLRT_DATA_LOSS, fmt::format("{}: the file shrank while it was read", path));
  for (size_t i = 0; i < out->header_.entries.size(); ++i)
    out->by_name_.emplace(out->header_.entries[i].name, i);
  return out;
}

int64_t SafetensorsFile::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? -1 : static_cast<int64_t>(it->second);
}

const std::string* SafetensorsFile::metadata(const std::string& key) const {
  for (const auto& [k, v] : header_.metadata)
    if (k == key) return &v;
  return nullptr;
}

}  // namespace dlrt::core::io
