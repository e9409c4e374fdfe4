// session.hpp: Session, the object behind dlrt_session: an OnnxModel plus a bounded cache of
// compiled specialisations, one per set of input shapes (graph + executable).
#pragma once

#include <dlrt/dlrt.h>
#include <dlrt/graph.hpp>

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "onnx_import/host_tensor.hpp"
#include "onnx_import/importer.hpp"
#include "onnx_import/model.hpp"

namespace dlrt::onnx_import {

struct SessionOptions {
  std::string device;  // "" / "auto": auto placement; else a spec every op requests
  int32_t soft_placement = -1;
  int32_t log_device_placement = -1;
  size_t max_cached_shapes = 8;
  bool optimize = true;
};

class Session {
 public:
  // Imports and compiles once for the model's own dims (symbolic ones as 1), so a model dlrt
  // cannot run fails here, naming the node.
  Session(dlrt_context* context, OnnxModel model, SessionOptions options);

  const OnnxModel& model() const { return model_; }
  // inputs in model().inputs order; outputs in model().outputs order (NULL slots filled).
  void run(const dlrt_tensor* const* inputs, size_t num_inputs, dlrt_tensor** outputs,
           size_t num_outputs);
  dlrt_executable* last_executable() const { return last_ == nullptr ? nullptr : last_->exe.get(); }
  size_t cached_shapes() const { return cache_.size(); }

 private:
  struct Specialisation {
    std::vector<std::vector<int64_t>> dims;  // per input
    InputValues values;                      // per input: set for value inputs
    std::vector<size_t> fed;                 // the inputs the executable is fed, in order
    std::unique_ptr<dlrt::Graph> graph;
    dlrt::Executable exe;
  };
  // The cached or new specialisation; NeedsInputValue when an input not yet known to be a
  // value input turns out to be one.
  Specialisation& specialise(const std::vector<std::vector<int64_t>>& dims, const InputValues& values);
  // Marks input `n.input` as a value input, or fails UNIMPLEMENTED when it cannot be one.
  void mark_value_input(const NeedsInputValue& n);

  std::vector<bool> value_inputs_;  // per model input

  dlrt_context* context_;
  OnnxModel model_;
  SessionOptions options_;
  std::list<Specialisation> cache_;  // most recently used first
  Specialisation* last_ = nullptr;
};

}  // namespace dlrt::onnx_import
