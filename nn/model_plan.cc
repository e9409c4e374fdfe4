// model_plan.cc: Model::make_plan — a model's plan from its graph: state variables, compute
// dtypes and the graph passes its executables compile with (dlrt/nn/model.hpp).
#include "dlrt/nn/model.hpp"

#include <string>
#include <vector>

#include "dlrt/nn/loss_scale.hpp"
#include "dlrt/nn/mixed_precision.hpp"
#include "dlrt/nn/optimizers.hpp"
#include "dlrt/nn/plan.hpp"
#include "dlrt/nn/schedules.hpp"
#include "functional_graph.hpp"

namespace dlrt::nn {

void Model::make_plan(const std::vector<Shape>& inputs) {
  if (sequential_) {
    // The chain: node k is layer k on slot k (slot 0 the input, slot k > 0 node k-1's output).
    *graph_ = detail::FunctionalGraph();
    graph_->inputs = inputs;
    graph_->input_names = {"input"};
    graph_->layers = layers_;
    for (size_t k = 0; k < layers_.size(); ++k) graph_->nodes.push_back({k, {k}, 0});
    graph_->outputs = {layers_.size()};
  }
  auto plan = std::make_shared<detail::Plan>();
  plan->inputs = inputs;
  plan->input = inputs.at(0);
  plan->layers = graph_->layers;
  plan->nodes = graph_->nodes;
  plan->outputs = graph_->outputs;
  plan->layer_state.resize(graph_->layers.size());
  // Every slot's shape, node by node; a layer's parameters come from its first call, and a
  // shared layer's later calls must need the same ones.
  std::vector<Shape> slots = inputs;
  std::vector<std::vector<ParamSpec>> first_params(graph_->layers.size());
  std::vector<size_t> trainable;
  for (const detail::PlanNode& n : graph_->nodes) {
    const Layer& layer = *graph_->layers[n.layer];
    std::vector<Shape> in;
    for (size_t s : n.inputs) in.push_back(slots.at(s));
    std::vector<ParamSpec> params = layer.params_multi(in);
    if (n.call == 0) {
      for (const ParamSpec& p : params) {
        const bool trains = p.trainable && layer.trainable();  // a frozen layer's are not
        if (trains) trainable.push_back(plan->state.size());
        plan->layer_state[n.layer].push_back(plan->state.size());
        plan->state.push_back(
            {layer.name() + "/" + p.name, p.dims, p.init, trains, -1, p.regularizer, p.trainable});
      }
      first_params[n.layer] = params;
    } else {
      bool same = params.size() == first_params[n.layer].size();
      for (size_t i = 0; same && i < params.size(); ++i)
        same = params[i].dims == first_params[n.layer][i].dims;
      if (!same)
        throw Error(DLRT_INVALID_ARGUMENT,
                    name_ + ": shared layer " + layer.name() + " (" + layer.type() +
                        ") is called on " + detail::shapes_string(in) +
                        ", which needs other weights than its first call's; a shared layer's "
                        "calls must fit the same weights");
    }
    slots.push_back(layer.output_shape_multi(in));
  }
  std::vector<Shape> output_shapes;
  for (size_t s : graph_->outputs) output_shapes.push_back(slots.at(s));
  if (sequential_) graph_->slot_shapes = slots;
  // Compiled without optimizer (inference, custom steps): the layers' state only.
  if (!optimizer_) trainable.clear();
  for (size_t t : trainable)
    for (const std::string& slot : optimizer_->slot_names()) {
      const detail::StateVar& p = plan->state[t];
      plan->state.push_back(
          {p.name + "/" + slot, p.dims, Initializer::zeros(), false, static_cast<int64_t>(t), {}});
    }
  // The rate every update reads (schedules.hpp); fit writes it before the steps that need it.
  plan->learning_rate = plan->iterations = detail::kNoStateVar;
  // Each layer's compute dtype: the model's policy (CompileConfig::dtype_policy) or else the
  // layer's own; f32 for the float32_only layers. All f32: no casts (compute_dtype empty).
  std::vector<dlrt_dtype> compute;
  bool any_mixed = false, any_f16 = false, any_bf16 = false;
  for (const auto& layer : graph_->layers) {
    const std::string& policy =
        config_.dtype_policy.empty() ? layer->dtype_policy() : config_.dtype_policy;
    const dlrt_dtype d = layer->float32_only() ? DLRT_F32 : policy_compute_dtype(policy);
    any_mixed = any_mixed || d != DLRT_F32;
    any_f16 = any_f16 || d == DLRT_F16;
    any_bf16 = any_bf16 || d == DLRT_BF16;
    compute.push_back(d);
  }
  if (any_mixed) plan->compute_dtype = std::move(compute);
  // This CPU (or GPU) may compute bf16 only by converting: said once, the policy kept.
  if (any_bf16) detail::warn_once_if_bf16_is_converted(ctx_);
  // f16 gradients underflow: fit's step scales the loss (Keras wraps the optimizer of a
  // mixed_float16 model in a LossScaleOptimizer the same way); bf16 has f32's range.
  if (optimizer_ && any_f16) {
    plan->loss_scale = plan->state.size();
    plan->state.push_back({"optimizer/loss_scale",
                           {},
                           Initializer::constant(detail::kInitialLossScale),
                           false,
                           -1,
                           {}});
    plan->loss_scale_good_steps = plan->state.size();
    plan->state.push_back(
        {"optimizer/loss_scale_good_steps", {}, Initializer::zeros(), false, -1, {}});
  }
  if (optimizer_) {
    plan->learning_rate = plan->state.size();
    plan->state.push_back({"optimizer/learning_rate",
                           {},
                           Initializer::constant(optimizer_->learning_rate().at(0)),
                           false,
                           -1,
                           {}});
    plan->iterations = plan->state.size();  // the last state variable
    plan->state.push_back({"optimizer/iterations", {}, Initializer::zeros(), false, -1, {}});
  }
  plan->optimizer = optimizer_;
  plan->loss = loss_;
  for (double w : config_.loss_weights) plan->loss_weights.push_back(static_cast<float>(w));
  plan->metrics.assign(metrics_.begin(), metrics_.end());
  plan->seed = config_.seed;
  plan->device_scopes = scopes_at_compile_;
  if (config_.log_device_placement) plan->compile.log_device_placement = true;
  if (!config_.use_capture) plan->compile.use_capture = false;
  if (config_.device == "auto") plan->compile.auto_device = true;
  // Folding and fusing are the core's graph passes (docs/design.md, "Graph passes"); the
  // model's switches turn them off, and CompileConfig::graph_passes has the last word.
  std::string passes = "default";
  if (!config_.fold_batch_norm) passes += ",-fold_batch_norm";
  if (!config_.fuse_batch_norm_relu) passes += ",-fuse_bias_activation";
  if (!config_.fuse_batch_norm_add_relu) passes += ",-fuse_residual_tail";
  if (!config_.graph_passes.empty()) passes += "," + config_.graph_passes;
  if (passes != "default") plan->compile.graph_passes = passes;
  output_shapes_ = std::move(output_shapes);
  plan_ = std::move(plan);
}

}  // namespace dlrt::nn
