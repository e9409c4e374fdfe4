// torch_run.hpp: what `dlbench train` needs to run a PyTorch twin beside dlrt and to time a
// fit — the step timer callback, the venv with torch, and running a script for its JSON.
#pragma once

#include <dlrt/nn.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "bench.hpp"
#include "shell.hpp"  // own_dir

namespace dlbench {

// Thrown by the warm-up callback to end fit after K steps (nn has no stop_training flag). fit
// leaves the model usable: the step ran completely, and epoch() stays 0.
struct WarmupDone {};

// Records when fit finished its set-up, each step's end and each epoch's span.
class Timer : public dlrt::nn::Callback {
 public:
  explicit Timer(int64_t stop_after) : stop_after_(stop_after) {}
  double fit_called = 0, train_begin = 0;
  std::vector<double> epoch_us, step_us;

  // The Model& hooks: fit calls them for every kind of model (Sequential and functional).
  void on_train_begin(dlrt::nn::Model&) override { train_begin = now_us(); }
  void on_epoch_begin(dlrt::nn::Model&, int64_t) override { last_ = epoch_start_ = now_us(); }
  void on_train_batch_end(dlrt::nn::Model&, int64_t batch, const dlrt::nn::Logs&) override {
    const double t = now_us();
    step_us.push_back(t - last_);
    last_ = t;
    if (stop_after_ > 0 && batch + 1 >= stop_after_) throw WarmupDone{};
  }
  void on_epoch_end(dlrt::nn::Model&, int64_t, const dlrt::nn::Logs&) override {
    epoch_us.push_back(now_us() - epoch_start_);
  }

 private:
  int64_t stop_after_;
  double last_ = 0, epoch_start_ = 0;
};

// Runs `cmd` and returns its stdout; throws naming the command when it fails.
std::string run_command(const std::string& cmd);
// Runs a twin's command line and parses the one JSON object it prints; throws naming the
// script and the start of what it printed instead.
json run_twin_json(const std::string& cmd, const std::string& script_name);
// The same, for one mode of a twin (eager, channels_last, compile) inside a timed run: a twin
// that fails (torch.compile missing from an old torch, or failing on this model or machine)
// does not end the run. Returns its JSON with "mode" added, or {"mode", "unavailable": why}
// where why is the end of what it printed on stderr and its exit status. Its stderr is
// passed on to dlbench's when it succeeds.
json run_twin_mode(const std::string& cmd, const std::string& script_name, const std::string& mode);
// The fastest available anchor of `anchors` (mode -> {"step_seconds"} or {"unavailable"}):
// its mode, or "" when none ran.
std::string best_anchor(const json& anchors);
// `s` in single quotes for sh.
std::string quoted(const std::string& s);
// With --torch-venv DIR: DIR/bin/python3, made a venv with torch first when it lacks it;
// else --python as given.
std::string torch_python(const TrainOptions& o);
// Checks that o.python imports torch and that `script_name` is next to dlbench; returns its
// path. Called before dlrt trains, so a missing torch costs no wait.
std::filesystem::path check_torch(const TrainOptions& o, const std::string& script_name);

}  // namespace dlbench
