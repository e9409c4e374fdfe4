// dlrt/nn/losses.hpp: losses as graph builders of a per-sample loss (B); the model averages
// it over the real samples of a batch (model.hpp: the last partial batch is padded and masked).
//
//   SparseCategoricalCrossentropy(from_logits): y_pred (B,K), labels (B) integer classes;
//     or y_pred (B,T...,K), labels (B,T...): one class per position, averaged per sample.
//     from_logits: sparse_softmax_cross_entropy(y_pred, labels) = logsumexp - logit[label].
//     else y_pred are probabilities: the same op on log(y_pred + 1e-7) gives -log p[label]
//     (Keras clips p to [1e-7, 1-1e-7]; the op set has no clip, so it adds the epsilon).
//   MeanSquaredError: y_pred and targets (B,...) f32; mean over all but the batch dim.
//   MeanAbsoluteError: mean |y_pred - y| over all but the batch dim.
//   Huber(delta = 1): per element 0.5 d^2 where |d| <= delta, else delta (|d| - delta / 2);
//     built as q = min(|d|, delta), 0.5 q^2 + delta (|d| - q) (the same, with no select).
//   BinaryCrossentropy(from_logits): targets z in [0, 1] of y_pred's shape, mean over all but
//     the batch dim. from_logits: softplus(x) - x z, which is max(x, 0) - x z +
//     log1p(exp(-|x|)) (the softplus op computes it that way: no overflow for large |x|).
//     else p = clip(y_pred, 1e-7, 1 - 1e-7) as Keras: -(z log p + (1 - z) log(1 - p)).
//   kl_divergence_normal(g, mean, log_var): KL(N(mean, exp(log_var)) || N(0, 1)) per example,
//     -0.5 sum(1 + log_var - mean^2 - exp(log_var)) over the last axis (a VAE's regulariser;
//     not a Loss: it has no targets, it is added to one in a custom step).
// Labels may be u8, i32 or i64 on the host (IDX label files are u8); they are cast to i32 on
// the device.
#ifndef DLRT_NN_LOSSES_HPP_
#define DLRT_NN_LOSSES_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/data.hpp"

namespace dlrt::nn {

class Loss {
 public:
  virtual ~Loss() = default;
  virtual std::unique_ptr<Loss> clone() const = 0;
  virtual std::string name() const = 0;
  // Whether the targets are class indices (what the accuracy metric needs).
  virtual bool sparse_labels() const = 0;
  // Checks host targets against the model's output shape (batch dim left out); throws
  // INVALID_ARGUMENT saying what was expected.
  virtual void check_targets(const Array& y, const Shape& output) const = 0;
  // Targets as the loss op wants them (raw: the gathered or fed rows).
  virtual Value prepare_targets(Graph& g, Value raw) const = 0;
  // Per-sample loss (B) f32.
  virtual Value per_sample(Graph& g, Value y_pred, Value y_true) const = 0;
};

class SparseCategoricalCrossentropy : public Loss {
 public:
  explicit SparseCategoricalCrossentropy(bool from_logits = false) : from_logits_(from_logits) {}
  std::unique_ptr<Loss> clone() const override {
    return std::make_unique<SparseCategoricalCrossentropy>(*this);
  }
  std::string name() const override { return "sparse_categorical_crossentropy"; }
  bool sparse_labels() const override { return true; }
  void check_targets(const Array& y, const Shape& output) const override {
    const dlrt_dtype t = y.dtype();
    if (t != DLRT_U8 && t != DLRT_I32 && t != DLRT_I64)
      throw Error(DLRT_INVALID_ARGUMENT, name() + ": labels are " + dtype_name(t) +
                                             "; expected class indices as u8, i32 or i64");
    if (output.empty())
      throw Error(DLRT_INVALID_ARGUMENT, name() + ": the model's output " + shape_string(output) +
                                             " must be (None, ..., classes)");
    // Labels are the output without its class dim: (N) for (None, K), (N, T) for
    // (None, T, K) — one class per sample, or per position of a sequence.
    const Shape want(output.begin(), output.end() - 1);
    if (y.sample_shape() != want)
      throw Error(DLRT_INVALID_ARGUMENT,
                  name() + ": labels have shape " + shape_string(y.sample_shape()) +
                      "; expected " + shape_string(want) + ", one class per " +
                      (want.empty() ? "sample" : "position") + " of the model's output " +
                      shape_string(output));
  }
  Value prepare_targets(Graph& g, Value raw) const override {
    return raw.dtype() == DLRT_I32 ? raw : g.op1("cast", {raw}, {{"dtype", DLRT_I32}});
  }
  Value per_sample(Graph& g, Value y_pred, Value y_true) const override {
    Value logits = y_pred;
    if (!from_logits_) {
      Value eps = g.constant<float>("", {}, {1e-7f});
      logits = g.op1("log", {g.op1("add", {y_pred, eps})});
    }
    const std::vector<int64_t> dims = logits.dims();
    if (dims.size() <= 2) return g.op("sparse_softmax_cross_entropy", {logits, y_true})[0];
    // (B, T..., K): the op takes (N, K) rows, so flatten the positions into rows, then average
    // each sample's positions (Keras' mean over the time axis of a sequence loss) -> (B).
    const int64_t k = dims.back();
    Value rows = g.op1("reshape", {logits}, {{"shape", std::vector<int64_t>{-1, k}}});
    Value ids = g.op1("reshape", {y_true}, {{"shape", std::vector<int64_t>{-1}}});
    Value per_position = g.op("sparse_softmax_cross_entropy", {rows, ids})[0];
    Value by_sample = g.op1("reshape", {per_position},
                            {{"shape", std::vector<int64_t>{dims[0], -1}}});
    return g.op1("reduce_mean", {by_sample}, {{"axes", std::vector<int64_t>{1}}});
  }

