// dlrt/nn/losses.hpp: losses as graph builders of a per-sample loss (B); the model averages
// it over the real samples of a batch (model.hpp: the last partial batch is padded and masked).
//
//   SparseCategoricalCrossentropy(from_logits): y_pred (B,K), labels (B) integer classes.
//     from_logits: sparse_softmax_cross_entropy(y_pred, labels) = logsumexp - logit[label].
//     else y_pred are probabilities: the same op on log(y_pred + 1e-7) gives -log p[label]
//     (Keras clips p to [1e-7, 1-1e-7]; the op set has no clip, so it adds the epsilon).
//   MeanSquaredError: y_pred and targets (B,...) f32; mean over all but the batch dim.
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
    if (y.dims().size() != 1)
      throw Error(DLRT_INVALID_ARGUMENT, name() +
                                             ": labels must have shape (N), one class per "
                                             "sample");
    if (output.size() != 1)
      throw Error(DLRT_INVALID_ARGUMENT, name() + ": the model's output " + shape_string(output) +
                                             " must be (None, classes)");
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
    return g.op("sparse_softmax_cross_entropy", {logits, y_true})[0];
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

}  // namespace dlrt::nn

#endif  // DLRT_NN_LOSSES_HPP_
