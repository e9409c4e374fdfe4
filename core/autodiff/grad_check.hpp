// grad_check.hpp (test-only): checks gradients() against central finite differences.
//
//   GradCheck c;
//   ValueRef x = c.input("x", {DLRT_F32, {2, 3}});        // random values in [-1, 1)
//   ValueRef y = c.op("tanh", {x});
//   c.check(c.project({y}));   // loss = sum(y * r), r random: every element of y matters
//
// check() builds the gradients of the loss with respect to every input() and evaluates them
// and the loss with HostEval (f64, reference kernels); each element of each input is moved
// by +-eps and the slope of the loss compared with the gradient's element:
// |analytic - numeric| <= tol * max(1, |numeric|).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/autodiff.hpp"
#include "autodiff/host_eval.hpp"
#include "context.hpp"
#include "status.hpp"

namespace dlrt::core::testing {

// A context that loads no plugin: graphs need one, the host evaluator does not.
inline std::unique_ptr<Context> make_bare_context() {
  dlrt_context_options o;
  dlrt_context_options_init(&o);
  o.search_default_paths = 0;
  o.plugin_options = "";
  o.visible_devices = "";
  return std::make_unique<Context>(&o, [](const char*) -> const char* { return nullptr; });
}

// The code and message of the core::Error `fn` throws ({DLRT_OK, ""} when none).
template <typename Fn>
std::pair<dlrt_code, std::string> error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return {e.code(), e.message()};
  }
  return {DLRT_OK, ""};
}

enum class Values {
  kSigned,        // uniform in [-1, 1)
  kPositive,      // uniform in [0.5, 1.5): log, sqrt, divisors
  kAwayFromZero,  // |v| in [0.1, 1): relu's kink stays further than eps
  kInsideUnit,    // uniform in [-0.8, 0.8): asin, acos, atanh (their slopes blow up at +-1)
  kAboveOne,      // uniform in [1.5, 2.5): acosh
  kOffGrid,       // |v| in [0.1, 0.4): no integer or half within eps (ceil, floor, round, sign)
};

class GradCheck {
 public:
  GradCheck() : ctx_(make_bare_context()), g_(*ctx_) {}

  Graph& graph() { return g_; }

