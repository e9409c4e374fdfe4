// callbacks.cc: History and CSVLogger (dlrt/nn/callbacks.hpp).
#include "dlrt/nn/callbacks.hpp"

#include <algorithm>
#include <charconv>

namespace dlrt::nn {

void History::append(int64_t e, const Logs& logs) {
  epoch.push_back(e);
  for (const auto& [k, v] : logs) history[k].push_back(v);
}

double History::last(const std::string& key) const {
  auto it = history.find(key);
  if (it == history.end() || it->second.empty())
    throw Error(DLRT_NOT_FOUND, "History: no values for '" + key + "'");
  return it->second.back();
}

namespace detail {
std::string python_repr(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";  // 1 -> "1.0", as Python
  return s;
}
}  // namespace detail

void CSVLogger::on_train_begin(Model&) {
  bool has_rows = false;
  if (append_) {
    std::ifstream in(filename_, std::ios::binary);
    has_rows = in.good() && in.peek() != std::ifstream::traits_type::eof();
  }
  file_.open(filename_, std::ios::binary | (append_ ? std::ios::app : std::ios::trunc));
  if (!file_)
    throw Error(DLRT_INVALID_ARGUMENT, "CSVLogger: cannot open '" + filename_ + "' for writing");
  header_written_ = has_rows;
}

void CSVLogger::on_epoch_end(Model&, int64_t epoch, const Logs& logs) {
  Logs sorted = logs;
  std::sort(sorted.begin(), sorted.end());
  if (!header_written_) {
    file_ << "epoch";
    for (const auto& kv : sorted) file_ << sep_ << kv.first;
    file_ << "\r\n";
    header_written_ = true;
  }
  file_ << epoch;
  for (const auto& kv : sorted) file_ << sep_ << detail::python_repr(kv.second);
  file_ << "\r\n" << std::flush;
  if (!file_) throw Error(DLRT_DATA_LOSS, "CSVLogger: writing '" + filename_ + "' failed");
}

}  // namespace dlrt::nn
