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

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace dlrt::nn {

// Named values in display order: {{"loss", 0.61}, {"accuracy", 0.77}}.
using Logs = std::vector<std::pair<std::string, double>>;

namespace progress {

inline std::string printf_string(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// " - loss: 0.6123 - accuracy: 0.7770"
inline std::string values(const Logs& logs) {
  std::string out;
  for (const auto& [k, v] : logs)
    out += " - " + k + ":" + printf_string(std::fabs(v) > 1e-3 ? " %.4f" : " %.4e", v);
  return out;
}

inline std::string eta(double seconds) {
  const long s = static_cast<long>(seconds);  // '%d' % eta truncates
  char buf[64];
  if (seconds > 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s % 3600) / 60, s % 60);
  else if (seconds > 60) std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%lds", s);
  return buf;
}

// " 13ms/step"
inline std::string per_step(double seconds) {
  if (seconds >= 1 || seconds == 0) return printf_string(" %.0fs/step", seconds);
  if (seconds >= 1e-3) return printf_string(" %.0fms/step", seconds * 1e3);
  return printf_string(" %.0fus/step", seconds * 1e6);
}

// "120/938 [==>...........................]"
inline std::string bar(int64_t current, int64_t target, int width = 30) {
  const int digits =
      target > 0 ? static_cast<int>(std::floor(std::log10(static_cast<double>(target)))) + 1 : 1;
  char head[64];
  std::snprintf(head, sizeof head, "%*lld/%lld [", digits, static_cast<long long>(current),
                static_cast<long long>(target));
  std::string out = head;
  const int filled =
      target > 0
          ? static_cast<int>(width * static_cast<double>(current) / static_cast<double>(target))
          : width;
  if (filled > 0) {
    out += std::string(static_cast<size_t>(filled - 1), '=');
    out += current < target ? '>' : '=';
  }
  out += std::string(static_cast<size_t>(width > filled ? width - filled : 0), '.');
  return out + "]";
}

// A line during the epoch: the bar, the ETA, the running values.
inline std::string step_line(int64_t current, int64_t target, double eta_seconds,
                             const Logs& logs) {
  return bar(current, target) + " - ETA: " + eta(eta_seconds) + values(logs);
}

// The line that closes an epoch.
inline std::string epoch_line(int64_t target, double elapsed_seconds, const Logs& logs) {
  const double per = target > 0 ? elapsed_seconds / static_cast<double>(target) : 0.0;
  return bar(target, target) + printf_string(" - %.0fs", elapsed_seconds) + per_step(per) +
         values(logs);
}

}  // namespace progress

// Where progress goes and how: verbose 0 silent, 1 bar (redrawn on a terminal, periodic lines
// elsewhere), 2 one line per epoch.
struct ProgressOptions {
  int verbose = 1;
  bool terminal = isatty(STDOUT_FILENO) == 1;
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

  static void epoch_header(const ProgressOptions& o, int64_t epoch, int64_t epochs) {
    if (o.verbose > 0)
      *o.out << "Epoch " << epoch + 1 << "/" << (o.epochs_total > 0 ? o.epochs_total : epochs)
             << "\n"
             << std::flush;
  }

  // After step `current` (1-based) with the running values.
  void update(int64_t current, const Logs& logs) {
    if (o_.verbose != 1 || current >= target_) return;
    const double elapsed = seconds();
    const double eta =
        elapsed / static_cast<double>(current) * static_cast<double>(target_ - current);
    if (o_.terminal) {
      if (current > 1 && elapsed - last_draw_ < 0.05) return;
      last_draw_ = elapsed;
      draw(progress::step_line(current, target_, eta, logs));
    } else {
      const int64_t every = std::max<int64_t>(1, target_ / std::max(1, o_.lines_per_epoch));
      if (current % every != 0) return;
      *o_.out << progress::step_line(current, target_, eta, logs) << "\n" << std::flush;
    }
  }

  // The epoch line, with the epoch's values (validation ones included).
  void finish(const Logs& logs) {
    if (o_.verbose == 0) return;
    const std::string line = progress::epoch_line(target_, seconds(), logs);
    if (o_.verbose == 1 && o_.terminal) {
      draw(line);
      *o_.out << "\n" << std::flush;
    } else {
      *o_.out << line << "\n" << std::flush;
    }
  }

  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  void draw(const std::string& line) {
    std::string text = "\r" + line;
    if (line.size() < drawn_) text += std::string(drawn_ - line.size(), ' ');
    drawn_ = line.size();
    *o_.out << text << std::flush;
  }

  int64_t target_;
  ProgressOptions o_;
  Clock::time_point start_;
  double last_draw_ = -1.0;
  size_t drawn_ = 0;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_PROGRESS_HPP_
