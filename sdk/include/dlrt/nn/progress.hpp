// dlrt/nn/progress.hpp: Keras' progress output (tf.keras.utils.Progbar), character for
// character where Keras defines it:
//
//   Epoch 1/5
//   120/938 [==>...........................] - ETA: 41s - loss: 0.6123 - accuracy: 0.7770
//   938/938 [==============================] - 12s 13ms/step - loss: 0.5012 - accuracy: 0.8181 - val_loss: 0.3900 - val_accuracy: 0.8605
//
// The step counter is "%<digits of target>d/target"; the bar is 30 wide; a value prints as
// " %.4f", or " %.4e" when |v| <= 1e-3; the ETA is "%ds", "%d:%02d" past a minute,
// "%d:%02d:%02d" past an hour; the epoch line gives the elapsed " - %.0fs" and the time per
// step in s, ms or us.
// On a terminal (isatty) the step line is redrawn in place with '\r' (at most every 50 ms),
// padded with spaces over a longer previous line. Elsewhere (a log file, CTest) a plain line
// is printed each time another tenth of the epoch is done, then the epoch line.
// The formatters are pure functions, so tests check them without a clock.
#ifndef DLRT_NN_PROGRESS_HPP_
#define DLRT_NN_PROGRESS_HPP_

#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace dlrt::nn {

// Named values in display order: {{"loss", 0.61}, {"accuracy", 0.77}}.
using Logs = std::vector<std::pair<std::string, double>>;

namespace progress {

// printf of one double: printf_string(" %.4f", 0.5) == " 0.5000".
std::string printf_string(const char* fmt, double v);
// " - loss: 0.6123 - accuracy: 0.7770"
std::string values(const Logs& logs);
// "41s", "1:15", "1:02:05": '%d' % eta, truncated.
std::string eta(double seconds);
// " 13ms/step"
std::string per_step(double seconds);
// "120/938 [==>...........................]"
std::string bar(int64_t current, int64_t target, int width = 30);
// A line during the epoch: the bar, the ETA, the running values.
std::string step_line(int64_t current, int64_t target, double eta_seconds, const Logs& logs);
// The line that closes an epoch.
std::string epoch_line(int64_t target, double elapsed_seconds, const Logs& logs);

}  // namespace progress

// Whether standard output is a terminal (isatty): ProgressOptions::terminal's default.
bool stdout_is_terminal();

// Where progress goes and how: verbose 0 silent, 1 bar (redrawn on a terminal, periodic lines
// elsewhere), 2 one line per epoch.
struct ProgressOptions {
  int verbose = 1;
  bool terminal = stdout_is_terminal();
  int lines_per_epoch = 10;  // plain lines printed per epoch when not on a terminal
  std::ostream* out = &std::cout;
  // The total in "Epoch e/N" (0: FitOptions.epochs). A loop that calls fit once per epoch
  // (fresh data each time, as samples/char_transformer) gives its own total here.
  int64_t epochs_total = 0;
};

class Progbar {
 public:
  Progbar(int64_t target, ProgressOptions options)
      : target_(target), o_(std::move(options)), start_(Clock::now()) {}

  static void epoch_header(const ProgressOptions& o, int64_t epoch, int64_t epochs);

  // After step `current` (1-based) with the running values.
  void update(int64_t current, const Logs& logs);

  // The epoch line, with the epoch's values (validation ones included).
  void finish(const Logs& logs);

  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  void draw(const std::string& line);

  int64_t target_;
  ProgressOptions o_;
  Clock::time_point start_;
  double last_draw_ = -1.0;
  size_t drawn_ = 0;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_PROGRESS_HPP_
