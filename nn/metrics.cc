// metrics.cc: the metrics (dlrt/nn/metrics.hpp).
#include "dlrt/nn/metrics.hpp"

#include "dlrt/nn/losses.hpp"

namespace dlrt::nn {

Metric::~Metric() = default;

std::unique_ptr<Metric> Accuracy::clone() const { return std::make_unique<Accuracy>(*this); }

std::string Accuracy::name() const { return "accuracy"; }

bool Accuracy::needs_sparse_labels() const { return true; }

Value Accuracy::count(Graph& g, Value y_pred, Value y_true, Value valid) const {
  Value predicted = g.op1("argmax", {y_pred}, {{"axis", -1}, {"output_type", DLRT_I32}});
  Value labels = y_true;
  // A sequence output (B, T..., K) has P = T... positions per sample: compare all B*P of
  // them and divide the hits by P, so the host's count / samples is the token accuracy.
  const std::vector<int64_t> dims = y_pred.dims();
  int64_t positions = 1;
  for (size_t i = 1; i + 1 < dims.size(); ++i) positions *= dims[i];
  if (valid) {
    Value one = g.constant<float>("", {}, {1.f});
    Value as_float = g.op1("cast", {y_true}, {{"dtype", DLRT_F32}});
    Value v = valid;
    if (dims.size() > 2) {  // (B) -> (B, 1, ...) to broadcast over the positions
      std::vector<int64_t> vd(dims.size() - 1, 1);
      vd[0] = dims[0];
      v = g.op1("reshape", {valid}, {{"shape", vd}});
    }
    Value masked = g.op1("add", {g.op1("mul", {as_float, v}), g.op1("sub", {v, one})});
    labels = g.op1("cast", {masked}, {{"dtype", DLRT_I32}});
  }
  if (dims.size() <= 2) return g.op1("equal_count", {predicted, labels});
  const std::vector<int64_t> flat{-1};
  Value hits = g.op1("equal_count", {g.op1("reshape", {predicted}, {{"shape", flat}}),
                                     g.op1("reshape", {labels}, {{"shape", flat}})});
  return g.op1("div", {hits, g.constant<float>("", {}, {static_cast<float>(positions)})});
}

std::unique_ptr<Metric> BinaryAccuracy::clone() const {
  return std::make_unique<BinaryAccuracy>(*this);
}

std::string BinaryAccuracy::name() const { return name_; }

bool BinaryAccuracy::needs_sparse_labels() const { return false; }

Value BinaryAccuracy::count(Graph& g, Value y_pred, Value y_true, Value valid) const {
  auto as_f32 = [&](Value v) { return g.op1("cast", {v}, {{"dtype", DLRT_F32}}); };
  Value predicted = as_f32(g.op1(
      "greater", {as_f32(y_pred), g.constant<float>("", {}, {threshold_})}));
  Value target = as_f32(g.op1("greater", {as_f32(y_true), g.constant<float>("", {}, {0.5f})}));
  Value one = g.constant<float>("", {}, {1.f});
  Value hits = g.op1("sub", {one, g.op1("abs", {g.op1("sub", {predicted, target})})});
  // (B, d...) -> (B): the mean of each row's hits (Keras averages the last axis; a row of
  // several outputs is one sample here, as the host divides by samples).
  const std::vector<int64_t> dims = y_pred.dims();
  Value per_row = hits;
  if (dims.size() > 1) {
    std::vector<int64_t> axes;
    for (size_t a = 1; a < dims.size(); ++a) axes.push_back(static_cast<int64_t>(a));
    per_row = g.op1("reduce_mean", {hits}, {{"axes", axes}});
  }
  if (valid) per_row = g.op1("mul", {per_row, valid});
  return g.op1("reduce_sum", {per_row});
}

std::unique_ptr<Metric> metric_named(const std::string& name, const Loss* loss) {
  const auto* binary = dynamic_cast<const BinaryCrossentropy*>(loss);
  if (name == "binary_accuracy" || ((name == "accuracy" || name == "acc") && binary))
    return std::make_unique<BinaryAccuracy>(binary && binary->from_logits() ? 0.f : 0.5f,
                                            name == "binary_accuracy" ? name : "accuracy");
  if (name == "accuracy" || name == "acc") return std::make_unique<Accuracy>();
  throw Error(DLRT_INVALID_ARGUMENT,
              "unknown metric '" + name + "'; expected accuracy (or binary_accuracy)");
}

}  // namespace dlrt::nn
