// dlrt/nn/metrics.hpp: metrics as graph builders of a per-batch count; the host sums counts
// over an epoch and divides by the samples seen (what Keras' running mean shows).
//
// Accuracy (sparse labels): count = equal_count(argmax(y_pred), labels). When the batch is
// padded (the last partial batch of an epoch, model.hpp), `valid` (B) f32 is 1 for real rows
// and 0 for padding; padded rows get the label -1, which no argmax equals:
//   labels' = cast(cast(labels, f32) * valid + (valid - 1), i32).
#ifndef DLRT_NN_METRICS_HPP_
#define DLRT_NN_METRICS_HPP_

#include <memory>
#include <string>

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

// By Keras' name; "accuracy" (or "acc") is the only one so far.
std::unique_ptr<Metric> metric_named(const std::string& name);

}  // namespace dlrt::nn

#endif  // DLRT_NN_METRICS_HPP_
