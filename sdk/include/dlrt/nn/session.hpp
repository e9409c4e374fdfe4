// dlrt/nn/session.hpp: one graph holding a model's variables and the executables built over
// them — the training step, and an evaluation and a prediction executable per input type
// (rows and dtypes).
// An implementation part of model.hpp (namespace nn::detail; the bodies are in libdlrt_nn,
// nn/session*.cc); users go through Sequential. A Session builds its graphs with run_plan
// (run_plan.hpp) and runs each executable through a Runner (runner.hpp).
//
// The training step is one executable of one graph (compiled with run_assigns on):
//   x_data (N,...) u8|f32, y_data (N[,...])   the training set, uploaded once as
//                                              non-trainable variables on the model's device
//                                              ("data/x", "data/y"; a model of several inputs
//                                              or outputs has one per array: "data/x_1", ...)
//   batch_indices (B) i32, valid (B) f32      the only feeds of a step
//   x = gather_rows(x_data, idx) -> cast f32 -> * 1/255 (u8 images)   (per input, same idx)
//   y_pred = the layers; per = loss.per_sample(y_pred, y)
//     (several outputs: per = sum over outputs k of weight_k * per_k, the compiled loss on
//     each output; loss_weights default 1)
//   loss = sum(per * valid) / sum(valid)       the mean over the batch's real rows
//   grads = dlrt_graph_gradients(loss, trainable variables)
//   iterations += 1; optimizer update of every variable, assigned in place
//   layers' non-trainable state (moving statistics) assigned their new values
//   fetches (Plan::results): loss, each output's mean loss (several outputs only), and one
//   count per metric per output (output-major)
// A graph takes one assign per variable, so it holds one training step, built for one batch
// size: the last partial batch of an epoch runs the same executable with its indices padded
// (index 0) and `valid` 0 on the padding, which leaves the loss, the gradients and the counts
// those of the real rows. Training on another set size or batch size builds a new Session
// and moves the state (weights, slots, iterations) over (model.hpp).
//
// Under a distribution strategy (distribute.hpp, replicated.hpp) there is one Session per
// replica, each on its replica's device, and the step is split in two executables of the
// same graph so that the gradients can be summed over every replica in between:
//   grads (run_assigns 0): feeds batch_indices, valid (this replica's rows of the global
//     batch); fetches every gradient of loss_sum = sum(per * valid) (not the mean: replicas
//     hold different numbers of real rows), loss_sum itself and one count per metric
//   apply (run_assigns 1): feeds one placeholder per gradient (the summed gradients) and
//     scale () f32 = 1 / the global batch's real rows; updates every variable with
//     grad * scale, which is the single-device gradient of the mean. The layers' state
//     (moving statistics) goes the same way: grads fetches each new value times the
//     replica's real rows, apply assigns sum * scale, the rows-weighted mean over replicas.
// Evaluation and prediction take host batches through placeholders (one per array), one
// executable per input type (batch size: a full one and the last partial one; and the dtypes
// of every array: u8 images or f32), compiled with run_assigns off: they read the variables
// and change nothing.
#ifndef DLRT_NN_SESSION_HPP_
#define DLRT_NN_SESSION_HPP_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/data.hpp"
#include "dlrt/nn/layers.hpp"
#include "dlrt/nn/plan.hpp"
#include "dlrt/nn/run_plan.hpp"
#include "dlrt/nn/runner.hpp"

namespace dlrt::nn::detail {

class Session {
 public:
  // Makes the graph and every state variable (named as in the plan, under its device scopes).
  // `replica` (the global replica index, 0 without a strategy) salts the training seed of
  // random layers (Dropout) so that replicas draw different masks; replica 0 draws what a
  // single device would.
  Session(const Context& ctx, std::shared_ptr<const Plan> plan, uint64_t replica = 0);

  Graph& graph() { return graph_; }
  const std::vector<Value>& vars() const { return vars_; }
  const Plan& plan() const { return *plan_; }

  // ---- training ----
  bool has_train() const { return train_ != nullptr; }
  // Whether the step built fits a training set of `rows` rows of these arrays (one per
  // input, one per output) in batches of `batch`.
  bool train_fits(int64_t rows, int64_t batch, const ArrayRefs& xs, const ArrayRefs& ys) const;
  void build_train(const ArrayRefs& xs, const ArrayRefs& ys, int64_t batch);
  // Uploads the training set (once per fit) into the data variables: every x, then every y.
  void upload(const ArrayRefs& xs, const ArrayRefs& ys);
  int64_t batch() const { return batch_; }
  // One step on rows `indices` (at most batch() of them) of every array. Returns the
  // plan's results: {loss, [per-output losses], counts...}.
  std::vector<double> train_step(const int32_t* indices, int64_t count);
  Executable& train_executable() { return train_->exe; }

  // ---- the split step of a replica (see the top of this file) ----
  bool has_split() const { return grads_ != nullptr; }
  void build_split(const ArrayRefs& xs, const ArrayRefs& ys, int64_t batch);
  // Runs the grads executable on this replica's rows `indices` (at most batch(); none is
  // fine: the replica then contributes zeros). Its fetches (split_sums) hold the results.
  void split_grads(const int32_t* indices, int64_t count);
  // The grads executable's fetches, in order: every gradient, each state update's value
  // times the replica's real rows, loss_sum, each output's loss sum (several outputs only),
  // the metric counts. The strategy sums them over replicas in place; then split_apply reads
  // the gradients and the state sums.
  std::vector<Tensor>& split_sums() { return grads_->fetches; }
  // Applies the summed gradients times `scale` (1 / the global batch's real rows).
  void split_apply(float scale);
  Executable& grads_executable() { return grads_->exe; }
  Executable& apply_executable() { return apply_->exe; }

