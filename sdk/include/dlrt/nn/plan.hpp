// dlrt/nn/plan.hpp: a compiled model's plan — its layers, the graph of their calls, its state
// variables and what a training step computes (namespace nn::detail). Model::compile() makes
// one (Model::plan() reads it: tools/dlbench lists the state and nodes); session.hpp builds
// graphs from it.
#ifndef DLRT_NN_PLAN_HPP_
#define DLRT_NN_PLAN_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/data.hpp"
#include "dlrt/nn/initializers.hpp"
#include "dlrt/nn/layer.hpp"
#include "dlrt/nn/regularizers.hpp"

namespace dlrt::nn {

class Optimizer;
class Loss;
class Metric;

namespace detail {

// One variable of the model's state: a layer parameter, an optimizer slot or the step count.
struct StateVar {
  std::string name;  // "conv2d/kernel", "conv2d/kernel/m", "optimizer/iterations"
  Shape dims;
  Initializer init;
  bool trainable;
  int64_t owner;  // the index of the trainable variable a slot belongs to; -1 otherwise
  Regularizer regularizer = {};  // its penalty joins the loss (weights only)
  // A parameter its layer trains (ParamSpec::trainable): `trainable` is this and the layer's
  // trainable flag at compile(); moving statistics and slots are never weights.
  bool weight = false;
};
// The index Plan::iterations and Plan::learning_rate hold in a plan made without optimizer.
inline constexpr size_t kNoStateVar = static_cast<size_t>(-1);

// One layer call of a model's graph. Values are numbered in "slots": the model's inputs are
// slots 0..I-1, and node k's output is slot I + k. Nodes come in a topological order (every
// input slot is made before the node), so building them in order builds the graph.
struct PlanNode {
  size_t layer;                // index into Plan::layers
  std::vector<size_t> inputs;  // slots this call takes, in order
  size_t call = 0;             // 0 for a layer's first call; 1, 2, ... for a shared layer's next
};

// Everything a Session needs, fixed when the model is compiled (graph-independent). A
// Sequential's plan is the chain node k = layer k on slot k.
struct Plan {
  std::vector<std::shared_ptr<Layer>> layers;  // each once, even when called several times
  Shape input;                                 // inputs[0]: what fit/evaluate/predict feed
  std::vector<Shape> inputs;
  std::vector<PlanNode> nodes;
  std::vector<size_t> outputs;                   // slots; outputs[0] is y_pred
  std::vector<std::vector<size_t>> layer_state;  // per layer: its params' indices in `state`
  std::vector<StateVar> state;
  size_t iterations = 0;     // index of "optimizer/iterations" in `state`
  size_t learning_rate = 0;  // index of "optimizer/learning_rate" in `state`
  // Dynamic loss scaling (a mixed_float16 policy with an optimizer; kNoStateVar otherwise):
  // the indices of "optimizer/loss_scale" and "optimizer/loss_scale_good_steps" (LossScale).
  size_t loss_scale = static_cast<size_t>(-1);
  size_t loss_scale_good_steps = static_cast<size_t>(-1);
  std::shared_ptr<const Optimizer> optimizer;
  std::shared_ptr<const Loss> loss;  // applied to every output
  // Per output: the weight of its loss in the loss that trains (CompileConfig::loss_weights);
  // empty = 1 for every output.
  std::vector<float> loss_weights;
  std::vector<std::shared_ptr<const Metric>> metrics;  // each computed on every output
  uint64_t seed = 0;
  // Per layer: the dtype its call computes in (mixed_precision.hpp); empty = f32 everywhere.
  std::vector<dlrt_dtype> compute_dtype;
  std::vector<std::string> device_scopes;  // pushed, outermost first, around every build
  // How every executable of the model compiles; graph_passes carries CompileConfig's fusion
  // switches (the core's graph passes fold and fuse: nn builds the layers as they are).
  dlrt::CompileOptions compile;

  float loss_weight(size_t output) const {
    return loss_weights.empty() ? 1.f : loss_weights.at(output);
  }
  // How many of a step's results are losses: the total, then one per output when there are
  // several. The metric counts follow, metrics.size() per output, output-major.
  size_t loss_results() const { return outputs.size() > 1 ? 1 + outputs.size() : 1; }
  size_t results() const { return loss_results() + metrics.size() * outputs.size(); }
  // Whether anything reads model input `input` (slot `input`): a model may have inputs its
  // outputs do not need, which evaluation and prediction then do not feed (compile would
  // prune their placeholders).
  bool input_used(size_t input) const;
};

// Host arrays as the data path takes them: one per model input (x) or output (y), in order.
using ArrayRefs = std::vector<const Array*>;

// "x" for a model's only array of a kind, "x_1" (and "x" for the first) for its others: the
// names of the data variables and placeholders, so a model of one input builds what it did
// before several were taken.
inline std::string indexed_name(const std::string& base, size_t i) {
  return i == 0 ? base : base + "_" + std::to_string(i);
}

// The number of ids the model's input `input` (slot `input`) takes when every layer reading it
// takes integer ids (Embedding: Layer::input_ids), the smallest of them; 0 when the input is
// float features.
int64_t model_input_ids(const Plan& p, size_t input = 0);

}  // namespace detail
}  // namespace dlrt::nn

#endif  // DLRT_NN_PLAN_HPP_
