// metrics.cc: the metrics (dlrt/nn/metrics.hpp).
#include "dlrt/nn/metrics.hpp"

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

std::unique_ptr<Metric> metric_named(const std::string& name) {
  if (name == "accuracy" || name == "acc") return std::make_unique<Accuracy>();
  throw Error(DLRT_INVALID_ARGUMENT, "unknown metric '" + name + "'; expected accuracy");
}

}  // namespace dlrt::nn
