// core/ops/infer_rnn.cc: the recurrent cell op lstm_cell and its fused backward lstm_cell_grad,
// in the "rnn" family (nn::LSTM, sdk/include/dlrt/nn/recurrent.hpp, runs one per time step).
//
// One LSTM step (Hochreiter & Schmidhuber 1997; the gate order i, f, g, o of Keras' LSTMCell
// and PyTorch's nn.LSTM). The input projection x_t W + b of every step is one big matmul the
// layer does before the loop, so the cell takes it ready-made:
//   zx (B, 4H) = x_t W + b,  h (B, H), c (B, H) the previous state,  U (H, 4H) the recurrent
//   kernel;
//   z = zx + h U, split along the last axis into four (B, H) blocks z_i, z_f, z_g, z_o;
//   i = sigmoid(z_i), f = sigmoid(z_f), g = tanh(z_g), o = sigmoid(z_o);
//   c' = f*c + i*g,  h' = o*tanh(c').
// Outputs h' (B, H), c' (B, H) and act (B, 4H) = [i, f, g, o], the gate activations the
// backward needs (saved as layer_norm saves its statistics; no gradient flows through act).
//
// lstm_cell_grad (dh', dc', c, c', act) -> dz (B, 4H), dc (B, H):
//   t = tanh(c'),  dc'' = dc' + dh' * o * (1 - t^2)   (the total gradient at c'),
//   dz_i = dc''*g * i(1-i),  dz_f = dc''*c * f(1-f),  dz_g = dc''*i * (1-g^2),
//   dz_o = dh'*t * o(1-o),   dc = dc''*f.
// The gradient rule (core/autodiff/rules_nn.cc) composes the rest with matmuls:
// dzx = dz, dh = dz U^T, dU = h^T dz.
#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in;
using detail::in_const;
using detail::out;

// Input `i` must be rank 2 with dims (b, cols); `what` says what it is.
Status expect_matrix(InferContext& ctx, int i, int64_t rows, int64_t cols, const char* what) {
  if (ctx.dims(i) != Dims{rows, cols})
    return ctx.error("{} has dims {}, expected ({},{}): {}", ctx.label(i),
                     format_dims(ctx.dims(i)), rows, cols, what);
  return Status();
}

// zx (B, 4H), h (B, H), c (B, H), U (H, 4H) -> h' (B, H), c' (B, H), act (B, 4H)
Status infer_lstm_cell(InferContext& ctx) {
  if (ctx.rank(1) != 2)
    return ctx.error("{} has dims {}, expected (B,H): the previous hidden state", ctx.label(1),
                     format_dims(ctx.dims(1)));
  const int64_t b = ctx.dims(1)[0], h = ctx.dims(1)[1];
  DLRT_OPS_RETURN_IF_ERROR(expect_matrix(ctx, 0, b, 4 * h,
                                         "x_t W + b, four gate blocks (i, f, g, o) of H = h's "
                                         "last dim"));
  DLRT_OPS_RETURN_IF_ERROR(expect_matrix(ctx, 2, b, h, "the previous cell state, h's dims"));
  DLRT_OPS_RETURN_IF_ERROR(expect_matrix(ctx, 3, h, 4 * h, "the recurrent kernel (H,4H)"));
  const auto t = ctx.input(0).dtype;
  ctx.add_output(t, {b, h});
  ctx.add_output(t, {b, h});
  ctx.add_output(t, {b, 4 * h});
  return Status();
}

// dh' (B, H), dc' (B, H), c (B, H), c' (B, H), act (B, 4H) -> dz (B, 4H), dc (B, H)
Status infer_lstm_cell_grad(InferContext& ctx) {
  if (ctx.rank(0) != 2)
    return ctx.error("{} has dims {}, expected (B,H): the gradient of h'", ctx.label(0),
                     format_dims(ctx.dims(0)));
  const int64_t b = ctx.dims(0)[0], h = ctx.dims(0)[1];
  for (int i = 1; i < 4; ++i)
    DLRT_OPS_RETURN_IF_ERROR(expect_matrix(ctx, i, b, h, "the dims of input 0 (dh)"));
  DLRT_OPS_RETURN_IF_ERROR(
      expect_matrix(ctx, 4, b, 4 * h, "lstm_cell's gate activations [i, f, g, o]"));
  const auto t = ctx.input(0).dtype;
  ctx.add_output(t, {b, 4 * h});
  ctx.add_output(t, {b, h});
  return Status();
}

}  // namespace

std::vector<OpDef> rnn_ops() {
  const DtypeSet& F = kFloatTypes;
  return {
      OpDef{"lstm_cell",
            "rnn",
            "one LSTM step: z = zx + h U, gates i, f, g, o; c' = f*c + i*g, h' = o*tanh(c')",
            {in("zx", F, "(B,4H)"), in("h", F, "(B,H)"), in("c", F, "(B,H)"),
             in("U", F, "(H,4H)")},
            {out("h_next", "(B,H)"), out("c_next", "(B,H)"), out("act", "(B,4H)")},
            {},
            infer_lstm_cell,
            {}}
          .sampled(samples::lstm_cell(false))
          .tol(kGemmTol),
      OpDef{"lstm_cell_grad",
            "rnn",
            "dz (B,4H) and dc (B,H) of lstm_cell from dh', dc' and the saved c, c', act",
            {in_const("dh_next", F, "(B,H)"), in_const("dc_next", F, "(B,H)"),
             in_const("c", F, "(B,H)"), in_const("c_next", F, "(B,H)"),
             in_const("act", F, "(B,4H)")},
            {out("dz", "(B,4H)"), out("dc", "(B,H)")},
            {},
            infer_lstm_cell_grad,
            {}}
          .sampled(samples::lstm_cell(true))
          .gradient_free("it is a backward op, and dlrt differentiates to first order only")
          .tol(kElementwiseTol),
  };
}

}  // namespace dlrt::ops
