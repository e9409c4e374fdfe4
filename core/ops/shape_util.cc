// core/ops/shape_util.cc: see shape_util.hpp.
#include "shape_util.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dlrt::ops {

std::optional<Padding> parse_padding(std::string_view text) {
  if (text == "VALID") return Padding::kValid;
  if (text == "SAME") return Padding::kSame;
  if (text == "EXPLICIT") return Padding::kExplicit;
  return std::nullopt;
}

// Floor division that rounds toward -inf (C++ '/' truncates toward zero).
static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t window_output_size(Padding padding, int64_t in, int64_t k, int64_t stride,
                           int64_t dilation) {
  if (padding == Padding::kSame) return (in + stride - 1) / stride;
  const int64_t span = (k - 1) * dilation + 1;  // taps of the dilated window
  return floor_div(in - span, stride) + 1;
}

PadPair same_padding(int64_t in, int64_t k, int64_t stride, int64_t dilation) {
  const int64_t out = window_output_size(Padding::kSame, in, k, stride, dilation);
  const int64_t total = std::max<int64_t>((out - 1) * stride + (k - 1) * dilation + 1 - in, 0);
  return PadPair{total / 2, total - total / 2};
}

PadPair window_padding(Padding padding, int64_t in, int64_t k, int64_t stride, int64_t dilation,
                       PadPair given) {
  switch (padding) {
    case Padding::kSame:
      return same_padding(in, k, stride, dilation);
    case Padding::kExplicit:
      return given;
    case Padding::kValid:
      break;
  }
  return PadPair{};
}

int64_t padded_output_size(int64_t in, PadPair pads, int64_t k, int64_t stride, int64_t dilation) {
  const int64_t span = (k - 1) * dilation + 1;
  return floor_div(in + pads.before + pads.after - span, stride) + 1;
}

Broadcast broadcast_shapes(const Dims& a, const Dims& b) {
  Broadcast r;
  const size_t rank = std::max(a.size(), b.size());
  r.dims.assign(rank, 1);
  // Walk from the last dim; i counts from the end.
  for (size_t i = 0; i < rank; ++i) {
    const bool has_a = i < a.size(), has_b = i < b.size();
    const int64_t da = has_a ? a[a.size() - 1 - i] : 1;
    const int64_t db = has_b ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) {
      Broadcast bad;
      bad.conflict_a = static_cast<int>(a.size() - 1 - i);
      bad.conflict_b = static_cast<int>(b.size() - 1 - i);
      return bad;
    }
    r.dims[rank - 1 - i] = da == 1 ? db : da;
  }
  return r;
}

std::optional<int> normalize_axis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

int64_t num_elements(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string format_dims(const Dims& dims) { return fmt::format("({})", fmt::join(dims, ",")); }

namespace {
struct DtypeName {
  dlrt_dtype dtype;
  const char* name;
};
constexpr DtypeName kDtypeNames[] = {
    {DLRT_F32, "f32"}, {DLRT_F16, "f16"}, {DLRT_BF16, "bf16"},
    {DLRT_F64, "f64"}, {DLRT_I32, "i32"}, {DLRT_I64, "i64"},
    {DLRT_U8, "u8"},   {DLRT_I8, "i8"},   {DLRT_BOOL, "bool"},
    {DLRT_U16, "u16"}, {DLRT_U32, "u32"}, {DLRT_U64, "u64"},
    {DLRT_I16, "i16"},
};
}  // namespace

std::string dtype_name(dlrt_dtype dtype) {
  for (const auto& d : kDtypeNames)
    if (d.dtype == dtype) return d.name;
  return fmt::format("dtype({})", static_cast<int>(dtype));
}

std::optional<dlrt_dtype> parse_dtype(std::string_view name) {
  for (const auto& d : kDtypeNames)
    if (name == d.name) return d.dtype;
  return std::nullopt;
}

std::string format_dtypes(const std::vector<dlrt_dtype>& dtypes) {
  std::string out;
  for (dlrt_dtype d : dtypes) out += (out.empty() ? "" : "|") + dtype_name(d);
  return out;
}

// types.h's table is the one list: the values are not contiguous forever (they are appended,
// never renumbered), so no range check.
bool is_valid_dtype(int32_t dtype) { return dlrt_dtype_size(dtype) != 0; }

}  // namespace dlrt::ops
