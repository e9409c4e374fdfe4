// tensor_proto.cc: reading and writing TensorProto (see tensor_proto.hpp).
#include "onnx_import/tensor_proto.hpp"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "status.hpp"

namespace dlrt::onnx_import {
namespace fs = std::filesystem;
using onnx::TensorProto;

const char* onnx_type_name(int32_t t) {
  switch (t) {
    case TensorProto::FLOAT: return "FLOAT";
    case TensorProto::UINT8: return "UINT8";
    case TensorProto::INT8: return "INT8";
    case TensorProto::UINT16: return "UINT16";
    case TensorProto::INT16: return "INT16";
    case TensorProto::INT32: return "INT32";
    case TensorProto::INT64: return "INT64";
    case TensorProto::STRING: return "STRING";
    case TensorProto::BOOL: return "BOOL";
    case TensorProto::FLOAT16: return "FLOAT16";
    case TensorProto::DOUBLE: return "DOUBLE";
    case TensorProto::UINT32: return "UINT32";
    case TensorProto::UINT64: return "UINT64";
    case TensorProto::COMPLEX64: return "COMPLEX64";
    case TensorProto::COMPLEX128: return "COMPLEX128";
    case TensorProto::BFLOAT16: return "BFLOAT16";
    default: return "an unknown type";
  }
}

dlrt_dtype dtype_from_onnx(int32_t t, const std::string& what) {
  switch (t) {
    case TensorProto::FLOAT: return DLRT_F32;
    case TensorProto::UINT8: return DLRT_U8;
    case TensorProto::INT8: return DLRT_I8;
    case TensorProto::UINT16: return DLRT_U16;
    case TensorProto::INT16: return DLRT_I16;
    case TensorProto::UINT32: return DLRT_U32;
    case TensorProto::UINT64: return DLRT_U64;
    case TensorProto::INT32: return DLRT_I32;
    case TensorProto::INT64: return DLRT_I64;
    case TensorProto::BOOL: return DLRT_BOOL;
    case TensorProto::FLOAT16: return DLRT_F16;
    case TensorProto::DOUBLE: return DLRT_F64;
    case TensorProto::BFLOAT16: return DLRT_BF16;
    default:
      fail(DLRT_UNIMPLEMENTED,
           fmt::format("{}: ONNX element type {} ({}) has no dlrt dtype (dlrt has FLOAT, "
                       "FLOAT16, BFLOAT16, DOUBLE, INT8, INT16, INT32, INT64, UINT8, UINT16, "
                       "UINT32, UINT64, BOOL)",
                       what, onnx_type_name(t), t));
  }
}

int32_t onnx_from_dtype(dlrt_dtype d) {
  switch (d) {
    case DLRT_F32: return TensorProto::FLOAT;
    case DLRT_F16: return TensorProto::FLOAT16;
    case DLRT_BF16: return TensorProto::BFLOAT16;
    case DLRT_F64: return TensorProto::DOUBLE;
    case DLRT_I32: return TensorProto::INT32;
    case DLRT_I64: return TensorProto::INT64;
    case DLRT_U8: return TensorProto::UINT8;
    case DLRT_I8: return TensorProto::INT8;
    case DLRT_U16: return TensorProto::UINT16;
    case DLRT_I16: return TensorProto::INT16;
    case DLRT_U32: return TensorProto::UINT32;
    case DLRT_U64: return TensorProto::UINT64;
    case DLRT_BOOL: return TensorProto::BOOL;
    default: return TensorProto::UNDEFINED;
  }
}

namespace {

// Copies `count` elements of a repeated field into t.bytes, each narrowed to the dtype
// (ONNX keeps INT8/UINT8/INT16/UINT16/BOOL/FLOAT16/BFLOAT16 one per int32_data entry, and
// UINT32/UINT64 one per uint64_data entry).
template <typename Field>
void copy_field(const Field& field, int64_t count, HostTensor& t, const std::string& what,
                const char* field_name) {
  if (static_cast<int64_t>(field.size()) != count)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}: {} holds {} values, dims {} need {}", what, field_name, field.size(),
                     dims_text(t.dims), count));
  const size_t es = dlrt_dtype_size(t.dtype);
  t.bytes.resize(static_cast<size_t>(count) * es);
  for (int64_t i = 0; i < count; ++i) {
    uint8_t* p = t.bytes.data() + i * es;
    const auto v = field.Get(static_cast<int>(i));
    switch (t.dtype) {
      case DLRT_F32: { const float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
      case DLRT_F64: { const double f = static_cast<double>(v); std::memcpy(p, &f, 8); break; }
      case DLRT_I32: { const int32_t f = static_cast<int32_t>(v); std::memcpy(p, &f, 4); break; }
      case DLRT_I64: { const int64_t f = static_cast<int64_t>(v); std::memcpy(p, &f, 8); break; }
      case DLRT_F16:
      case DLRT_BF16: {  // the 16 bits, as stored in an int32
        const uint16_t f = static_cast<uint16_t>(v);
        std::memcpy(p, &f, 2);
        break;
      }
      case DLRT_U16:
      case DLRT_I16: {  // the low 16 bits (an int16's sign-extended int32 holds them too)
        const uint16_t f = static_cast<uint16_t>(v);
        std::memcpy(p, &f, 2);
        break;
      }
      case DLRT_U32: { const uint32_t f = static_cast<uint32_t>(v); std::memcpy(p, &f, 4); break; }
      case DLRT_U64: { const uint64_t f = static_cast<uint64_t>(v); std::memcpy(p, &f, 8); break; }
      case DLRT_BOOL: *p = v != 0 ? 1 : 0; break;
      default: *p = static_cast<uint8_t>(v); break;
    }
  }
}

