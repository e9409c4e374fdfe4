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

#include <cstdint>
#include <string>
#include <utility>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/callbacks.hpp"
#include "dlrt/nn/model.hpp"

namespace dlrt::nn {

inline constexpr const char* kCheckpointFormat = "dlrt.nn/1";

// Model::save_weights and Model::load_weights (declared in model.hpp) are defined in
// libdlrt_nn (nn/checkpoint.cc).

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
