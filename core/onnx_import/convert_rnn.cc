// convert_rnn.cc: ONNX's RNN, GRU and LSTM, unrolled over the sequence into dlrt's matmul,
// slice, elementwise and concat ops. Shapes are static per specialisation, so the sequence
// length is known at import; every device that runs those ops runs the recurrences.
//
// Shapes (layout 0; layout 1 swaps the first two dims of X, Y, and the batch/direction dims of
// initial_h/c, Y_h, Y_c):
//   X (S,B,I)   W (D,G*H,I)   R (D,G*H,H)   B (D,2*G*H) = [Wb | Rb]   initial_h/c (D,B,H)
//   Y (S,D,B,H)   Y_h, Y_c (D,B,H)
// with D = 2 for direction "bidirectional" (else 1) and G gates: 1 (RNN), 3 (GRU: z r h),
// 4 (LSTM: i o f c). The input projections of every step are one matmul, X (S*B,I) x W^T;
// each step adds H_{t-1} x R^T and applies the gates:
//   RNN   H = f(xw + hr + Wb + Rb)
//   GRU   z = f(..z), r = f(..r),
//         h~ = g(xw_h + (r . H_{t-1}) R_h^T + Rb_h + Wb_h)       linear_before_reset = 0
//         h~ = g(xw_h + r . (H_{t-1} R_h^T + Rb_h) + Wb_h)       linear_before_reset != 0
//         H = (1 - z) . h~ + z . H_{t-1}
//   LSTM  i = f(..i + P_i . C_{t-1}), f_ = f(..f + P_f . C_{t-1}), c~ = g(..c),
//         C = f_ . C_{t-1} + i . c~, o = f(..o + P_o . C), H = o . h(C)
// `clip` bounds every gate's pre-activation to [-clip, clip]. The reverse direction walks the
// steps backwards and writes Y at the step it read.
//
// Not converted (UNIMPLEMENTED, naming it): sequence_lens with a length shorter than S (ONNX
// then zero-pads Y and takes Y_h at each sequence's own end), LSTM's input_forget, and
// activations other than the ones `activate` lists.
#include <fmt/format.h>

#include "onnx_import/node_context.hpp"

namespace dlrt::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

// Unrolled steps per direction: beyond this the graph gets too large to be worth building.
constexpr int64_t kMaxSteps = 4096;

struct Cell {
  const char* op;                         // ONNX op type, for messages
  int64_t gates;                          // G
  std::vector<std::string> default_acts;  // f, g (, h): one direction's activations
};

dlrt::Value slice(NodeContext& c, dlrt::Value v, int64_t axis, int64_t b, int64_t e) {
  return c.op("slice", {v}, {{"begin", Ints{b}}, {"end", Ints{e}}, {"axes", Ints{axis}}});
}

// One activation of ONNX's list by name; alpha/beta where it takes them.
dlrt::Value activate(NodeContext& c, const std::string& name, dlrt::Value v, float alpha,
                     float beta) {
  const dlrt_dtype d = v.dtype();
  if (name == "Sigmoid") return c.op("sigmoid", {v});
  if (name == "Tanh") return c.op("tanh", {v});
  if (name == "Relu") return c.op("relu", {v});
  if (name == "Softplus") return c.op("softplus", {v});
  if (name == "LeakyRelu") return c.op("leaky_relu", {v}, {{"alpha", double(alpha)}});
  if (name == "Elu") return c.op("elu", {v}, {{"alpha", double(alpha)}});
  if (name == "HardSigmoid") {
    dlrt::Value y = c.op("add", {c.op("mul", {v, c.scalar(d, alpha)}), c.scalar(d, beta)});
    return c.op("clip", {y}, {{"min", 0.0}, {"max", 1.0}});
  }
  if (name == "ScaledTanh")
    return c.op("mul", {c.op("tanh", {c.op("mul", {v, c.scalar(d, beta)})}), c.scalar(d, alpha)});
  if (name == "Affine")
    return c.op("add", {c.op("mul", {v, c.scalar(d, alpha)}), c.scalar(d, beta)});
  c.unsupported(
      fmt::format("activation '{}' (dlrt converts Sigmoid, Tanh, Relu, Softplus, LeakyRelu, "
                  "Elu, HardSigmoid, ScaledTanh, Affine)",
                  name));
}

