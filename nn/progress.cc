// progress.cc: Keras' Progbar lines and their formatters (dlrt/nn/progress.hpp).
#include "dlrt/nn/progress.hpp"

#if defined(_WIN32)
#include <io.h>  // _isatty
#else
#include <unistd.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dlrt::nn {

namespace progress {

std::string printf_string(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string values(const Logs& logs) {
  std::string out;
  for (const auto& [k, v] : logs)
    out += " - " + k + ":" + printf_string(std::fabs(v) > 1e-3 ? " %.4f" : " %.4e", v);
  return out;
}

std::string eta(double seconds) {
  const long s = static_cast<long>(seconds);  // '%d' % eta truncates
  char buf[64];
  if (seconds > 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s % 3600) / 60, s % 60);
  else if (seconds > 60) std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%lds", s);
  return buf;
}

std::string per_step(double seconds) {
  if (seconds >= 1 || seconds == 0) return printf_string(" %.0fs/step", seconds);
  if (seconds >= 1e-3) return printf_string(" %.0fms/step", seconds * 1e3);
  return printf_string(" %.0fus/step", seconds * 1e6);
}

std::string bar(int64_t current, int64_t target, int width) {
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

std::string step_line(int64_t current, int64_t target, double eta_seconds, const Logs& logs) {
  return bar(current, target) + " - ETA: " + eta(eta_seconds) + values(logs);
}

std::string epoch_line(int64_t target, double elapsed_seconds, const Logs& logs) {
  const double per = target > 0 ? elapsed_seconds / static_cast<double>(target) : 0.0;
  return bar(target, target) + printf_string(" - %.0fs", elapsed_seconds) + per_step(per) +
         values(logs);
}

}  // namespace progress

bool stdout_is_terminal() {
#if defined(_WIN32)
  return _isatty(_fileno(stdout)) != 0;
#else
  return isatty(STDOUT_FILENO) == 1;
#endif
}

void Progbar::epoch_header(const ProgressOptions& o, int64_t epoch, int64_t epochs) {
  if (o.verbose > 0)
    *o.out << "Epoch " << epoch + 1 << "/" << (o.epochs_total > 0 ? o.epochs_total : epochs) << "\n"
           << std::flush;
}

void Progbar::update(int64_t current, const Logs& logs) {
  if (o_.verbose != 1 || current >= target_) return;
  const double elapsed = seconds();
  const double eta =
      elapsed / static_cast<double>(current) * static_cast<double>(target_ - current);
  if (o_.terminal) {
    // On a terminal: redrawn in place, at most every 50 ms.
    if (current > 1 && elapsed - last_draw_ < 0.05) return;
    last_draw_ = elapsed;
    draw(progress::step_line(current, target_, eta, logs));
  } else {
    // Elsewhere: a plain line each time another 1/lines_per_epoch of the epoch is done.
    const int64_t every = std::max<int64_t>(1, target_ / std::max(1, o_.lines_per_epoch));
    if (current % every != 0) return;
    *o_.out << progress::step_line(current, target_, eta, logs) << "\n" << std::flush;
  }
}

void Progbar::finish(const Logs& logs) {
  if (o_.verbose == 0) return;
  const std::string line = progress::epoch_line(target_, seconds(), logs);
  if (o_.verbose == 1 && o_.terminal) {
    draw(line);
    *o_.out << "\n" << std::flush;
  } else {
    *o_.out << line << "\n" << std::flush;
  }
}

// '\r' and the line, padded with spaces over a longer previous one.
void Progbar::draw(const std::string& line) {
  std::string text = "\r" + line;
  if (line.size() < drawn_) text += std::string(drawn_ - line.size(), ' ');
  drawn_ = line.size();
  *o_.out << text << std::flush;
}

}  // namespace dlrt::nn
