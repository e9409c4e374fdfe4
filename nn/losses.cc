// losses.cc: the losses and kl_divergence_normal (dlrt/nn/losses.hpp).
#include "dlrt/nn/losses.hpp"

#include <cstdint>
#include <vector>

namespace dlrt::nn {

Loss::~Loss() = default;

std::unique_ptr<Loss> SparseCategoricalCrossentropy::clone() const {
  return std::make_unique<SparseCategoricalCrossentropy>(*this);
}

std::string SparseCategoricalCrossentropy::name() const {
  return "sparse_categorical_crossentropy";
}

bool SparseCategoricalCrossentropy::sparse_labels() const { return true; }

void SparseCategoricalCrossentropy::check_targets(const Array& y, const Shape& output) const {
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
    throw Error(DLRT_INVALID_ARGUMENT, name() + ": labels have shape " +
                                           shape_string(y.sample_shape()) + "; expected " +
                                           shape_string(want) + ", one class per " +
                                           (want.empty() ? "sample" : "position") +
                                           " of the model's output " + shape_string(output));
}

Value SparseCategoricalCrossentropy::prepare_targets(Graph& g, Value raw) const {
  return raw.dtype() == DLRT_I32 ? raw : g.op1("cast", {raw}, {{"dtype", DLRT_I32}});
}

Value SparseCategoricalCrossentropy::per_sample(Graph& g, Value y_pred, Value y_true) const {
  Value logits = y_pred;
  if (!from_logits_) {
    Value eps = g.constant<float>("", {}, {1e-7f});
    logits = g.op1("log", {g.op1("add", {y_pred, eps})});
  }
  const std::vector<int64_t> dims = logits.dims();
  // ignore_class: `kept` (labels' shape) f32 1 where the label counts, 0 where it is the
  // ignored class; the ignored labels become class 0 for the op (any class would do: their
  // loss is multiplied by 0), so an ignore_class outside [0, K) such as -1 works too.
  Value kept, labels = y_true;
  if (ignore_class_) {
    Value ignored = g.constant<int32_t>("", {}, {static_cast<int32_t>(*ignore_class_)});
    Value keep = g.op1("not_equal", {y_true, ignored});
    labels = g.op1("where", {keep, y_true, g.constant<int32_t>("", {}, {0})});
    kept = g.op1("cast", {keep}, {{"dtype", DLRT_F32}});
  }
  // With ignore_class, Keras' mean over the batch's kept labels: each sample's summed loss
  // over its kept labels times B / (the batch's count of kept labels), so that the model's
  // mean over the B samples is sum / count.
  auto per_kept = [&](Value summed, Value weights) {
    Value count = g.op1("reduce_sum", {weights});  // every axis: the whole batch
    count = g.op1("maximum", {count, g.constant<float>("", {}, {1.f})});
    Value rows = g.constant<float>("", {}, {static_cast<float>(dims[0])});
    return g.op1("div", {g.op1("mul", {summed, rows}), count});
  };
  if (dims.size() <= 2) {
    Value loss = g.op("sparse_softmax_cross_entropy", {logits, labels})[0];
    return kept ? per_kept(g.op1("mul", {loss, kept}), kept) : loss;
  }
  // (B, T..., K): the op takes (N, K) rows, so flatten the positions into rows, then average
  // each sample's positions (Keras' mean over the time axis of a sequence loss) -> (B).
  const int64_t k = dims.back();
  Value rows = g.op1("reshape", {logits}, {{"shape", std::vector<int64_t>{-1, k}}});
  Value ids = g.op1("reshape", {labels}, {{"shape", std::vector<int64_t>{-1}}});
  Value per_position = g.op("sparse_softmax_cross_entropy", {rows, ids})[0];
  Value by_sample =
      g.op1("reshape", {per_position}, {{"shape", std::vector<int64_t>{dims[0], -1}}});
  if (!kept) return g.op1("reduce_mean", {by_sample}, {{"axes", std::vector<int64_t>{1}}});
  Value weights = g.op1("reshape", {kept}, {{"shape", std::vector<int64_t>{dims[0], -1}}});
  Value summed = g.op1("reduce_sum", {g.op1("mul", {by_sample, weights})},
                       {{"axes", std::vector<int64_t>{1}}});
  return per_kept(summed, weights);
}

std::unique_ptr<Loss> MeanSquaredError::clone() const {
  return std::make_unique<MeanSquaredError>(*this);
}

std::string MeanSquaredError::name() const { return "mean_squared_error"; }

bool MeanSquaredError::sparse_labels() const { return false; }

void MeanSquaredError::check_targets(const Array& y, const Shape& output) const {
  if (y.dtype() != DLRT_F32)
    throw Error(DLRT_INVALID_ARGUMENT,
                name() + ": targets are " + dtype_name(y.dtype()) + "; expected f32");
  if (y.sample_shape() != output)
    throw Error(DLRT_INVALID_ARGUMENT,
                name() + ": targets of shape " + shape_string(y.sample_shape()) +
                    " do not match the model's output " + shape_string(output));
}

Value MeanSquaredError::prepare_targets(Graph&, Value raw) const { return raw; }

Value MeanSquaredError::per_sample(Graph& g, Value y_pred, Value y_true) const {
  Value d = g.op1("sub", {y_pred, y_true});
  Value sq = g.op1("mul", {d, d});
  const int64_t rank = static_cast<int64_t>(y_pred.dims().size());
  if (rank == 1) return sq;
  std::vector<int64_t> axes;
  for (int64_t a = 1; a < rank; ++a) axes.push_back(a);
  return g.op1("reduce_mean", {sq}, {{"axes", axes}});
}

void detail::check_dense_targets(const std::string& loss, const Array& y, const Shape& output) {
  if (y.dtype() != DLRT_F32)
    throw Error(DLRT_INVALID_ARGUMENT,
                loss + ": targets are " + dtype_name(y.dtype()) + "; expected f32");
  if (y.sample_shape() != output)
    throw Error(DLRT_INVALID_ARGUMENT,
                loss + ": targets of shape " + shape_string(y.sample_shape()) +
                    " do not match the model's output " + shape_string(output));
}

Value detail::mean_over_sample(Graph& g, Value per_element) {
  const int64_t rank = static_cast<int64_t>(per_element.dims().size());
  if (rank <= 1) return per_element;
  std::vector<int64_t> axes;
  for (int64_t a = 1; a < rank; ++a) axes.push_back(a);
  return g.op1("reduce_mean", {per_element}, {{"axes", axes}});
}

std::unique_ptr<Loss> MeanAbsoluteError::clone() const {
  return std::make_unique<MeanAbsoluteError>(*this);
}

std::string MeanAbsoluteError::name() const { return "mean_absolute_error"; }

bool MeanAbsoluteError::sparse_labels() const { return false; }

void MeanAbsoluteError::check_targets(const Array& y, const Shape& output) const {
  detail::check_dense_targets(name(), y, output);
}

Value MeanAbsoluteError::prepare_targets(Graph&, Value raw) const { return raw; }

Value MeanAbsoluteError::per_sample(Graph& g, Value y_pred, Value y_true) const {
  return detail::mean_over_sample(g, g.op1("abs", {g.op1("sub", {y_pred, y_true})}));
}

Huber::Huber(double delta) : delta_(delta) {
  if (!(delta > 0))
    throw Error(DLRT_INVALID_ARGUMENT,
                "huber_loss: delta is " + std::to_string(delta) + "; expected > 0");
}

std::unique_ptr<Loss> Huber::clone() const { return std::make_unique<Huber>(*this); }

std::string Huber::name() const { return "huber_loss"; }

bool Huber::sparse_labels() const { return false; }

void Huber::check_targets(const Array& y, const Shape& output) const {
  detail::check_dense_targets(name(), y, output);
}

Value Huber::prepare_targets(Graph&, Value raw) const { return raw; }

Value Huber::per_sample(Graph& g, Value y_pred, Value y_true) const {
  const float delta = static_cast<float>(delta_);
  Value a = g.op1("abs", {g.op1("sub", {y_pred, y_true})});
  // q = min(|d|, delta): 0.5 q^2 is the quadratic part, delta (|d| - q) the linear rest.
  Value q = g.op1("clip", {a}, {{"max", delta_}});
  Value quad = g.op1("mul", {detail::scalar(g, 0.5f), g.op1("square", {q})});
  Value lin = g.op1("mul", {detail::scalar(g, delta), g.op1("sub", {a, q})});
  return detail::mean_over_sample(g, g.op1("add", {quad, lin}));
}

std::unique_ptr<Loss> BinaryCrossentropy::clone() const {
  return std::make_unique<BinaryCrossentropy>(*this);
}

std::string BinaryCrossentropy::name() const { return "binary_crossentropy"; }

bool BinaryCrossentropy::sparse_labels() const { return false; }

void BinaryCrossentropy::check_targets(const Array& y, const Shape& output) const {
  detail::check_dense_targets(name(), y, output);
}

Value BinaryCrossentropy::prepare_targets(Graph&, Value raw) const { return raw; }

Value BinaryCrossentropy::per_sample(Graph& g, Value y_pred, Value y_true) const {
  return detail::mean_over_sample(g, per_element(g, y_pred, y_true));
}

Value BinaryCrossentropy::per_element(Graph& g, Value y_pred, Value z) const {
  if (from_logits_)  // softplus(x) - x z = max(x,0) - x z + log1p(exp(-|x|))
    return g.op1("sub", {g.op1("softplus", {y_pred}), g.op1("mul", {y_pred, z})});
  const double eps = 1e-7;
  Value p = g.op1("clip", {y_pred}, {{"min", eps}, {"max", 1.0 - eps}});
  Value one = detail::scalar(g, 1.0f);
  Value pos = g.op1("mul", {z, g.op1("log", {p})});
  Value neg = g.op1("mul", {g.op1("sub", {one, z}), g.op1("log", {g.op1("sub", {one, p})})});
  return g.op1("neg", {g.op1("add", {pos, neg})});
}

Value kl_divergence_normal(Graph& g, Value mean, Value log_var) {
  if (mean.dims() != log_var.dims())
    throw Error(DLRT_INVALID_ARGUMENT, "kl_divergence_normal: mean " + dims_string(mean.dims()) +
                                           " and log_var " + dims_string(log_var.dims()) +
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