// The file `location` names, resolved inside root.folder; refuses one outside it.
fs::path external_path(const std::string& location, const ExternalDataRoot& root,
                       const std::string& what) {
  if (root.folder.empty())
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}: has external data ('{}') but the model was given as bytes, not a "
                     "file: there is no folder to read it from",
                     what, location));
  const fs::path rel(location);
  if (location.empty() || rel.is_absolute())
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}: external data location '{}' must be a path relative to the model's "
                     "folder",
                     what, location));
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(fs::path(root.folder), ec);
  const fs::path full = fs::weakly_canonical(base / rel, ec);
  if (ec) fail(DLRT_NOT_FOUND, fmt::format("{}: external data '{}': {}", what, location, ec.message()));
  // Inside `base`: every component of base is a prefix of full, and full is longer.
  auto b = base.begin(), f = full.begin();
  for (; b != base.end(); ++b, ++f)
    if (f == full.end() || *b != *f)
      fail(DLRT_PERMISSION_DENIED,
           fmt::format("{}: external data location '{}' leaves the model's folder {} "
                       "(resolves to {}); only files inside it are read",
                       what, location, base.string(), full.string()));
  if (f == full.end())
    fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: external data location '{}' is the model's "
                                            "folder itself", what, location));
  return full;
}

void read_external(const TensorProto& proto, const ExternalDataRoot& root, HostTensor& t,
                   uint64_t want, const std::string& what) {
  std::string location;
  uint64_t offset = 0, length = want;
  bool has_length = false;
  for (const auto& kv : proto.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      if (kv.key() == "offset") offset = std::stoull(kv.value());
      if (kv.key() == "length") { length = std::stoull(kv.value()); has_length = true; }
    } catch (const std::exception&) {
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: external data {} '{}' is not a number", what,
                                              kv.key(), kv.value()));
    }
  }
  if (has_length && length != want)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}: external data length {} but dims {} of {} need {} bytes", what, length,
                     dims_text(t.dims), dlrt_dtype_name(t.dtype), want));
  const fs::path path = external_path(location, root, what);
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) fail(DLRT_NOT_FOUND, fmt::format("{}: external data file {}: {}", what, path.string(), ec.message()));
  if (offset > size || size - offset < want)
    fail(DLRT_OUT_OF_RANGE,
         fmt::format("{}: external data file {} has {} bytes; offset {} + length {} reach past "
                     "its end",
                     what, path.string(), size, offset, want));
  std::ifstream in(path, std::ios::binary);
  t.bytes.resize(want);
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(t.bytes.data()), static_cast<std::streamsize>(want));
  if (!in) fail(DLRT_DATA_LOSS, fmt::format("{}: reading {} failed", what, path.string()));
}

}  // namespace

HostTensor read_tensor_proto(const TensorProto& proto, const ExternalDataRoot& root,
                             const std::string& what) {
  HostTensor t;
  t.dtype = dtype_from_onnx(proto.data_type(), what);
  t.dims.assign(proto.dims().begin(), proto.dims().end());
  const int64_t count = checked_element_count(t.dims, kMaxTensorElements, what);
  const uint64_t want = static_cast<uint64_t>(count) * dlrt_dtype_size(t.dtype);
  if (proto.has_data_location() && proto.data_location() == TensorProto::EXTERNAL) {
    read_external(proto, root, t, want, what);
    return t;
  }
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != want)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("{}: raw_data has {} bytes, dims {} of {} need {}", what,
                       proto.raw_data().size(), dims_text(t.dims), dlrt_dtype_name(t.dtype), want));
    t.bytes.assign(proto.raw_data().begin(), proto.raw_data().end());
    return t;
  }
  switch (proto.data_type()) {
    case TensorProto::FLOAT: copy_field(proto.float_data(), count, t, what, "float_data"); break;
    case TensorProto::DOUBLE: copy_field(proto.double_data(), count, t, what, "double_data"); break;
    case TensorProto::INT64: copy_field(proto.int64_data(), count, t, what, "int64_data"); break;
    case TensorProto::UINT32:
    case TensorProto::UINT64: copy_field(proto.uint64_data(), count, t, what, "uint64_data"); break;
    default: copy_field(proto.int32_data(), count, t, what, "int32_data"); break;
  }
  return t;
}

void write_tensor_proto(const HostTensor& t, const std::string& name, TensorProto* proto) {
  proto->Clear();
  proto->set_name(name);
  proto->set_data_type(onnx_from_dtype(t.dtype));
  for (int64_t d : t.dims) proto->add_dims(d);
  proto->set_raw_data(t.bytes.data(), t.bytes.size());
}

}  // namespace dlrt::onnx_import
