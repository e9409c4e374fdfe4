// dlrt/nn/checkpoint.hpp: Model::save_weights / load_weights and the ModelCheckpoint
// callback, over safetensors (dlrt::write_safetensors, dlrt::SafeTensors).
//
// A checkpoint holds every state variable of the model as an F32 tensor under its variable's
// name — the weights ("conv2d/kernel"), the optimizer slots ("conv2d/kernel/m") and the step
// count ("optimizer/iterations", a scalar) — and in __metadata__:
//   format "dlrt.nn/1", model (its name), epoch (epochs completed), step (optimizer steps
//   done), seed (the model seed: shuffles and dropout masks derive from it), optimizer (its
//   Keras-style config) and loss.
// The file is written to a temporary file in the same folder, fsynced and renamed, so a crash
// leaves the old checkpoint or the new one, never half of one.
// Resuming: load_weights restores every variable, epoch() and the seed; fit with
// initial_epoch = model.epoch() then replays the exact batches (data.hpp's epoch_order) and
// updates an uninterrupted run would have made.
#ifndef DLRT_NN_CHECKPOINT_HPP_
#define DLRT_NN_CHECKPOINT_HPP_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/callbacks.hpp"
#include "dlrt/nn/model.hpp"

namespace dlrt::nn {

inline constexpr const char* kCheckpointFormat = "dlrt.nn/1";

inline void Model::save_weights(const std::string& path) {
  const std::vector<NamedValue> values = state();
  std::vector<SafeTensorView> tensors;
  for (const NamedValue& v : values)
    tensors.push_back({v.name, DLRT_F32, v.dims, v.values.data(), v.values.size() * sizeof(float)});
  const float steps =
      plan_->iterations == detail::kNoStateVar ? 0.f : values[plan_->iterations].values.at(0);
  write_safetensors(path, tensors,
                    {{"format", kCheckpointFormat},
                     {"model", name_},
                     {"epoch", std::to_string(epoch_)},
                     {"step", std::to_string(static_cast<int64_t>(steps))},
                     {"seed", std::to_string(config_.seed)},
                     {"optimizer", optimizer_ ? optimizer_->config() : "none"},
                     {"loss", loss_ ? loss_->name() : "none"}});
}

inline void Model::load_weights(const std::string& path) {
  plan();  // the model must be built: the file is checked against its variables
  const SafeTensors file = SafeTensors::open(path);
  auto meta = file.metadata("format");
  if (meta && *meta != kCheckpointFormat)
    throw Error(DLRT_INVALID_ARGUMENT, "load_weights: '" + path + "' has format '" + *meta +
                                           "'; expected '" + kCheckpointFormat + "'");
  std::vector<NamedValue> values;
  for (const SafeTensorView& t : file.entries()) {
    if (t.dtype != DLRT_F32)
      throw Error(DLRT_INVALID_ARGUMENT, "load_weights: '" + path + "': tensor '" + t.name +
                                             "' is " + dtype_name(t.dtype) + "; expected f32");
    NamedValue v{t.name, t.dims, std::vector<float>(t.bytes / sizeof(float))};
    if (!v.values.empty()) std::memcpy(v.values.data(), t.data, v.values.size() * sizeof(float));
    values.push_back(std::move(v));
  }
  // With DLRT_CHECK_NUMERICS on, a NaN or Inf in the file is refused before anything is
  // written (the model keeps its values), naming the tensor and the element.
  bool check_numerics = false;
  for (const Setting& s : ctx_.settings())
    if (s.name == "DLRT_CHECK_NUMERICS") check_numerics = s.value == "1";
  if (check_numerics)
    for (const NamedValue& v : values)
      for (size_t i = 0; i < v.values.size(); ++i)
        if (!std::isfinite(v.values[i]))
          throw Error(DLRT_INVALID_ARGUMENT,
                      "load_weights: '" + path + "': tensor '" + v.name + "' holds " +
                          (std::isnan(v.values[i]) ? "NaN" : "Inf") + " at element " +
                          std::to_string(i) + " of " + std::to_string(v.values.size()) +
                          " (DLRT_CHECK_NUMERICS is on); nothing was loaded");
  // Every trainable weight must be there; slots and the step count may be absent (a file of
  // weights only), and then keep their values.
  for (const detail::StateVar& s : plan_->state) {
    if (!s.weight) continue;  // frozen layers' weights too
    bool found = false;
    for (const NamedValue& v : values) found |= v.name == s.name;
    if (!found)
      throw Error(DLRT_INVALID_ARGUMENT, "load_weights: '" + path + "' has no tensor '" + s.name +
                                             "' " + dims_string(s.dims) + ", a weight of " + name_);
  }
  set_state(values);  // refuses unknown names and wrong shapes, naming them
  auto parse = [&](const char* key, int64_t fallback) -> int64_t {
    auto text = file.metadata(key);
    if (!text) return fallback;
    try {
      size_t used = 0;
      const long long v = std::stoll(*text, &used);
      if (used == text->size() && v >= 0) return v;
    } catch (const std::exception&) {
    }
    throw Error(DLRT_DATA_LOSS, "load_weights: '" + path + "': metadata " + key + " = '" + *text +
                                    "' is not a non-negative integer");
  };
  epoch_ = parse("epoch", 0);
  if (file.metadata("seed")) {
    auto seed_text = *file.metadata("seed");
    try {
      size_t used = 0;
      const unsigned long long s = std::stoull(seed_text, &used);
      if (used != seed_text.size()) throw std::invalid_argument("trailing");
      config_.seed = s;
      plan_->seed = s;
    } catch (const std::exception&) {
      throw Error(DLRT_DATA_LOSS, "load_weights: '" + path + "': metadata seed = '" + seed_text +
                                      "' is not an unsigned integer");
    }
  }
}

// Keras' ModelCheckpoint (save_freq "epoch", weights and optimizer state): after every epoch
// the model's whole state goes to `filepath` (replaced atomically). A failure to write throws
// out of fit, as Keras raises: training that cannot be checkpointed stops.
class ModelCheckpoint : public Callback {
 public:
  explicit ModelCheckpoint(std::string filepath) : filepath_(std::move(filepath)) {}
  void on_epoch_end(Model& model, int64_t, const Logs&) override { model.save_weights(filepath_); }
  bool chief_only() const override { return true; }  // rank 0 writes; the others match it

 private:
  std::string filepath_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_CHECKPOINT_HPP_
