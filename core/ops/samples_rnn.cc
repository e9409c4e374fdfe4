// core/ops/samples_rnn.cc: samples of lstm_cell and lstm_cell_grad (infer_rnn.cc): batch 1
// and several, H = 1, H not a multiple of 8, a wide H (4H = 512 columns, where the GEMM and
// the gate loop split across threads), and B*H large enough for a multi-block gate kernel.
// The cell takes the input projection ready-made, so the input width I shows only as the
// range of zx (a wider input sums more terms: larger |zx|, saturated gates).
#include "samples.hpp"

namespace dlrt::ops::samples {
namespace {

struct CellShape {
  int64_t b, h;
  double zx;  // |zx| bound: about the spread of x_t W + b for the input width noted
  const char* note;
};
const CellShape kCellShapes[] = {
    {1, 1, 2, "B = 1, H = 1"},
    {2, 3, 2, "small, I = 5"},
    {4, 13, 4, "H not a multiple of 8, I = 32: some gates saturate"},
    {3, 128, 2, "4H = 512 columns"},
    {64, 40, 6, "B*H = 2560, I = 256: saturated gates"},
    {7, 8, 0.5, "I = 1: gates near their midpoints"},
};

}  // namespace

SampleFn lstm_cell(bool grad) {
  return [grad](const OpDef&) {
    std::vector<Sample> out;
    for (const CellShape& s : kCellShapes) {
      Sample k;
      k.note = s.note;
      const Dims bh{s.b, s.h}, b4h{s.b, 4 * s.h};
      if (!grad) {
        k.inputs = {f32_in("zx", b4h, uniform(-s.zx, s.zx)), f32_in("h", bh, uniform(-1, 1)),
                    f32_in("c", bh, uniform(-2, 2)),
                    f32_in("U", {s.h, 4 * s.h}, uniform(-0.5, 0.5))};
      } else {
        // act holds sigmoids (i, f, o) in (0, 1) and tanh (g) in (-1, 1): (0.01, 0.99) fits
        // both; c' is any state.
        k.inputs = {f32_in("dh_next", bh, uniform(-1, 1)), f32_in("dc_next", bh, uniform(-1, 1)),
                    f32_in("c", bh, uniform(-2, 2)), f32_in("c_next", bh, uniform(-2, 2)),
                    f32_in("act", b4h, uniform(0.01, 0.99))};
      }
      out.push_back(std::move(k));
    }
    return out;
  };
}

}  // namespace dlrt::ops::samples
