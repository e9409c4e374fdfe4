// dlrt/nn/losses.hpp: losses as graph builders of a per-sample loss (B); the model averages
// it over the real samples of a batch (model.hpp: the last partial batch is padded and masked).
//
//   SparseCategoricalCrossentropy(from_logits): y_pred (B,K), labels (B) integer classes;
//     or y_pred (B,T...,K), labels (B,T...): one class per position, averaged per sample.
//     from_logits: sparse_softmax_cross_entropy(y_pred, labels) = logsumexp - logit[label].
//     else y_pred are probabilities: the same op on log(y_pred + 1e-7) gives -log p[label]
//     (Keras clips p to [1e-7, 1-1e-7]; the op set has no clip, so it adds the epsilon).
//     ignore_class (Keras'): labels equal to it count nothing (the <pad> after a sentence);
//     the batch's loss is Keras', the sum over the kept labels over their count, every kept
//     token weighted alike: sample b's loss is its kept labels' sum times B / the batch's
//     count (0 for a sample of ignored labels only). A last partial batch's padding rows
//     (copies, masked by the model) count in that count: there it is approximate. Built
//     from not_equal, where, cast, mul, reduce_sum, maximum, div.
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
#include <optional>
#include <string>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/data.hpp"

namespace dlrt::nn {

class Loss {
 public:
  virtual ~Loss();  // defined in the library: one home for the vtable
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
  explicit SparseCategoricalCrossentropy(bool from_logits = false,
                                         std::optional<int64_t> ignore_class = std::nullopt)
      : from_logits_(from_logits), ignore_class_(ignore_class) {}
  std::optional<int64_t> ignore_class() const { return ignore_class_; }
  std::unique_ptr<Loss> clone() const override;
  std::string name() const override;
  bool sparse_labels() const override;
  void check_targets(const Array& y, const Shape& output) const override;
  Value prepare_targets(Graph& g, Value raw) const override;
  Value per_sample(Graph& g, Value y_pred, Value y_true) const override;

 private:
  bool from_logits_;
  std::optional<int64_t> ignore_class_;
};

class MeanSquaredError : public Loss {
 public:
  std::unique_ptr<Loss> clone() const override;
  std::string name() const override;
  bool sparse_labels() const override;
  void check_targets(const Array& y, const Shape& output) const override;
  Value prepare_targets(Graph&, Value raw) const override;
  Value per_sample(Graph& g, Value y_pred, Value y_true) const override;
};

namespace detail {

// The dense-target check of the regression losses: f32 targets of the model's output shape.
void check_dense_targets(const std::string& loss, const Array& y, const Shape& output);

// Per-element loss (B,...) -> per-sample (B): the mean over every dim but the batch's
// (Keras' losses average the last axis; with more dims the mean of the means is the same).
Value mean_over_sample(Graph& g, Value per_element);

inline Value scalar(Graph& g, float v) { return g.constant<float>("", {}, {v}); }

}  // namespace detail

class MeanAbsoluteError : public Loss {
 public:
  std::unique_ptr<Loss> clone() const override;
  std::string name() const override;
  bool sparse_labels() const override;
  void check_targets(const Array& y, const Shape& output) const override;
  Value prepare_targets(Graph&, Value raw) const override;
  Value per_sample(Graph& g, Value y_pred, Value y_true) const override;
};

// Keras' Huber: quadratic within delta of the target, linear (slope delta) beyond.
class Huber : public Loss {
 public:
  explicit Huber(double delta = 1.0);
  std::unique_ptr<Loss> clone() const override;
  std::string name() const override;
  bool sparse_labels() const override;
  void check_targets(const Array& y, const Shape& output) const override;
  Value prepare_targets(Graph&, Value raw) const override;
  Value per_sample(Graph& g, Value y_pred, Value y_true) const override;

 private:
  double delta_;
};

// Keras' BinaryCrossentropy: y_pred are logits (from_logits) or probabilities, targets z in
// [0, 1] (labels 0/1, or soft targets) of the same shape, typically (B, 1).
class BinaryCrossentropy : public Loss {
 public:
  explicit BinaryCrossentropy(bool from_logits = false) : from_logits_(from_logits) {}
  bool from_logits() const { return from_logits_; }
  std::unique_ptr<Loss> clone() const override;
  std::string name() const override;
  bool sparse_labels() const override;
  void check_targets(const Array& y, const Shape& output) const override;
  Value prepare_targets(Graph&, Value raw) const override;
  Value per_sample(Graph& g, Value y_pred, Value y_true) const override;
  // The elementwise loss, of y_pred's shape (what per_sample averages).
  Value per_element(Graph& g, Value y_pred, Value z) const;

 private:
  bool from_logits_;
};

// KL(N(mean, exp(log_var)) || N(0, 1)) of diagonal Gaussians, per example: mean and log_var
// (B, D) f32 (any rank >= 1; the sum runs over the last axis) -> (B). The VAE regulariser
// (Kingma & Welling, appendix B): -0.5 sum(1 + log_var - mean^2 - exp(log_var)).
Value kl_divergence_normal(Graph& g, Value mean, Value log_var);

}  // namespace dlrt::nn

#endif  // DLRT_NN_LOSSES_HPP_
