// norm_layout.hpp: where the channels of a batch-normalization operand lie (docs/ops.md,
// batch_norm*). x is rank 4 NHWC (N,H,W,C) or NCHW (N,C,H,W), or rank 2 (N,C) whatever
// data_format says. Every layout is seen as (outer, C, inner), element (o, c, i) at
// (o*C + c)*inner + i:
//   NHWC (N,H,W,C): outer N*H*W, inner 1;   NCHW (N,C,H,W): outer N, inner H*W;
//   (N,C):          outer N,     inner 1.
// Each channel's statistics are over outer*inner values (`count`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "op_view.hpp"

namespace dlrt::plugin {

struct NormLayout {
  int64_t outer = 1, c = 1, inner = 1;
  bool nchw = false;   // the image's data_format (false for rank 2)
  bool rank2 = false;  // x is (N,C)

  int64_t count() const { return outer * inner; }
  int64_t channel_of(int64_t i) const { return (i / inner) % c; }
  // As an image: (N,H,W,C) logical dims; rank 2 is (N,1,1,C).
  ImageShape image() const {
    if (rank2) return image_shape(outer, 1, 1, c, false);
    if (nchw) return image_shape(outer, 1, inner, c, true);  // H*W folded into W
    return image_shape(1, 1, outer, c, false);               // N*H*W folded into W
  }
};

// From x's dims and the op's data_format; INVALID_ARGUMENT for another rank.
inline NormLayout norm_layout(const std::vector<int64_t>& x, const std::string& data_format,
                              const std::string& op) {
  const bool nchw = is_nchw(data_format, op);
  NormLayout l;
  if (x.size() == 2) {
    l.outer = x[0], l.c = x[1], l.rank2 = true;
    return l;
  }
  if (x.size() != 4)
    fail(DLRT_INVALID_ARGUMENT,
         op + ": x has dims " + dims_string(x) + ", expected rank 4 (an image) or rank 2 (N,C)");
  l.nchw = nchw;
  if (nchw) l.outer = x[0], l.c = x[1], l.inner = x[2] * x[3];
  else l.outer = x[0] * x[1] * x[2], l.c = x[3];
  return l;
}

}  // namespace dlrt::plugin
