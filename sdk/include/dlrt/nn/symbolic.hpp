// dlrt/nn/symbolic.hpp: symbolic tensors — what a layer returns when it is called on
// nn::Input(...) or on another layer's output (Keras' KerasTensor and its history node).
//
//   auto in = nn::Input({28, 28, 1});            // converts to a SymbolicTensor (None,28,28,1)
//   nn::SymbolicTensor x = nn::Conv2D(16, {3, 3})(in);
//   x.shape() == {26, 26, 16}                      // one sample: the batch dim is left out
//
// A symbolic tensor holds no values. It names the Node that produced it (the layer and the
// tensors the layer was called on) and which of the node's outputs it is. Following the
// nodes back from a model's outputs gives the model's graph (nn::Model, model.hpp): nothing
// is built on a device until the model is compiled.
//
// Ownership: a tensor shares its node (std::shared_ptr); a node shares its layer and its
// input tensors, so an output keeps everything it was computed from alive. Nodes only point
// back to nodes made before them, so a graph made through layer calls has no cycle; one made
// by editing Node::inputs directly can, and nn::Model refuses it.
#ifndef DLRT_NN_SYMBOLIC_HPP_
#define DLRT_NN_SYMBOLIC_HPP_

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "dlrt/nn/data.hpp"

namespace dlrt::nn {

class Layer;
struct Node;

class SymbolicTensor {
 public:
  SymbolicTensor() = default;  // refers to nothing (valid() is false)
  SymbolicTensor(std::shared_ptr<Node> node, size_t index)
      : node_(std::move(node)), index_(index) {}

  bool valid() const { return node_ != nullptr; }
  const Shape& shape() const;  // one sample's shape (batch dim left out)
  // The node that produced this tensor and which of its outputs this is (Keras'
  // _keras_history). The node is shared: editing it edits every tensor made from it.
  const std::shared_ptr<Node>& node() const { return node_; }
  size_t index() const { return index_; }

 private:
  std::shared_ptr<Node> node_;
  size_t index_ = 0;
};

// One call of a layer (or one nn::Input): the layer, the tensors it was called on, and the
// shapes of its outputs. `layer` is null for an Input; `sequence` orders nodes by creation,
// which is always a topological order of graphs made through layer calls.
struct Node {
  std::shared_ptr<Layer> layer;
  std::vector<SymbolicTensor> inputs;
  std::vector<Shape> outputs;
  uint64_t sequence = next_sequence();
  // `layer` is the caller's own object (Layer::call_shared), not the copy operator() makes:
  // a model built from this node uses the object itself (a binding's layers keep their
  // identity), and names it only if it has no name yet.
  bool shared_layer = false;

  bool is_input() const { return layer == nullptr; }

  static uint64_t next_sequence();
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_SYMBOLIC_HPP_
