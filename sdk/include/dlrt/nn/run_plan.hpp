// dlrt/nn/run_plan.hpp: a compiled model's plan (plan.hpp) built into a graph — every layer
// call of the plan as ops on graph Values, over variables the caller owns (a Session's, or a
// custom step's copy). Namespace nn::detail: Session (session.hpp) and TrainStep's Tape
// (tape.hpp) build through it; users go through Sequential, Model and TrainStep.
#ifndef DLRT_NN_RUN_PLAN_HPP_
#define DLRT_NN_RUN_PLAN_HPP_

#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/layer.hpp"
#include "dlrt/nn/plan.hpp"

namespace dlrt::nn::detail {

inline bool is_float_dtype(dlrt_dtype d) {
  return d == DLRT_F32 || d == DLRT_F16 || d == DLRT_BF16;
}
// v cast to `to` when it is a float of another dtype; anything else as it is.
Value cast_float_to(Graph& g, Value v, dlrt_dtype to);

// The model's outputs (every Plan::outputs slot, in order) on `inputs` (one per plan input):
// every node in order, each on its input slots, with the variables `vars` (indexed as
// Plan::state; only the layers' entries are read). A shared layer's later calls get their
// own node-name scope ("train/call_1/") and seed (so a shared Dropout draws another mask),
// and the same variables. Sessions and custom steps (train_step.hpp) build through this.
// Under a mixed-precision policy (Plan::compute_dtype) each call's float inputs and weights
// are cast to its layer's compute dtype first, and the model's float outputs back to f32.
std::vector<Value> run_plan(const Plan& plan, CallContext& c, std::vector<Value> inputs,
                            const std::vector<Value>& vars);

// Pushes a Plan's device scopes for as long as it lives.
class Scopes {
 public:
  Scopes(Graph& g, const std::vector<std::string>& specs);
  ~Scopes();

 private:
  std::vector<std::unique_ptr<dlrt::DeviceScope>> scopes_;
};

}  // namespace dlrt::nn::detail

#endif  // DLRT_NN_RUN_PLAN_HPP_
