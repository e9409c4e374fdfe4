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

  Shape output_shape(const Shape& in) const override {
    check_input(in);
    if (return_sequences_) return {in[0], units_};
    return {units_};
  }

 protected:
  Recurrent(const char* who, int64_t units, bool return_sequences)
      : units_(units), return_sequences_(return_sequences) {
    if (units < 1)
      throw Error(DLRT_INVALID_ARGUMENT,
                  std::string(who) + ": units must be >= 1, got " + std::to_string(units));
  }

  // (T, I) with T, I >= 1 (Input refuses dims < 1 already).
  void check_input(const Shape& in) const {
    if (in.size() != 2)
      throw bad_input(in, "(None, T, features): a batch of sequences of feature vectors");
  }

  // x (B,T,I) -> T values zx_t (B, G*H) = x_t W + bias: one matmul over the B*T rows.
  std::vector<Value> project_steps(CallContext& c, Value x, Value kernel, Value bias,
                                   int64_t gates) const {
    const std::vector<int64_t> d = x.dims();
    const int64_t b = d[0], t = d[1], width = gates * units_;
    Graph& g = c.graph;
    Value rows = g.op1("reshape", {x}, {{"shape", std::vector<int64_t>{b * t, d[2]}}});
    Value z = g.op1("matmul_bias_act", {rows, kernel, bias}, {{"activation", "none"}});
    z = g.op1("reshape", {z}, {{"shape", std::vector<int64_t>{b, t, width}}});
    std::vector<Value> steps =
        t == 1 ? std::vector<Value>{z}
               : g.op_outputs("split", {z}, {{"axis", int64_t{1}}, {"num", t}}, size_t(t));
    for (Value& s : steps) s = g.op1("reshape", {s}, {{"shape", std::vector<int64_t>{b, width}}});
    return steps;
  }

  Value zeros(CallContext& c, int64_t b) const {
    return c.graph.constant<float>("", {b, units_}, std::vector<float>(size_t(b * units_), 0.f));
  }

  // hs: every step's h (B,H) -> (B,T,H) (the concat takes the layer's node name), or the
  // last one (B,H).
  Value output(CallContext& c, const std::vector<Value>& hs) const {
    if (!return_sequences_) return hs.back();
    Graph& g = c.graph;
    const int64_t b = hs.back().dims()[0];
    const OpAttrs to_step = {{"shape", std::vector<int64_t>{b, 1, units_}}};
    if (hs.size() == 1) return g.op1("reshape", {hs[0]}, to_step, c.node(name_));
    std::vector<Value> parts;
    for (const Value& h : hs) parts.push_back(g.op1("reshape", {h}, to_step));
    return g.op1("concat", parts, {{"axis", int64_t{1}}}, c.node(name_));
  }

  int64_t units_;
  bool return_sequences_;
};

}  // namespace detail

class LSTM : public detail::Recurrent {
 public:
  explicit LSTM(int64_t units, bool return_sequences = false)
      : Recurrent("LSTM", units, return_sequences) {}
  std::shared_ptr<Layer> clone() const override { return std::make_shared<LSTM>(*this); }
  std::string type() const override { return "LSTM"; }
  std::string base_name() const override { return "lstm"; }

  std::vector<ParamSpec> params(const Shape& in) const override {
    check_input(in);
    const int64_t h = units_;
    return {{"kernel", {in[1], 4 * h}, Initializer::glorot_uniform(), true},
            {"recurrent_kernel", {h, 4 * h}, Initializer::orthogonal(), true},
            {"bias", {4 * h}, Initializer::lstm_unit_forget_bias(), true}};
  }

  // x (B,T,I); v = kernel, recurrent_kernel, bias.
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override {
    const std::vector<Value> zx = project_steps(c, x, v[0], v[2], 4);
    Value h = zeros(c, x.dims()[0]), cs = h;
    std::vector<Value> hs;
    for (const Value& z : zx) {
      const std::vector<Value> o = c.graph.op("lstm_cell", {z, h, cs, v[1]});
      h = o[0];
      cs = o[1];
      hs.push_back(h);
    }
    return output(c, hs);
  }
};

class GRU : public detail::Recurrent {
 public:
  explicit GRU(int64_t units, bool return_sequences = false)
      : Recurrent("GRU", units, return_sequences) {}
  std::shared_ptr<Layer> clone() const override { return std::make_shared<GRU>(*this); }
  std::string type() const override { return "GRU"; }
  std::string base_name() const override { return "gru"; }

  std::vector<ParamSpec> params(const Shape& in) const override {
    check_input(in);
    const int64_t h = units_;
    return {{"kernel", {in[1], 3 * h}, Initializer::glorot_uniform(), true},
            {"recurrent_kernel", {h, 3 * h}, Initializer::orthogonal(), true},
            {"bias", {2, 3 * h}, Initializer::zeros(), true}};
  }

  // x (B,T,I); v = kernel, recurrent_kernel, bias (2,3H).
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override {
    Graph& g = c.graph;
    const int64_t h3 = 3 * units_;
    std::vector<Value> biases = g.op("split", {v[2]}, {{"axis", int64_t{0}}, {"num", int64_t{2}}});
    for (Value& b : biases) b = g.op1("reshape", {b}, {{"shape", std::vector<int64_t>{h3}}});
    const std::vector<Value> zx = project_steps(c, x, v[0], biases[0], 3);
    Value h = zeros(c, x.dims()[0]);
    std::vector<Value> hs;
    const OpAttrs thirds = {{"axis", int64_t{1}}, {"num", int64_t{3}}};
    for (const Value& z : zx) {
      Value rec = g.op1("matmul_bias_act", {h, v[1], biases[1]}, {{"activation", "none"}});
      const std::vector<Value> xp = g.op("split", {z}, thirds), rp = g.op("split", {rec}, thirds);
      Value zg = g.op1("sigmoid", {g.op1("add", {xp[0], rp[0]})});
      Value rg = g.op1("sigmoid", {g.op1("add", {xp[1], rp[1]})});
      Value hh = g.op1("tanh", {g.op1("add", {xp[2], g.op1("mul", {rg, rp[2]})})});
      h = g.op1("add", {hh, g.op1("mul", {zg, g.op1("sub", {h, hh})})});
      hs.push_back(h);
    }
    return output(c, hs);
  }
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_RECURRENT_HPP_
