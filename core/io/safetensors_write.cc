// io/safetensors_write.cc: the safetensors writer (format in safetensors.hpp).
//
// The header is written as the reference implementation writes it, so the same tensors in
// the same order give the same bytes: compact JSON (no spaces), "__metadata__" first (only
// when there is metadata), then each tensor as {"dtype","shape","data_offsets"} in that key
// order, padded with spaces to a multiple of 8 bytes.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <set>

#include "io/file_util.hpp"
#include "io/safetensors.hpp"
#include "status.hpp"

namespace dlrt::core::io {

const char* safetensors_dtype_name(dlrt_dtype dtype) {
  switch (dtype) {
    case DLRT_F32:
      return "F32";
    case DLRT_F16:
      return "F16";
    case DLRT_BF16:
      return "BF16";
    case DLRT_F64:
      return "F64";
    case DLRT_I32:
      return "I32";
    case DLRT_I64:
      return "I64";
    case DLRT_U8:
      return "U8";
    case DLRT_I8:
      return "I8";
    case DLRT_BOOL:
      return "BOOL";
    case DLRT_U16:
      return "U16";
    case DLRT_I16:
      return "I16";
    case DLRT_U32:
      return "U32";
    case DLRT_U64:
      return "U64";
    default:
      return nullptr;
  }
}

namespace {

// 1 for a dtype without a size, as before: the caller has already refused such a tensor
// by its name (safetensors_dtype_name is NULL for it).
size_t dtype_bytes(dlrt_dtype dtype) {
  const size_t n = dlrt_dtype_size(dtype);
  return n != 0 ? n : 1;
}

}  // namespace

std::string safetensors_header_bytes(
    const std::vector<SafetensorsTensor>& tensors,
    const std::vector<std::pair<std::string, std::string>>& metadata) {
  nlohmann::ordered_json root = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) {
      if (meta.contains(k))
        fail(DLRT_INVALID_ARGUMENT, fmt::format("metadata key \"{}\" is given twice", k));
      meta[k] = v;
    }
    root["__metadata__"] = std::move(meta);
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const SafetensorsTensor& t = tensors[i];
    std::string where = fmt::format("tensor {} (\"{}\")", i, t.name);
    if (t.name == "__metadata__")
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("{}: the name \"__metadata__\" is reserved by the format", where));
    if (root.contains(t.name))
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: the name is used by an earlier tensor", where));
    const char* dt = safetensors_dtype_name(t.dtype);
    if (dt == nullptr)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("{}: dtype {} is not a dlrt dtype", where, static_cast<int>(t.dtype)));
    if (t.dims.size() > DLRT_MAX_RANK)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: rank {} is over DLRT_MAX_RANK = {}", where,
                                              t.dims.size(), DLRT_MAX_RANK));
    uint64_t count = 1;
    for (size_t a = 0; a < t.dims.size(); ++a) {
      if (t.dims[a] < 0)
        fail(DLRT_INVALID_ARGUMENT,
             fmt::format("{}: dims[{}] is {}, expected >= 0", where, a, t.dims[a]));
      if (__builtin_mul_overflow(count, static_cast<uint64_t>(t.dims[a]), &count))
        fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: the dims' product overflows", where));
    }
    uint64_t nbytes = 0;
    if (__builtin_mul_overflow(count, uint64_t{dtype_bytes(t.dtype)}, &nbytes) || nbytes != t.bytes)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("{}: bytes is {}, but dims ({}) of {} need {} × {}", where, t.bytes,
                       fmt::join(t.dims, ","), dt, count, dtype_bytes(t.dtype)));
    if (t.bytes > 0 && t.data == nullptr)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: data is NULL", where));
    nlohmann::ordered_json info = nlohmann::ordered_json::object();
    info["dtype"] = dt;
    info["shape"] = t.dims;
    info["data_offsets"] = {offset, offset + nbytes};
    root[t.name] = std::move(info);
    offset += nbytes;
  }
  std::string json;
  try {
    json = root.dump();
  } catch (const nlohmann::json::exception& e) {
    // type_error 316: a name, key or value that is not valid UTF-8.
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("a tensor name or metadata string is not valid UTF-8: {}", e.what()));
  }
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + json;
}

void write_safetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata) {
  // Everything is validated before the temp file exists.
  std::string header = safetensors_header_bytes(tensors, metadata);
  AtomicFileWriter out(path);
  out.write(header.data(), header.size());
  for (const SafetensorsTensor& t : tensors) out.write(t.data, t.bytes);
  out.commit();
}

}  // namespace dlrt::core::io