 private:
  bool from_logits_;
};

class MeanSquaredError : public Loss {
 public:
  std::unique_ptr<Loss> clone() const override { return std::make_unique<MeanSquaredError>(*this); }
  std::string name() const override { return "mean_squared_error"; }
  bool sparse_labels() const override { return false; }
  void check_targets(const Array& y, const Shape& output) const override {
    if (y.dtype() != DLRT_F32)
      throw Error(DLRT_INVALID_ARGUMENT,
                  name() + ": targets are " + dtype_name(y.dtype()) + "; expected f32");
    if (y.sample_shape() != output)
      throw Error(DLRT_INVALID_ARGUMENT,
                  name() + ": targets of shape " + shape_string(y.sample_shape()) +
                      " do not match the model's output " + shape_string(output));
  }
  Value prepare_targets(Graph&, Value raw) const override { return raw; }
  Value per_sample(Graph& g, Value y_pred, Value y_true) const override {
    Value d = g.op1("sub", {y_pred, y_true});
    Value sq = g.op1("mul", {d, d});
    const int64_t rank = static_cast<int64_t>(y_pred.dims().size());
    if (rank == 1) return sq;
    std::vector<int64_t> axes;
    for (int64_t a = 1; a < rank; ++a) axes.push_back(a);
    return g.op1("reduce_mean", {sq}, {{"axes", axes}});
  }
};

namespace detail {

// The dense-target check of the regression losses: f32 targets of the model's output shape.
inline void check_dense_targets(const std::string& loss, const Array& y, const Shape& output) {
  if (y.dtype() != DLRT_F32)
    throw Error(DLRT_INVALID_ARGUMENT,
                loss + ": targets are " + dtype_name(y.dtype()) + "; expected f32");
  if (y.sample_shape() != output)
    throw Error(DLRT_INVALID_ARGUMENT, loss + ": targets of shape " +
                                           shape_string(y.sample_shape()) +
                                           " do not match the model's output " +
                                           shape_string(output));
}

// Per-element loss (B,...) -> per-sample (B): the mean over every dim but the batch's
// (Keras' losses average the last axis; with more dims the mean of the means is the same).
inline Value mean_over_sample(Graph& g, Value per_element) {
  const int64_t rank = static_cast<int64_t>(per_element.dims().size());
  if (rank <= 1) return per_element;
  std::vector<int64_t> axes;
  for (int64_t a = 1; a < rank; ++a) axes.push_back(a);
  return g.op1("reduce_mean", {per_element}, {{"axes", axes}});
}

inline Value scalar(Graph& g, float v) { return g.constant<float>("", {}, {v}); }

}  // namespace detail

class MeanAbsoluteError : public Loss {
 public:
  std::unique_ptr<Loss> clone() const override {
    return std::make_unique<MeanAbsoluteError>(*this);
  }
  std::string name() const override { return "mean_absolute_error"; }
  bool sparse_labels() const override { return false; }
  void check_targets(const Array& y, const Shape& output) const override {
    detail::check_dense_targets(name(), y, output);
  }
  Value prepare_targets(Graph&, Value raw) const override { return raw; }
  Value per_sample(Graph& g, Value y_pred, Value y_true) const override {
    return detail::mean_over_sample(g, g.op1("abs", {g.op1("sub", {y_pred, y_true})}));
  }
};

// Keras' Huber: quadratic within delta of the target, linear (slope delta) beyond.
class Huber : public Loss {
 public:
  explicit Huber(double delta = 1.0) : delta_(delta) {
    if (!(delta > 0))
      throw Error(DLRT_INVALID_ARGUMENT,
                  "huber_loss: delta is " + std::to_string(delta) + "; expected > 0");
  }
  std::unique_ptr<Loss> clone() const override { return std::make_unique<Huber>(*this); }
  std::string name() const override { return "huber_loss"; }
  bool sparse_labels() const override { return false; }
  void check_targets(const Array& y, const Shape& output) const override {
    detail::check_dense_targets(name(), y, output);
  }
  Value prepare_targets(Graph&, Value raw) const override { return raw; }
  Value per_sample(Graph& g, Value y_pred, Value y_true) const override {
    const float delta = static_cast<float>(delta_);
    Value a = g.op1("abs", {g.op1("sub", {y_pred, y_true})});
    // q = min(|d|, delta): 0.5 q^2 is the quadratic part, delta (|d| - q) the linear rest.
    Value q = g.op1("clip", {a}, {{"max", delta_}});
    Value quad = g.op1("mul", {detail::scalar(g, 0.5f), g.op1("square", {q})});
    Value lin = g.op1("mul", {detail::scalar(g, delta), g.op1("sub", {a, q})});
    return detail::mean_over_sample(g, g.op1("add", {quad, lin}));
  }

