// variable_store.hpp: the storage of a graph's variables. A variable is placed once (the first
// compile that uses it, or the first read/write) and keeps that device and buffer for the
// graph's life, so every executable of the graph shares it.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <utility>

#include "graph/graph.hpp"
#include "memory/arena.hpp"

namespace dlrt::core {

// The device bytes of one variable, given back to the device when the slot goes. Move-only.
// Interim: taken from the plugin directly (mem_alloc/mem_free) until the memory arena lands;
// then this becomes the arena's core::Buffer (Context's arena of the device), and code that
// uses data()/size() does not change.
class VariableBuffer {
 public:
  VariableBuffer() = default;
  // Adopts `data` (`size` bytes from api->mem_alloc on `device`).
  VariableBuffer(const dlrt_plugin_api* api, dlrt_device* device, void* data, size_t size)
      : api_(api), device_(device), data_(data), size_(size) {}
  VariableBuffer(VariableBuffer&& other) noexcept { *this = std::move(other); }
  VariableBuffer& operator=(VariableBuffer&& other) noexcept;
  VariableBuffer(const VariableBuffer&) = delete;
  VariableBuffer& operator=(const VariableBuffer&) = delete;
  ~VariableBuffer() { reset(); }

  void* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return data_ == nullptr; }
  void reset() noexcept;

 private:
  const dlrt_plugin_api* api_ = nullptr;
  dlrt_device* device_ = nullptr;
  void* data_ = nullptr;
  size_t size_ = 0;
};

struct VariableSlot {
  size_t device = 0;      // registry index
  VariableBuffer buffer;  // dense bytes of the variable's TensorType
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