  // A placeholder that check() differentiates with respect to.
  ValueRef input(const std::string& name, const ops::TensorType& type,
                 Values kind = Values::kSigned) {
    ValueRef v = g_.add_placeholder(name, type);
    std::vector<double> vals(size_t(type.num_elements()));
    for (double& x : vals) {
      x = uniform(-1.0, 1.0);
      if (kind == Values::kPositive) x = 1.0 + 0.5 * x;
      if (kind == Values::kAwayFromZero) x = (x < 0 ? -0.1 : 0.1) + 0.9 * x;
      if (kind == Values::kInsideUnit) x = 0.8 * x;
      if (kind == Values::kAboveOne) x = 2.0 + 0.5 * x;
      if (kind == Values::kOffGrid) x = (x < 0 ? -0.1 : 0.1) + 0.3 * x;
    }
    inputs_.push_back({v, std::move(vals)});
    return v;
  }
  // A trainable variable, differentiated like input() (HostEval's feed stands in for its
  // initial value).
  ValueRef variable(const std::string& name, const ops::TensorType& type) {
    ValueRef v =
        g_.add_variable(name, type, "random_uniform", {{"minval", -0.5}, {"maxval", 0.5}}, true);
    std::vector<double> vals(size_t(type.num_elements()));
    for (double& x : vals) x = uniform(-0.5, 0.5);
    inputs_.push_back({v, std::move(vals)});
    return v;
  }
  // A placeholder fed with random values, not differentiated (input data).
  ValueRef data(const std::string& name, const ops::TensorType& type) {
    ValueRef v = g_.add_placeholder(name, type);
    std::vector<double> vals(size_t(type.num_elements()));
    for (double& x : vals) x = uniform(-1.0, 1.0);
    data_.push_back({v, std::move(vals)});
    return v;
  }
  // A placeholder fed with integers (labels, indices), not differentiated.
  ValueRef index_input(const std::string& name, const ops::TensorType& type,
                       std::vector<int64_t> v) {
    ValueRef p = g_.add_placeholder(name, type);
    index_inputs_.push_back({p, std::move(v)});
    return p;
  }
  std::vector<ValueRef> op_all(const std::string& op, const std::vector<ValueRef>& in,
                               const ops::AttrMap& attrs = {}) {
    return g_.add_op(op, "", in, attrs);
  }
  ValueRef op(const std::string& op, const std::vector<ValueRef>& in,
              const ops::AttrMap& attrs = {}) {
    return op_all(op, in, attrs).at(0);
  }
  // loss = sum over the given values of reduce_sum(v * r_v), r_v a random constant: a random
  // projection, so that every element's gradient is tested (a plain sum would let a rule
  // that mixes elements up pass).
  ValueRef project(const std::vector<ValueRef>& values) {
    ValueRef loss{};
    bool first = true;
    for (ValueRef v : values) {
      const ops::TensorType t = g_.type_of(v);
      std::vector<float> r(size_t(t.num_elements()));
      for (float& x : r) x = float(uniform(-1.0, 1.0));
      std::vector<uint8_t> bytes(r.size() * sizeof(float));
      std::memcpy(bytes.data(), r.data(), bytes.size());
      ValueRef w = g_.add_constant("", {DLRT_F32, t.dims}, std::move(bytes));
      ValueRef term = op("reduce_sum", {op("mul", {v, w})});
      loss = first ? term : op("add", {loss, term});
      first = false;
    }
    return loss;
  }

  // Gradients of `loss` with respect to every input(), against central differences.
  void check(ValueRef loss, double tol = 1e-6, double eps = 1e-6) {
    std::vector<ValueRef> wrt;
    for (auto& in : inputs_) wrt.push_back(in.value);
    std::vector<ValueRef> grads = gradients(g_, loss, wrt);
    ASSERT_EQ(grads.size(), wrt.size());
    HostEval ev(g_);
    for (auto& in : inputs_) ev.feed(in.value, in.values);
    for (auto& in : data_) ev.feed(in.value, in.values);
    for (auto& in : index_inputs_) ev.feed_index(in.value, in.values);
    for (size_t i = 0; i < inputs_.size(); ++i) {
      Input& in = inputs_[i];
      ASSERT_EQ(g_.type_of(grads[i]), g_.type_of(in.value)) << g_.node(in.value.node).name;
      ev.feed(in.value, in.values);
      const std::vector<double> analytic = ev.eval(grads[i]);
      for (size_t j = 0; j < in.values.size(); ++j) {
        const double saved = in.values[j];
        in.values[j] = saved + eps;
        ev.feed(in.value, in.values);
        const double up = ev.eval_scalar(loss);
        in.values[j] = saved - eps;
        ev.feed(in.value, in.values);
        const double down = ev.eval_scalar(loss);
        in.values[j] = saved;
        const double numeric = (up - down) / (2 * eps);
        EXPECT_NEAR(analytic[j], numeric, tol * std::max(1.0, std::fabs(numeric)))
            << "d loss / d " << g_.node(in.value.node).name << "[" << j << "]";
      }
      ev.feed(in.value, in.values);
    }
  }

 private:
  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng_);
  }

  struct Input {
    ValueRef value;
    std::vector<double> values;
  };
  struct IndexInput {
    ValueRef value;
    std::vector<int64_t> values;
  };
  std::mt19937_64 rng_{20240607};
  std::unique_ptr<Context> ctx_;
  Graph g_;
  std::vector<Input> inputs_, data_;
  std::vector<IndexInput> index_inputs_;
};

}  // namespace dlrt::core::testing