  // ---- evaluation and prediction: per batch size and dtypes ----
  // {sum of per-sample losses, [each output's sum], counts...} over `count` rows of every x
  // and y from `first`.
  std::vector<double> eval_batch(const ArrayRefs& xs, const ArrayRefs& ys, int64_t first,
                                 int64_t count);
  // Every output's y_pred of `count` rows of every x from `first`, as f32 bytes (one per
  // output).
  std::vector<std::vector<uint8_t>> predict_batch(const ArrayRefs& xs, int64_t first,
                                                  int64_t count);

  // The prediction of one row of inputs of `input_dtypes` (one per model input), written as
  // ONNX (dlrt_graph_export_onnx) with a symbolic batch dim. The piece of graph is built once
  // per list of dtypes, as predict's are.
  void save_onnx(const std::string& path, const std::vector<dlrt_dtype>& input_dtypes);

 private:
  // The optimizer's updates of the trainable variables vars_[trainable[k]] by grads[k]
  // (clipped together by global norm when the optimizer says so).
  // Under loss scaling, `apply_if` (bool scalar) says whether the step's updates happen.
  void apply_updates(Graph& g, const std::vector<size_t>& trainable,
                     const std::vector<Value>& grads, Value step, Value apply_if = {});
  // Indices of the trainable variables in vars_, and their gradients of `loss` (same order).
  std::vector<size_t> trainable_vars() const;
  std::vector<Value> gradients(const Value& loss, const std::vector<size_t>& wrt_vars);
  // The optimizer slots of variable `var` (Adam's m and v), in plan order.
  std::vector<Value> slots_of(size_t var) const;
  // A step's feeds 0 and 1: `count` row indices padded with row 0 to the batch, and `valid`
  // 1 on the real rows, 0 on the padding.
  void feed_batch(Runner& r, const int32_t* indices, int64_t count);
  // The training set's variables (one per array: "data/x", "data/x_1", ..., "data/y", ...),
  // and what train_fits compares.
  void make_data(const ArrayRefs& xs, const ArrayRefs& ys, int64_t batch);
  // The model's inputs of the training set's rows `idx` (as floats where they are), and the
  // targets of the same rows as the loss wants them: one permutation for every array.
  std::vector<Value> gathered_inputs(Graph& g, Value idx) const;
  std::vector<Value> gathered_targets(Graph& g, Value idx) const;
  // The compiled loss per sample on each output (B each).
  std::vector<Value> per_sample_losses(Graph& g, const std::vector<Value>& y_pred,
                                       const std::vector<Value>& y_true) const;
  // sum_k loss_weight(k) * per_output[k]: the per-sample loss that trains (Keras sums the
  // outputs' losses). One output of weight 1 is its loss itself (no op added).
  Value weighted_sum(Graph& g, const std::vector<Value>& per_output) const;
  // One count per metric per output (output-major), appended to `fetches`.
  void add_metric_counts(Graph& g, const std::vector<Value>& y_pred,
                         const std::vector<Value>& y_true, Value valid,
                         std::vector<Value>* fetches) const;
  static std::vector<dlrt_dtype> dtypes(const ArrayRefs& a);
  static std::vector<Shape> sample_shapes(const ArrayRefs& a);
  // "u8" for one array, "u8_f32" for two: the dtypes part of an executable's node scope.
  static std::string dtypes_name(const ArrayRefs& a);
  uint64_t train_seed() const;
  static std::vector<int64_t> batch_dims(int64_t b, const Shape& sample);
  static void write_rows(Tensor& t, const Array& a, int64_t first, int64_t count);
  // Model input `input`: u8 images become f32 in [0, 1]; f32 passes; other integers are cast —
  // except i32/i64 ids of an input whose layers take ids (Embedding), which pass unchanged.
  Value to_float(Graph& g, Value raw, size_t input) const;
  // Every output (Plan::outputs) of the model on its inputs x (run_plan).
  std::vector<Value> forward(CallContext& c, std::vector<Value> x);
  // The sum of every weight's regularization penalty; an invalid Value when there is none.
  Value regularization(Graph& g);
  Runner& eval_runner(const ArrayRefs& xs, const ArrayRefs& ys, int64_t count);

  const Context& ctx_;
  std::shared_ptr<const Plan> plan_;
  Graph graph_;
  std::vector<Value> vars_;
  // Executables before the graph goes: members are destroyed in reverse order.
  std::unique_ptr<Runner> train_, grads_, apply_;
  // Keyed by the full input type of a batch: rows and every array's dtype (x's, then y's; the
  // sample shapes are the plan's).
  std::map<std::tuple<int64_t, std::vector<dlrt_dtype>, std::vector<dlrt_dtype>>,
           std::unique_ptr<Runner>>
      evals_;
  std::map<std::pair<int64_t, std::vector<dlrt_dtype>>, std::unique_ptr<Runner>> predicts_;
  // save_onnx: (inputs, outputs) per list of input dtypes
  std::map<std::vector<dlrt_dtype>, std::pair<std::vector<Value>, std::vector<Value>>> exports_;
  std::vector<Value> x_data_, y_data_;  // the training set: one variable per input, per output
  int64_t rows_ = 0, batch_ = 0;
  std::vector<dlrt_dtype> x_dtypes_, y_dtypes_;
  std::vector<Shape> y_shapes_;
  uint64_t replica_ = 0;
};

}  // namespace dlrt::nn::detail

#endif  // DLRT_NN_SESSION_HPP_
