// variable_store.hpp: the storage of a graph's variables. A variable is placed once (the first
// compile that uses it, or the first read/write) and keeps that device and buffer for the
// graph's life, so every executable of the graph shares it.
#pragma once

#include <cstddef>
#include <map>
#include <optional>

#include "graph/graph.hpp"
#include "memory/arena.hpp"

namespace dlrt::core {

struct VariableSlot {
  size_t device = 0;  // registry index
  Buffer buffer;      // dense bytes of the variable's TensorType, from the device's arena
  bool initialized = false;
};

class VariableStore {
 public:
  explicit VariableStore(Graph& graph) : graph_(&graph) {}

  // The slot of variable node `id`, or nullopt when not placed yet.
  VariableSlot* find(NodeId id);
  // Place variable `id` on `device` (allocates its buffer) and initialise it by running its
  // init op there. FAILED_PRECONDITION if it is already placed elsewhere.
  VariableSlot& place_and_init(NodeId id, size_t device);
  // Place on its requested device (NOT_FOUND when no device matches it), else the first device
  // by class (GPU, ACCEL, CPU; then registry order) whose plugin supports its init op.
  VariableSlot& ensure(NodeId id);

 private:
  Graph* graph_;
  std::map<NodeId, VariableSlot> slots_;
};

}  // namespace dlrt::core
