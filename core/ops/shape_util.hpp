// core/ops/shape_util.hpp: the small shape rules every op family shares.
//
//  - SAME/VALID output sizes and SAME's padding, with TensorFlow's formulas (docs/ops.md);
//  - NumPy broadcasting of two shapes;
//  - axis normalisation (-rank..rank-1 -> 0..rank-1);
//  - printing dims and dtypes the way every error message of the registry shows them:
//    dims as "(3,5)" (a scalar is "()"), dtypes as "f32".
// Pure functions on plain values; no op knowledge lives here.
#pragma once

#include <dlrt/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlrt::ops {

using Dims = std::vector<int64_t>;

// VALID and SAME as TensorFlow; EXPLICIT: the op's "pads" attribute gives the cells before
// and after on each spatial axis (ONNX's pads, with auto_pad NOTSET).
enum class Padding { kValid, kSame, kExplicit };

// "VALID" / "SAME" / "EXPLICIT" (exact spelling); nullopt otherwise.
std::optional<Padding> parse_padding(std::string_view text);

// Output length of a window of `k` taps, `dilation` apart, moved by `stride` over `in` cells:
//   SAME:  ceil(in / stride)
//   VALID: floor((in - (k-1)*dilation - 1) / stride) + 1, which is <= 0 when the dilated
//          window is longer than the input (the caller reports that).
// Preconditions: in >= 1, k >= 1, stride >= 1, dilation >= 1; padding is VALID or SAME
// (EXPLICIT: padded_output_size).
int64_t window_output_size(Padding padding, int64_t in, int64_t k, int64_t stride,
                           int64_t dilation = 1);

// SAME's padding: total = max((out-1)*stride + (k-1)*dilation + 1 - in, 0),
// before = total / 2, after = total - before (the extra cell goes after, as TF).
struct PadPair {
  int64_t before = 0;
  int64_t after = 0;
};
PadPair same_padding(int64_t in, int64_t k, int64_t stride, int64_t dilation = 1);

// The padding a window op actually applies on one axis: none for VALID, SAME's rule, or
// `given` for EXPLICIT. The core sends these to plugins as the "pads" attribute, so no
// backend re-derives SAME (docs/ops.md, Conventions).
PadPair window_padding(Padding padding, int64_t in, int64_t k, int64_t stride, int64_t dilation,
                       PadPair given);
// Output length over `in` cells padded by `pads`: floor((in + before + after - span) /
// stride) + 1, <= 0 when the window does not fit (the caller reports that).
int64_t padded_output_size(int64_t in, PadPair pads, int64_t k, int64_t stride,
                           int64_t dilation = 1);

// NumPy broadcasting: align trailing dims; equal dims stay, a 1 stretches to the other.
// On a conflict `dims` is empty and conflict_a/conflict_b name the clashing axis of a and b.
struct Broadcast {
  Dims dims;
  int conflict_a = -1;
  int conflict_b = -1;
  bool ok() const { return conflict_a < 0; }
};
Broadcast broadcast_shapes(const Dims& a, const Dims& b);

// Maps axis in [-rank, rank) to [0, rank); nullopt when out of range.
std::optional<int> normalize_axis(int64_t axis, int rank);

// Product of the dims (1 for a scalar).
int64_t num_elements(const Dims& dims);

std::string format_dims(const Dims& dims);  // "(3,5)", "()"
std::string dtype_name(dlrt_dtype dtype);   // "f32", ... ; "dtype(42)" when unknown
std::optional<dlrt_dtype> parse_dtype(std::string_view name);      // inverse of dtype_name
std::string format_dtypes(const std::vector<dlrt_dtype>& dtypes);  // "f32|f16|bf16"
bool is_valid_dtype(int32_t dtype);  // one of the dlrt_dtype values but INVALID

}  // namespace dlrt::ops
