// npy.cc: the .npy reader and writer (npy.hpp).
#include "npy.hpp"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <stdexcept>

namespace dlrt::npy {
namespace {

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  throw std::runtime_error(fmt::format("{}: {}", path, why));
}

dlrt_dtype dtype_of(const std::string& descr, const std::string& path) {
  if (descr == "<f4") return DLRT_F32;
  if (descr == "<f8") return DLRT_F64;
  if (descr == "<f2") return DLRT_F16;
  if (descr == "<i4") return DLRT_I32;
  if (descr == "<i8") return DLRT_I64;
  if (descr == "|u1") return DLRT_U8;
  if (descr == "|i1") return DLRT_I8;
  if (descr == "|b1") return DLRT_BOOL;
  if (descr == "<u2") return DLRT_U16;
  if (descr == "<i2") return DLRT_I16;
  if (descr == "<u4") return DLRT_U32;
  if (descr == "<u8") return DLRT_U64;
  bad(path, fmt::format("dtype '{}' has no dlrt dtype (expected one of <f4 <f8 <f2 <i2 <i4 <i8 <u2 "
                        "<u4 <u8 |u1 |i1 |b1; NumPy's letter then bytes, little-endian)",
                        descr));
}

// The value after 'key': in the header dict.
std::string field(const std::string& h, const std::string& key, const std::string& path) {
  const size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) bad(path, "the header has no '" + key + "'");
  size_t v = h.find(':', k);
  if (v == std::string::npos) bad(path, "a malformed header");
  ++v;
  while (v < h.size() && h[v] == ' ') ++v;
  if (v < h.size() && h[v] == '\'') {
    const size_t e = h.find('\'', v + 1);
    if (e == std::string::npos) bad(path, "a malformed header");
    return h.substr(v + 1, e - v - 1);
  }
  if (v < h.size() && h[v] == '(') {
    const size_t e = h.find(')', v);
    if (e == std::string::npos) bad(path, "a malformed header");
    return h.substr(v + 1, e - v - 1);
  }
  const size_t e = h.find_first_of(",}", v);
  return h.substr(v, e - v);
}

}  // namespace

std::string descr_of(dlrt_dtype d) {
  switch (d) {
    case DLRT_F32: return "<f4";
    case DLRT_F64: return "<f8";
    case DLRT_F16: return "<f2";
    case DLRT_I32: return "<i4";
    case DLRT_I64: return "<i8";
    case DLRT_U8: return "|u1";
    case DLRT_I8: return "|i1";
    case DLRT_BOOL: return "|b1";
    case DLRT_U16: return "<u2";
    case DLRT_I16: return "<i2";
    case DLRT_U32: return "<u4";
    case DLRT_U64: return "<u8";
    default: return "";
  }
}

Array read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path, "cannot open");
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) bad(path, "not a .npy file");
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    uint8_t b[2];
    in.read(reinterpret_cast<char*>(b), 2);
    hlen = b[0] | (b[1] << 8);
  } else if (magic[6] == 2 || magic[6] == 3) {
    uint8_t b[4];
    in.read(reinterpret_cast<char*>(b), 4);
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
  } else {
    bad(path, fmt::format(".npy version {} is not 1, 2 or 3", int(magic[6])));
  }
  if (hlen > (1u << 20)) bad(path, "a header above 1 MiB");
  std::string h(hlen, '\0');
  if (!in.read(h.data(), hlen)) bad(path, "the header is cut short");
  Array a;
  a.dtype = dtype_of(field(h, "descr", path), path);
  if (field(h, "fortran_order", path).find("True") != std::string::npos) bad(path, "Fortran order is not supported");
  const std::string shape = field(h, "shape", path);
  size_t p = 0;
  int64_t count = 1;
  while (p < shape.size()) {
    while (p < shape.size() && (shape[p] == ' ' || shape[p] == ',')) ++p;
    if (p >= shape.size()) break;
    size_t used = 0;
    const long long d = std::stoll(shape.substr(p), &used);
    if (d < 0 || (d > 0 && count > (int64_t{1} << 40) / d)) bad(path, "a shape that is negative or too large");
    a.dims.push_back(d);
    count *= d;
    p += used;
  }
  const size_t want = static_cast<size_t>(count) * dlrt_dtype_size(a.dtype);
  a.bytes.resize(want);
  if (!in.read(reinterpret_cast<char*>(a.bytes.data()), static_cast<std::streamsize>(want)))
    bad(path, fmt::format("the data is shorter than shape ({}) needs ({} bytes)", shape, want));
  return a;
}

void write(const std::string& path, const Array& a) {
  const std::string descr = descr_of(a.dtype);
  if (descr.empty()) throw std::runtime_error(path + ": NumPy has no dtype for " + dlrt_dtype_name(a.dtype));
  std::string shape;
  for (int64_t d : a.dims) shape += std::to_string(d) + ", ";
  if (a.dims.size() > 1) shape.resize(shape.size() - 2);
  else if (a.dims.size() == 1) shape.resize(shape.size() - 1);  // "(3,)"
  std::string h = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape);
  const size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(path + ": cannot write");
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t n = static_cast<uint16_t>(h.size());
  const char len[2] = {static_cast<char>(n & 0xff), static_cast<char>(n >> 8)};
  out.write(len, 2);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  out.write(reinterpret_cast<const char*>(a.bytes.data()), static_cast<std::streamsize>(a.bytes.size()));
  if (!out) throw std::runtime_error(path + ": write failed");
}

}  // namespace dlrt::npy
