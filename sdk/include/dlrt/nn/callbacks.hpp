// dlrt/nn/callbacks.hpp: hooks into fit() — the Callback base, History and CSVLogger.
// ModelCheckpoint, which needs the whole model, is in nn/checkpoint.hpp.
//
// Order within fit (as Keras): on_train_begin; per epoch on_epoch_begin, on_train_batch_end
// after every step (logs: the epoch's running loss and metrics), on_epoch_end (logs: the
// epoch's loss and metrics, then val_* when there is validation data); on_train_end.
// Epochs are 0-based in callbacks, as in Keras (the progress line prints epoch + 1).
#ifndef DLRT_NN_CALLBACKS_HPP_
#define DLRT_NN_CALLBACKS_HPP_

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/progress.hpp"

namespace dlrt::nn {

class Model;
class Sequential;

// Each hook comes twice: fit() calls the Model& one for every model, and for a Sequential
// also the Sequential& one (what callbacks were written against before functional models).
// Override one of the two: a callback for any model overrides the Model& hooks.
class Callback {
 public:
  virtual ~Callback() = default;
  virtual void on_train_begin(Model&) {}
  virtual void on_epoch_begin(Model&, int64_t /*epoch*/) {}
  virtual void on_train_batch_end(Model&, int64_t /*batch*/, const Logs&) {}
  virtual void on_epoch_end(Model&, int64_t /*epoch*/, const Logs&) {}
  virtual void on_train_end(Model&) {}
  virtual void on_train_begin(Sequential&) {}
  virtual void on_epoch_begin(Sequential&, int64_t /*epoch*/) {}
  virtual void on_train_batch_end(Sequential&, int64_t /*batch*/, const Logs&) {}
  virtual void on_epoch_end(Sequential&, int64_t /*epoch*/, const Logs&) {}
  virtual void on_train_end(Sequential&) {}
  // Under a multi-worker strategy, chief-only callbacks (files: checkpoints, CSV logs) run on
  // rank 0 alone; the others run on every rank.
  virtual bool chief_only() const { return false; }
};

// What fit returns: every epoch's logs by name (Keras' History.history).
struct History {
  std::vector<int64_t> epoch;                          // 0-based epochs run
  std::map<std::string, std::vector<double>> history;  // "loss" -> one value per epoch

  void append(int64_t e, const Logs& logs);
  // The last value of `key`; NOT_FOUND when it was never logged.
  double last(const std::string& key) const;
};

namespace detail {
// Python's repr of a float: the shortest text that reads back as the same double, which is
// what Keras' CSVLogger writes ("0.8181166648864746", "1e-05").
std::string python_repr(double v);
}  // namespace detail

// Keras' CSVLogger: a header "epoch,<keys sorted>" (accuracy,loss,val_accuracy,val_loss), then
// one row per epoch: the 0-based epoch and each value as Python's repr. Rows end in "\r\n"
// (Python's csv excel dialect, which Keras uses). append: keep an existing file and add rows
// (the header only when the file was empty), for resumed runs.
class CSVLogger : public Callback {
 public:
  explicit CSVLogger(std::string filename, char separator = ',', bool append = false)
      : filename_(std::move(filename)), sep_(separator), append_(append) {}

  void on_train_begin(Model&) override;
  void on_epoch_end(Model&, int64_t epoch, const Logs& logs) override;
  void on_train_end(Model&) override { file_.close(); }
  bool chief_only() const override { return true; }

 private:
  std::string filename_;
  char sep_;
  bool append_;
  bool header_written_ = false;
  std::ofstream file_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_CALLBACKS_HPP_
