// functional_graph.hpp (private to libdlrt_nn): from a functional model's (inputs, outputs) symbolic tensors
// to the nodes a Plan runs (namespace nn::detail; nn::Model uses it, model.hpp).
//
// trace_graph walks back from the outputs through every node's inputs and
//   - refuses a cycle (only possible by editing Node::inputs by hand), an output that needs
//     an Input not among the model's inputs (a disconnected output, or a tensor built on
//     another model's Input), inputs that are not Inputs or are given twice: INVALID_ARGUMENT
//     naming the layer and the shapes;
//   - orders the nodes topologically, taking among the ready ones the one made first, so a
//     graph comes out in the order its layers were called (as Keras lists them), and a chain
//     in chain order: a functional chain builds the same nodes as a Sequential;
//   - gives the model its own copy of every layer (a shared layer once), named as Keras
//     would in that order ("conv2d", "conv2d_1", ...), so two models over the same layer
//     objects keep their own names.
#ifndef DLRT_NN_FUNCTIONAL_GRAPH_HPP_
#define DLRT_NN_FUNCTIONAL_GRAPH_HPP_

#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/layers.hpp"
#include "dlrt/nn/plan.hpp"
#include "dlrt/nn/symbolic.hpp"

namespace dlrt::nn::detail {

// A model's graph, as a Plan holds it (plan.hpp's slots), plus what summary() prints.
struct FunctionalGraph {
  std::vector<Shape> inputs;                   // slot i < inputs.size(): model input i
  std::vector<std::string> input_names;        // "input", "input_1", ...
  std::vector<std::shared_ptr<Layer>> layers;  // the model's copies, in first-call order
  std::vector<PlanNode> nodes;                 // topological; node k is slot inputs.size() + k
  std::vector<size_t> outputs;                 // slots
  std::vector<Shape> slot_shapes;              // every slot's shape (batch left out)

  // "conv2d[0][0]": the layer (or Input) making `slot`, which call of it, which output.
  std::string slot_name(size_t slot) const;
};

// The model's graph from `inputs` to `outputs` (the top of this file); `model` names the model
// in errors.
FunctionalGraph trace_graph(const std::vector<SymbolicTensor>& inputs,
                            const std::vector<SymbolicTensor>& outputs, const std::string& model);

}  // namespace dlrt::nn::detail

#endif  // DLRT_NN_FUNCTIONAL_GRAPH_HPP_
