// functional_graph.cc: trace_graph, a functional model's graph checked and ordered
// (functional_graph.hpp).
#include "functional_graph.hpp"

#include <map>

namespace dlrt::nn::detail {

std::string FunctionalGraph::slot_name(size_t slot) const {
  if (slot < inputs.size()) return input_names[slot] + "[0][0]";
  const PlanNode& n = nodes[slot - inputs.size()];
  return layers[n.layer]->name() + "[" + std::to_string(n.call) + "][0]";
}

namespace {

std::string layer_label(const Node& n) {
  return n.is_input() ? "an Input " + shape_string(n.outputs.at(0))
                      : "layer " + n.layer->display_name() + " (" + n.layer->type() + ")";
}

}  // namespace

FunctionalGraph trace_graph(const std::vector<SymbolicTensor>& inputs,
                            const std::vector<SymbolicTensor>& outputs, const std::string& model) {
  const std::string who = "Model '" + model + "': ";
  if (inputs.empty()) throw Error(DLRT_INVALID_ARGUMENT, who + "needs at least one input");
  if (outputs.empty()) throw Error(DLRT_INVALID_ARGUMENT, who + "needs at least one output");
  FunctionalGraph g;
  std::map<const Node*, size_t> input_slot;
  std::map<std::string, int> counts;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const SymbolicTensor& t = inputs[i];
    if (!t.valid())
      throw Error(DLRT_INVALID_ARGUMENT, who + "input " + std::to_string(i) + " is no tensor");
    if (!t.node()->is_input())
      throw Error(DLRT_INVALID_ARGUMENT, who + "input " + std::to_string(i) + " is the output of " +
                                             layer_label(*t.node()) + ", shape " +
                                             shape_string(t.shape()) + "; expected an nn::Input");
    if (!input_slot.emplace(t.node().get(), i).second)
      throw Error(DLRT_INVALID_ARGUMENT, who + "input " + std::to_string(i) + " (" +
                                             shape_string(t.shape()) + ") is given twice");
    g.inputs.push_back(t.shape());
    const int n = counts["input"]++;
    g.input_names.push_back(n == 0 ? "input" : "input_" + std::to_string(n));
  }

  // Depth-first from every output: state 1 = on the current path, 2 = done. A node met again
  // while on the path closes a cycle.
  std::map<const Node*, int> state;
  std::vector<const Node*> found;  // every layer node the outputs need, inputs first
  struct Frame {
    const Node* node;
    size_t next;  // the next input to visit
  };
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (!outputs[o].valid())
      throw Error(DLRT_INVALID_ARGUMENT, who + "output " + std::to_string(o) + " is no tensor");
    std::vector<Frame> stack = {{outputs[o].node().get(), 0}};
    while (!stack.empty()) {
      Frame& f = stack.back();
      const Node* n = f.node;
      if (f.next == 0) {
        int& st = state[n];
        if (st == 2) {
          stack.pop_back();
          continue;
        }
        if (n->is_input()) {
          if (input_slot.count(n) == 0)
            throw Error(DLRT_INVALID_ARGUMENT,
                        who + "output " + std::to_string(o) + " (" +
                            shape_string(outputs[o].shape()) + ") is not reachable from the " +
                            "model's inputs: it needs an Input " + shape_string(n->outputs.at(0)) +
                            " that is not among them (a tensor of another model's inputs?)");
          st = 2;
          stack.pop_back();
          continue;
        }
        st = 1;
      }
      if (f.next < n->inputs.size()) {
        const SymbolicTensor& in = n->inputs[f.next++];
        if (!in.valid())
          throw Error(DLRT_INVALID_ARGUMENT,
                      who + layer_label(*n) + " has an input that is no tensor");
        const Node* child = in.node().get();
        if (state[child] == 1)
          throw Error(DLRT_INVALID_ARGUMENT, who + "the graph has a cycle through " +
                                                 layer_label(*child) + " (output shape " +
                                                 shape_string(child->outputs.at(0)) +
                                                 "): a layer's output is among its own inputs");
        stack.push_back({child, 0});
        continue;
      }
      state[n] = 2;
      found.push_back(n);
      stack.pop_back();
    }
  }

  // Topological order, the earliest-made ready node first (Kahn's algorithm).
  std::map<const Node*, size_t> slot_of = input_slot;
  g.slot_shapes = g.inputs;
  std::map<const Layer*, size_t> layer_index;
  std::vector<size_t> calls;  // per layer: calls so far
  std::vector<bool> placed(found.size(), false);
  for (size_t done = 0; done < found.size(); ++done) {
    size_t pick = found.size();
    for (size_t k = 0; k < found.size(); ++k) {
      if (placed[k]) continue;
      bool ready = true;
      for (const SymbolicTensor& in : found[k]->inputs) ready &= slot_of.count(in.node().get()) > 0;
      if (ready && (pick == found.size() || found[k]->sequence < found[pick]->sequence)) pick = k;
    }
    // The walk above refused cycles, so some node is always ready.
    if (pick == found.size()) throw Error(DLRT_INTERNAL, who + "no node is ready to order");
    placed[pick] = true;
    const Node& n = *found[pick];
    auto [it, fresh] = layer_index.emplace(n.layer.get(), g.layers.size());
    if (fresh) {
      // A shared layer (Layer::call_shared) is the caller's object and keeps a name it has.
      std::shared_ptr<Layer> mine = n.shared_layer ? n.layer : n.layer->clone();
      if (!mine)
        throw Error(DLRT_INVALID_ARGUMENT, who + layer_label(n) + " does not override clone()");
      const int c = counts[mine->base_name()]++;
      if (!n.shared_layer || mine->name().empty())
        mine->set_name(c == 0 ? mine->base_name() : mine->base_name() + "_" + std::to_string(c));
      g.layers.push_back(std::move(mine));
      calls.push_back(0);
    }
    PlanNode p{it->second, {}, calls[it->second]++};
    for (const SymbolicTensor& in : n.inputs) {
      if (in.index() != 0)
        throw Error(DLRT_INVALID_ARGUMENT, who + layer_label(n) + " takes output " +
                                               std::to_string(in.index()) +
                                               " of a node; layers here have one output");
      p.inputs.push_back(slot_of.at(in.node().get()));
    }
    slot_of[&n] = g.inputs.size() + g.nodes.size();
    g.slot_shapes.push_back(n.outputs.at(0));
    g.nodes.push_back(std::move(p));
  }
  for (const SymbolicTensor& out : outputs) {
    if (out.index() != 0)
      throw Error(DLRT_INVALID_ARGUMENT, who + "an output is output " +
                                             std::to_string(out.index()) +
                                             " of a node; layers here have one output");
    g.outputs.push_back(slot_of.at(out.node().get()));
  }
  return g;
}

}  // namespace dlrt::nn::detail
