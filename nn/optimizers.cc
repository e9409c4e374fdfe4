// optimizers.cc: Adam, AdamW and SGD as graph builders of updates (dlrt/nn/optimizers.hpp).
#include "dlrt/nn/optimizers.hpp"

#include <cstdio>

namespace dlrt::nn {

Optimizer::~Optimizer() = default;

Optimizer& Optimizer::set_global_clipnorm(double clipnorm) {
  if (!(clipnorm >= 0))
    throw Error(DLRT_INVALID_ARGUMENT,
                "global_clipnorm must be >= 0 (0: no clipping), got " + num(clipnorm));
  global_clipnorm_ = clipnorm;
  return *this;
}

void Optimizer::apply_all(Graph& g, const std::vector<Value>& params, std::vector<Value> grads,
                          const std::vector<std::vector<Value>>& slots, Value step,
                          Value learning_rate, Value apply_if) const {
  apply_if_ = apply_if;
  if (global_clipnorm_ > 0 && !grads.empty()) {
    // factor = c / max(norm, c): 1 while the norm is within c, else c / norm.
    Value sum;
    for (const Value& gr : grads) {
      Value sq = g.op1("reduce_sum", {g.op1("square", {gr})});
      sum = sum ? g.op1("add", {sum, sq}) : sq;
    }
    Value c = g.constant<float>("", {}, {static_cast<float>(global_clipnorm_)});
    Value factor = g.op1("div", {c, g.op1("maximum", {g.op1("sqrt", {sum}), c})});
    for (Value& gr : grads) gr = g.op1("mul", {gr, factor});
  }
  for (size_t k = 0; k < params.size(); ++k)
    apply(g, params[k], grads[k], slots[k], step, learning_rate);
  apply_if_ = Value();
}

std::string Optimizer::clip_config() const {
  return global_clipnorm_ > 0 ? ", global_clipnorm=" + num(global_clipnorm_) : "";
}

std::string Optimizer::num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void Optimizer::assign(Graph& g, Value var, Value update) const {
  g.assign(var, apply_if_ ? g.op1("where", {apply_if_, update, var}) : update);
}

Adam::Adam(LearningRate learning_rate, double beta_1, double beta_2, double epsilon)
    : Optimizer(std::move(learning_rate)), b1_(beta_1), b2_(beta_2), eps_(epsilon) {
  if (!(b1_ >= 0 && b1_ < 1) || !(b2_ >= 0 && b2_ < 1))
    throw Error(DLRT_INVALID_ARGUMENT, "Adam: beta_1 and beta_2 must be in [0, 1)");
  if (!(eps_ > 0)) throw Error(DLRT_INVALID_ARGUMENT, "Adam: epsilon must be > 0");
}

std::unique_ptr<Optimizer> Adam::clone() const { return std::make_unique<Adam>(*this); }

std::string Adam::name() const { return "adam"; }

std::string Adam::config() const {
  return "Adam(learning_rate=" + lr_.config() + ", beta_1=" + num(b1_) + ", beta_2=" + num(b2_) +
         ", epsilon=" + num(eps_) + clip_config() + ")";
}

std::vector<std::string> Adam::slot_names() const { return {"m", "v"}; }

void Adam::apply(Graph& g, Value param, Value grad, const std::vector<Value>& slots, Value step,
                 Value learning_rate) const {
  apply(g, param, grad, slots, step, learning_rate, param);
}

void Adam::apply(Graph& g, Value param, Value grad, const std::vector<Value>& slots, Value step,
                 Value learning_rate, Value from) const {
  // (param, grad, m, v, step, learning_rate) -> (param, m, v), each output over its input.
  std::vector<Value> out =
      g.op("adam_update", {from, grad, slots[0], slots[1], step, learning_rate},
           {{"beta1", b1_}, {"beta2", b2_}, {"epsilon", eps_}});
  assign(g, param, out[0]);
  assign(g, slots[0], out[1]);
  assign(g, slots[1], out[2]);
}

AdamW::AdamW(LearningRate learning_rate, double weight_decay, double beta_1, double beta_2,
             double epsilon)
    : Adam(std::move(learning_rate), beta_1, beta_2, epsilon), wd_(weight_decay) {
  if (!(wd_ >= 0)) throw Error(DLRT_INVALID_ARGUMENT, "AdamW: weight_decay must be >= 0");
}

std::unique_ptr<Optimizer> AdamW::clone() const { return std::make_unique<AdamW>(*this); }

std::string AdamW::name() const { return "adamw"; }

std::string AdamW::config() const {
  return "AdamW(learning_rate=" + lr_.config() + ", weight_decay=" + num(wd_) +
         ", beta_1=" + num(b1_) + ", beta_2=" + num(b2_) + ", epsilon=" + num(eps_) +
         clip_config() + ")";
}

void AdamW::apply(Graph& g, Value param, Value grad, const std::vector<Value>& slots, Value step,
                  Value learning_rate) const {
  // p - p * (lr * wd): the decayed weight Adam then updates (and assigns back to p).
  Value wd = g.constant<float>("", {}, {static_cast<float>(wd_)});
  Value decayed = g.op1("sub", {param, g.op1("mul", {param, g.op1("mul", {learning_rate, wd})})});
  Adam::apply(g, param, grad, slots, step, learning_rate, decayed);
}

SGD::SGD(LearningRate learning_rate, double momentum, bool nesterov)
    : Optimizer(std::move(learning_rate)), momentum_(momentum), nesterov_(nesterov) {
  if (!(momentum_ >= 0)) throw Error(DLRT_INVALID_ARGUMENT, "SGD: momentum must be >= 0");
}

std::unique_ptr<Optimizer> SGD::clone() const { return std::make_unique<SGD>(*this); }

std::string SGD::name() const { return "sgd"; }

std::string SGD::config() const {
  return "SGD(learning_rate=" + lr_.config() + ", momentum=" + num(momentum_) +
         ", nesterov=" + (nesterov_ ? "True" : "False") + clip_config() + ")";
}

std::vector<std::string> SGD::slot_names() const { return {"velocity"}; }

void SGD::apply(Graph& g, Value param, Value grad, const std::vector<Value>& slots, Value /*step*/,
                Value learning_rate) const {
  std::vector<Value> out = g.op("sgd_update", {param, grad, slots[0], learning_rate},
                                {{"momentum", momentum_}, {"nesterov", nesterov_}});
  assign(g, param, out[0]);
  assign(g, slots[0], out[1]);
}

}  // namespace dlrt::nn
