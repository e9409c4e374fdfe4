// recurrent.cc: LSTM and GRU, unrolled over time (dlrt/nn/recurrent.hpp).
#include "dlrt/nn/recurrent.hpp"

namespace dlrt::nn {

Shape detail::Recurrent::output_shape(const Shape& in) const {
  check_input(in);
  if (return_sequences_) return {in[0], units_};
  return {units_};
}

detail::Recurrent::Recurrent(const char* who, int64_t units, bool return_sequences)
    : units_(units), return_sequences_(return_sequences) {
  if (units < 1)
    throw Error(DLRT_INVALID_ARGUMENT,
                std::string(who) + ": units must be >= 1, got " + std::to_string(units));
}

void detail::Recurrent::check_input(const Shape& in) const {
  if (in.size() != 2)
    throw bad_input(in, "(None, T, features): a batch of sequences of feature vectors");
}

std::vector<Value> detail::Recurrent::project_steps(CallContext& c, Value x, Value kernel,
                                                    Value bias, int64_t gates) const {
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

Value detail::Recurrent::zeros(CallContext& c, int64_t b) const {
  return c.graph.constant<float>("", {b, units_}, std::vector<float>(size_t(b * units_), 0.f));
}

Value detail::Recurrent::output(CallContext& c, const std::vector<Value>& hs) const {
  if (!return_sequences_) return hs.back();
  Graph& g = c.graph;
  const int64_t b = hs.back().dims()[0];
  const OpAttrs to_step = {{"shape", std::vector<int64_t>{b, 1, units_}}};
  if (hs.size() == 1) return g.op1("reshape", {hs[0]}, to_step, c.node(name_));
  std::vector<Value> parts;
  for (const Value& h : hs) parts.push_back(g.op1("reshape", {h}, to_step));
  return g.op1("concat", parts, {{"axis", int64_t{1}}}, c.node(name_));
}

std::shared_ptr<Layer> LSTM::clone() const { return std::make_shared<LSTM>(*this); }

std::string LSTM::type() const { return "LSTM"; }

std::string LSTM::base_name() const { return "lstm"; }

std::vector<ParamSpec> LSTM::params(const Shape& in) const {
  check_input(in);
  const int64_t h = units_;
  return {{"kernel", {in[1], 4 * h}, Initializer::glorot_uniform(), true},
          {"recurrent_kernel", {h, 4 * h}, Initializer::orthogonal(), true},
          {"bias", {4 * h}, Initializer::lstm_unit_forget_bias(), true}};
}

Value LSTM::call(CallContext& c, Value x, const std::vector<Value>& v) const {
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

std::shared_ptr<Layer> GRU::clone() const { return std::make_shared<GRU>(*this); }

std::string GRU::type() const { return "GRU"; }

std::string GRU::base_name() const { return "gru"; }

std::vector<ParamSpec> GRU::params(const Shape& in) const {
  check_input(in);
  const int64_t h = units_;
  return {{"kernel", {in[1], 3 * h}, Initializer::glorot_uniform(), true},
          {"recurrent_kernel", {h, 3 * h}, Initializer::orthogonal(), true},
          {"bias", {2, 3 * h}, Initializer::zeros(), true}};
}

Value GRU::call(CallContext& c, Value x, const std::vector<Value>& v) const {
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

}  // namespace dlrt::nn