 private:
  double delta_;
};

// Keras' BinaryCrossentropy: y_pred are logits (from_logits) or probabilities, targets z in
// [0, 1] (labels 0/1, or soft targets) of the same shape, typically (B, 1).
class BinaryCrossentropy : public Loss {
 public:
  explicit BinaryCrossentropy(bool from_logits = false) : from_logits_(from_logits) {}
  std::unique_ptr<Loss> clone() const override {
    return std::make_unique<BinaryCrossentropy>(*this);
  }
  std::string name() const override { return "binary_crossentropy"; }
  bool sparse_labels() const override { return false; }
  void check_targets(const Array& y, const Shape& output) const override {
    detail::check_dense_targets(name(), y, output);
  }
  Value prepare_targets(Graph&, Value raw) const override { return raw; }
  Value per_sample(Graph& g, Value y_pred, Value y_true) const override {
    return detail::mean_over_sample(g, per_element(g, y_pred, y_true));
  }
  // The elementwise loss, of y_pred's shape (what per_sample averages).
  Value per_element(Graph& g, Value y_pred, Value z) const {
    if (from_logits_)  // softplus(x) - x z = max(x,0) - x z + log1p(exp(-|x|))
      return g.op1("sub", {g.op1("softplus", {y_pred}), g.op1("mul", {y_pred, z})});
    const double eps = 1e-7;
    Value p = g.op1("clip", {y_pred}, {{"min", eps}, {"max", 1.0 - eps}});
    Value one = detail::scalar(g, 1.0f);
    Value pos = g.op1("mul", {z, g.op1("log", {p})});
    Value neg = g.op1("mul", {g.op1("sub", {one, z}), g.op1("log", {g.op1("sub", {one, p})})});
    return g.op1("neg", {g.op1("add", {pos, neg})});
  }

 private:
  bool from_logits_;
};

// KL(N(mean, exp(log_var)) || N(0, 1)) of diagonal Gaussians, per example: mean and log_var
// (B, D) f32 (any rank >= 1; the sum runs over the last axis) -> (B). The VAE regulariser
// (Kingma & Welling, appendix B): -0.5 sum(1 + log_var - mean^2 - exp(log_var)).
inline Value kl_divergence_normal(Graph& g, Value mean, Value log_var) {
  if (mean.dims() != log_var.dims())
    throw Error(DLRT_INVALID_ARGUMENT, "kl_divergence_normal: mean " +
                                           dims_string(mean.dims()) + " and log_var " +
                                           dims_string(log_var.dims()) +
                                           " must have the same shape");
  if (mean.dims().empty())
    throw Error(DLRT_INVALID_ARGUMENT,
                "kl_divergence_normal: mean and log_var need at least one axis to sum over");
  Value t = g.op1("add", {detail::scalar(g, 1.0f), log_var});
  t = g.op1("sub", {t, g.op1("square", {mean})});
  t = g.op1("sub", {t, g.op1("exp", {log_var})});
  const int64_t last = static_cast<int64_t>(mean.dims().size()) - 1;
  Value s = g.op1("reduce_sum", {t}, {{"axes", std::vector<int64_t>{last}}});
  return g.op1("mul", {detail::scalar(g, -0.5f), s});
}

}  // namespace dlrt::nn

#endif  // DLRT_NN_LOSSES_HPP_
