// dlrt/nn/metrics.hpp: metrics as graph builders of a per-batch count; the host sums counts
// over an epoch and divides by the samples seen (what Keras' running mean shows).
//
// Accuracy (sparse labels): count = equal_count(argmax(y_pred), labels). When the batch is
// padded (the last partial batch of an epoch, model.hpp), `valid` (B) f32 is 1 for real rows
// and 0 for padding; padded rows get the label -1, which no argmax equals:
//   labels' = cast(cast(labels, f32) * valid + (valid - 1), i32).
//
// BinaryAccuracy (Keras' binary_accuracy; "accuracy" beside a binary cross-entropy loss, as in
// Keras): each element is a hit when the prediction lies on its target's side of the
// threshold (0.5 for probabilities; 0 for logits, from_logits=True, where Keras keeps 0.5):
//   hits = 1 - |cast(y_pred > t, f32) - cast(y_true > 0.5, f32)|,
//   count = sum over rows of (mean of the row's hits) * valid.
#ifndef DLRT_NN_METRICS_HPP_
#define DLRT_NN_METRICS_HPP_

#include <memory>
#include <string>
#include <utility>

#include "dlrt/dlrt.hpp"

namespace dlrt::nn {

class Metric {
 public:
  virtual ~Metric();  // defined in the library: one home for the vtable
  virtual std::unique_ptr<Metric> clone() const = 0;
  virtual std::string name() const = 0;  // the key in logs and History: "accuracy"
  virtual bool needs_sparse_labels() const = 0;
  // f32 scalar: how many rows of this batch count as hits. `valid` may be an empty Value
  // (every row is real).
  virtual Value count(Graph& g, Value y_pred, Value y_true, Value valid) const = 0;
};

class Accuracy : public Metric {
 public:
  std::unique_ptr<Metric> clone() const override;
  std::string name() const override;
  bool needs_sparse_labels() const override;
  Value count(Graph& g, Value y_pred, Value y_true, Value valid) const override;
};

class BinaryAccuracy : public Metric {
 public:
  // `name`: the key in logs and History, the name it was asked for by.
  explicit BinaryAccuracy(float threshold = 0.5f, std::string name = "binary_accuracy")
      : threshold_(threshold), name_(std::move(name)) {}
  std::unique_ptr<Metric> clone() const override;
  std::string name() const override;
  bool needs_sparse_labels() const override;
  Value count(Graph& g, Value y_pred, Value y_true, Value valid) const override;
  float threshold() const { return threshold_; }

 private:
  float threshold_;
  std::string name_;
};

class Loss;

// By Keras' name: "accuracy" (or "acc"): Accuracy, or BinaryAccuracy when `loss` is a
// BinaryCrossentropy (threshold 0 when it takes logits); "binary_accuracy".
std::unique_ptr<Metric> metric_named(const std::string& name, const Loss* loss = nullptr);

}  // namespace dlrt::nn

#endif  // DLRT_NN_METRICS_HPP_
