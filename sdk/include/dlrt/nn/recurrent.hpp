// dlrt/nn/recurrent.hpp: Keras' recurrent layers LSTM and GRU, unrolled over the time axis.
//
//   nn::LSTM(units, return_sequences = false)
//   nn::GRU(units, return_sequences = false)      (Keras' TF2 default reset_after = true)
//
// Input (None, T, I) -> (None, T, H) with return_sequences, else (None, H) (the last step's
// h); H = units. The state starts at zeros for every sequence (Keras' stateful = false).
// A graph has static shapes, so the T steps are unrolled when the layer is built: T cells in
// the graph, each reading the previous one's state.
//
// LSTM (gate order i, f, g (the cell candidate), o, as Keras' LSTMCell and PyTorch's nn.LSTM):
//   zx = x W + b for all B*T rows at once (one matmul_bias_act), cut into T (B,4H) steps;
//   per step the op lstm_cell (docs/ops.md): z = zx_t + h U, i = sigmoid(z_i),
//   f = sigmoid(z_f), g = tanh(z_g), o = sigmoid(z_o), c = f*c + i*g, h = o*tanh(c).
//   Parameters (Keras' names, shapes, initializers): kernel W (I,4H) glorot_uniform,
//   recurrent_kernel U (H,4H) orthogonal, bias (4H) zeros with the forget block at 1
//   (unit_forget_bias).
// GRU (gate order z (update), r (reset), h (candidate), as Keras' GRUCell; reset_after):
//   zx = x W + b_in for all rows at once; per step, from ordinary ops (matmul_bias_act,
//   split, add, mul, sub, sigmoid, tanh): rec = h U + b_rec (B,3H),
//   z = sigmoid(zx_z + rec_z), r = sigmoid(zx_r + rec_r), hh = tanh(zx_h + r * rec_h),
//   h = z*h + (1-z)*hh (built as hh + z*(h - hh)).
//   Parameters: kernel W (I,3H) glorot_uniform, recurrent_kernel U (H,3H) orthogonal,
//   bias (2,3H) zeros: row 0 the input bias b_in, row 1 the recurrent bias b_rec.
// Not supported (Keras options left at their defaults): activation/recurrent_activation other
// than tanh/sigmoid, dropout, go_backwards, stateful, masking, return_state.
#ifndef DLRT_NN_RECURRENT_HPP_
#define DLRT_NN_RECURRENT_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/initializers.hpp"
#include "dlrt/nn/layers.hpp"

namespace dlrt::nn {
namespace detail {

// What LSTM and GRU share: the input check, the all-steps input projection and the cut into
// steps, the zero state, and the output (every step's h, or the last).
class Recurrent : public Layer {
 public:
  int64_t units() const { return units_; }
  bool return_sequences() const { return return_sequences_; }

  Shape output_shape(const Shape& in) const override;

 protected:
  Recurrent(const char* who, int64_t units, bool return_sequences);

  // (T, I) with T, I >= 1 (Input refuses dims < 1 already).
  void check_input(const Shape& in) const;

  // x (B,T,I) -> T values zx_t (B, G*H) = x_t W + bias: one matmul over the B*T rows.
  std::vector<Value> project_steps(CallContext& c, Value x, Value kernel, Value bias,
                                   int64_t gates) const;

  Value zeros(CallContext& c, int64_t b) const;

  // hs: every step's h (B,H) -> (B,T,H) (the concat takes the layer's node name), or the
  // last one (B,H).
  Value output(CallContext& c, const std::vector<Value>& hs) const;

  int64_t units_;
  bool return_sequences_;
};

}  // namespace detail

class LSTM : public detail::Recurrent {
 public:
  explicit LSTM(int64_t units, bool return_sequences = false)
      : Recurrent("LSTM", units, return_sequences) {}
  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;

  std::vector<ParamSpec> params(const Shape& in) const override;

  // x (B,T,I); v = kernel, recurrent_kernel, bias.
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override;
};

class GRU : public detail::Recurrent {
 public:
  explicit GRU(int64_t units, bool return_sequences = false)
      : Recurrent("GRU", units, return_sequences) {}
  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;

  std::vector<ParamSpec> params(const Shape& in) const override;

  // x (B,T,I); v = kernel, recurrent_kernel, bias (2,3H).
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_RECURRENT_HPP_