void convert_recurrent(NodeContext& c, const Cell& cell) {
  const int64_t layout = c.attr_int("layout", 0);
  const std::string direction = c.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    c.invalid(fmt::format("direction '{}' (forward, reverse or bidirectional)", direction));
  const int64_t D = direction == "bidirectional" ? 2 : 1;
  if (c.rank(0) != 3 || c.rank(1) != 3 || c.rank(2) != 3) c.invalid("X, W and R must have rank 3");
  const dlrt_dtype dt = c.dtype(0);
  const Ints& xd = c.dims(0);
  const int64_t S = layout == 0 ? xd[0] : xd[1], B = layout == 0 ? xd[1] : xd[0], I = xd[2];
  const int64_t G = cell.gates;
  const int64_t H = c.attr_int("hidden_size", c.dims(2)[2]);
  if (c.dims(1) != Ints{D, G * H, I} || c.dims(2) != Ints{D, G * H, H})
    c.invalid(
        fmt::format("W/R have dims ({}) and ({}); {} with D={}, hidden {} and input {} wants "
                    "({},{},{}) and ({},{},{})",
                    fmt::join(c.dims(1), ","), fmt::join(c.dims(2), ","), cell.op, D, H, I, D,
                    G * H, I, D, G * H, H));
  if (S > kMaxSteps)
    c.unsupported(fmt::format("a sequence of {} steps (dlrt unrolls at most {})", S, kMaxSteps));
  if (c.has_input(4)) {
    for (int64_t len : c.require_host(4, "sequence_lens").as_int64s())
      if (len != S)
        c.unsupported(
            fmt::format("sequence_lens with a length of {} in a sequence of {} (dlrt runs "
                        "every sequence to its end)",
                        len, S));
  }
  if (c.attr_int("input_forget", 0) != 0) c.unsupported("LSTM input_forget");
  std::vector<std::string> acts = c.attr_strings("activations");
  if (acts.empty())
    for (int64_t d = 0; d < D; ++d)
      acts.insert(acts.end(), cell.default_acts.begin(), cell.default_acts.end());
  const size_t per_dir = cell.default_acts.size();
  if (acts.size() != per_dir * size_t(D))
    c.invalid(fmt::format("{} activations for {} direction(s); {} wants {} each", acts.size(), D,
                          cell.op, per_dir));
  const std::vector<float> alphas = c.attr_floats("activation_alpha"),
                           betas = c.attr_floats("activation_beta");
  const bool has_clip = c.has_attr("clip");
  const double clip = c.attr_float("clip", 0.f);
  const bool lbr = c.attr_int("linear_before_reset", 0) != 0;
  const bool lstm = G == 4;

  // X as (S*B, I), time-major.
  dlrt::Value x = c.value(0);
  if (layout != 0) x = c.op("transpose", {x}, {{"perm", Ints{1, 0, 2}}});
  x = c.reshape(x, {S * B, I});
  // initial state (D,B,H) time-major; layout 1 gives (B,D,H).
  auto initial = [&](size_t input, int64_t d) -> dlrt::Value {
    if (!c.has_input(input))
      return c.constant(
          HostTensor::from_doubles(dt, std::vector<double>(size_t(B * H), 0.0), {B, H}));
    dlrt::Value v = slice(c, c.value(input), layout == 0 ? 0 : 1, d, d + 1);
    return c.reshape(v, {B, H});
  };

  std::vector<std::vector<dlrt::Value>> ys(static_cast<size_t>(D));  // per direction, per step: (B,H)
  std::vector<dlrt::Value> last_h(static_cast<size_t>(D)), last_c(static_cast<size_t>(D));
  for (int64_t d = 0; d < D; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    dlrt::Value w = c.reshape(slice(c, c.value(1), 0, d, d + 1), {G * H, I});
    dlrt::Value r = c.reshape(slice(c, c.value(2), 0, d, d + 1), {G * H, H});
    dlrt::Value xw = c.op("matmul", {x, w}, {{"transpose_b", true}});  // (S*B, G*H)
    std::optional<dlrt::Value> wb, rb;
    if (c.has_input(3)) {
      dlrt::Value b = c.reshape(slice(c, c.value(3), 0, d, d + 1), {2 * G * H});
      wb = slice(c, b, 0, 0, G * H);
      rb = slice(c, b, 0, G * H, 2 * G * H);
      // GRU with linear_before_reset keeps Rb_h inside r . (...): only the z, r parts of Rb
      // join the input projection. Everything else adds both biases once.
      dlrt::Value both =
          lbr ? c.op("concat",
                     {c.op("add", {slice(c, *wb, 0, 0, 2 * H), slice(c, *rb, 0, 0, 2 * H)}),
                      slice(c, *wb, 0, 2 * H, 3 * H)},
                     {{"axis", int64_t{0}}})
              : c.op("add", {*wb, *rb});
      xw = c.op("add", {xw, both});
    }
    std::optional<dlrt::Value> peep;
    if (lstm && c.has_input(7)) peep = c.reshape(slice(c, c.value(7), 0, d, d + 1), {3 * H});
    auto act = [&](size_t k, dlrt::Value v) {
      const size_t i = size_t(d) * per_dir + k;
      if (has_clip) v = c.op("clip", {v}, {{"min", -clip}, {"max", clip}});
      return activate(c, acts[i], v, i < alphas.size() ? alphas[i] : 0.01f,
                      i < betas.size() ? betas[i] : 0.f);
    };
    auto gate = [&](dlrt::Value v, int64_t k) { return slice(c, v, 1, k * H, (k + 1) * H); };
    dlrt::Value h = initial(5, d);
    dlrt::Value cs = lstm ? initial(6, d) : dlrt::Value();
    ys[size_t(d)].resize(size_t(S));
    for (int64_t s = 0; s < S; ++s) {
      const int64_t t = reverse ? S - 1 - s : s;
      dlrt::Value xt = slice(c, xw, 0, t * B, (t + 1) * B);  // (B, G*H)
      if (G == 1) {
        h = act(0, c.op("add", {xt, c.op("matmul", {h, r}, {{"transpose_b", true}})}));
      } else if (G == 3) {
        // z and r from one matmul over R's first 2H rows; h~ from the last H.
        dlrt::Value r_zr = slice(c, r, 0, 0, 2 * H), r_h = slice(c, r, 0, 2 * H, 3 * H);
        dlrt::Value zr = c.op(
            "add", {slice(c, xt, 1, 0, 2 * H), c.op("matmul", {h, r_zr}, {{"transpose_b", true}})});
        dlrt::Value z = act(0, gate(zr, 0)), rg = act(0, gate(zr, 1));
        dlrt::Value hh;
        if (lbr) {
          dlrt::Value hr = c.op("matmul", {h, r_h}, {{"transpose_b", true}});
          if (rb) hr = c.op("add", {hr, slice(c, *rb, 0, 2 * H, 3 * H)});
          hh = c.op("mul", {rg, hr});
        } else {
          hh = c.op("matmul", {c.op("mul", {rg, h}), r_h}, {{"transpose_b", true}});
        }
        dlrt::Value cand = act(1, c.op("add", {gate(xt, 2), hh}));
        // H = (1 - z) h~ + z H_{t-1} = h~ + z (H_{t-1} - h~)
        h = c.op("add", {cand, c.op("mul", {z, c.op("sub", {h, cand})})});
      } else {
        dlrt::Value pre = c.op("add", {xt, c.op("matmul", {h, r}, {{"transpose_b", true}})});
        dlrt::Value pi = gate(pre, 0), po = gate(pre, 1), pf = gate(pre, 2), pc = gate(pre, 3);
        if (peep) {
          pi = c.op("add", {pi, c.op("mul", {slice(c, *peep, 0, 0, H), cs})});
          pf = c.op("add", {pf, c.op("mul", {slice(c, *peep, 0, 2 * H, 3 * H), cs})});
        }
        dlrt::Value ig = act(0, pi), fg = act(0, pf), cand = act(1, pc);
        cs = c.op("add", {c.op("mul", {fg, cs}), c.op("mul", {ig, cand})});
        if (peep) po = c.op("add", {po, c.op("mul", {slice(c, *peep, 0, H, 2 * H), cs})});
        h = c.op("mul", {act(0, po), act(2, cs)});
      }
      ys[size_t(d)][size_t(t)] = h;
    }
    last_h[size_t(d)] = h;
    if (lstm) last_c[size_t(d)] = cs;
  }

  // Y (S,D,B,H), or (B,S,D,H) for layout 1.
  if (c.wants_output(0)) {
    std::vector<dlrt::Value> steps;
    for (int64_t t = 0; t < S; ++t) {
      std::vector<dlrt::Value> dirs;
      for (int64_t d = 0; d < D; ++d)
        dirs.push_back(c.reshape(ys[size_t(d)][size_t(t)], {1, 1, B, H}));
      steps.push_back(D == 1 ? dirs[0] : c.op("concat", dirs, {{"axis", int64_t{1}}}));
    }
    dlrt::Value y = S == 1 ? steps[0] : c.op("concat", steps, {{"axis", int64_t{0}}});
    if (layout != 0) y = c.op("transpose", {y}, {{"perm", Ints{2, 0, 1, 3}}});
    c.set(0, y);
  }
  // Y_h / Y_c (D,B,H), or (B,D,H) for layout 1.
  auto final_state = [&](const std::vector<dlrt::Value>& per_dir_state) {
    std::vector<dlrt::Value> parts;
    for (const dlrt::Value& v : per_dir_state) parts.push_back(c.reshape(v, {1, B, H}));
    dlrt::Value y =
        D == 1 ? c.op("copy", {parts[0]}) : c.op("concat", parts, {{"axis", int64_t{0}}});
    if (layout != 0) y = c.op("transpose", {y}, {{"perm", Ints{1, 0, 2}}});
    return y;
  };
  if (c.wants_output(1)) c.set(1, final_state(last_h));
  if (lstm && c.wants_output(2)) c.set(2, final_state(last_c));
}

}  // namespace

void add_rnn_converters(ConverterTable& t) {
  t.add("RNN", "unrolled: matmul, add, the activation per step; concat", [](NodeContext& c) {
    convert_recurrent(c, {"RNN", 1, {"Tanh"}});
  });
  t.add("GRU", "unrolled: matmul, slice, sigmoid/tanh, mul, add per step; concat",
        [](NodeContext& c) {
          convert_recurrent(c, {"GRU", 3, {"Sigmoid", "Tanh"}});
        });
  t.add("LSTM", "unrolled: matmul, slice, sigmoid/tanh, mul, add per step; concat",
        [](NodeContext& c) {
          convert_recurrent(c, {"LSTM", 4, {"Sigmoid", "Tanh", "Tanh"}});
        });
}

}  // namespace dlrt::onnx_import
