// text_data.cc: TextCorpus and byte-level text data (dlrt/nn/text_data.hpp).
#include "dlrt/nn/text_data.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>

namespace dlrt::nn {

TextCorpus TextCorpus::from_string(const std::string& text) {
  return TextCorpus(std::vector<uint8_t>(text.begin(), text.end()));
}

TextCorpus TextCorpus::read(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st))
    throw Error(DLRT_NOT_FOUND, "TextCorpus::read: '" + path + "' does not exist");
  std::vector<uint8_t> bytes;
  if (fs::is_directory(st)) {
    std::vector<std::string> files;
    for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
      const std::string name = e.path().filename().string();
      if (name.empty() || name[0] == '.') continue;
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".dat") == 0) continue;
      if (e.is_symlink(ec) || !e.is_regular_file(ec)) continue;
      files.push_back(e.path().string());
    }
    if (ec)
      throw Error(DLRT_INVALID_ARGUMENT,
                  "TextCorpus::read: cannot list '" + path + "': " + ec.message());
    std::sort(files.begin(), files.end());
    for (const std::string& f : files) append_file(f, bytes);
    if (bytes.empty())
      throw Error(DLRT_INVALID_ARGUMENT,
                  "TextCorpus::read: the folder '" + path +
                      "' holds no non-empty regular file (hidden files, *.dat and symlinks "
                      "are skipped); expected text files");
  } else {
    append_file(path, bytes);
    if (bytes.empty())
      throw Error(DLRT_INVALID_ARGUMENT,
                  "TextCorpus::read: '" + path + "' is empty; expected at least one byte");
  }
  return TextCorpus(std::move(bytes));
}

std::pair<TextCorpus, TextCorpus> TextCorpus::split(double validation_fraction) const {
  if (!(validation_fraction > 0.0 && validation_fraction < 1.0))
    throw Error(DLRT_INVALID_ARGUMENT, "TextCorpus::split: validation_fraction is " +
                                           std::to_string(validation_fraction) +
                                           "; expected a value in (0, 1)");
  const auto cut =
      static_cast<size_t>(static_cast<double>(bytes_.size()) * (1.0 - validation_fraction) + 0.5);
  if (cut == 0 || cut >= bytes_.size())
    throw Error(DLRT_INVALID_ARGUMENT, "TextCorpus::split: " + std::to_string(bytes_.size()) +
                                           " bytes are too few to split at " +
                                           std::to_string(validation_fraction));
  return {TextCorpus(std::vector<uint8_t>(bytes_.begin(), bytes_.begin() + cut)),
          TextCorpus(std::vector<uint8_t>(bytes_.begin() + cut, bytes_.end()))};
}

TextWindows TextCorpus::windows(int64_t T, int64_t n, uint64_t seed) const {
  check_window(T, "windows");
  if (n < 1)
    throw Error(DLRT_INVALID_ARGUMENT,
                "TextCorpus::windows: n is " + std::to_string(n) + "; expected >= 1");
  const uint64_t starts = static_cast<uint64_t>(size() - T);  // offsets 0..size-T-1
  std::vector<int64_t> offsets(static_cast<size_t>(n));
  uint64_t state = splitmix64(seed ^ 0x7e47c0a95ull);
  for (int64_t i = 0; i < n; ++i) {
    state = splitmix64(state);
    offsets[static_cast<size_t>(i)] = static_cast<int64_t>(state % starts);
  }
  return gather_windows(T, offsets);
}

TextWindows TextCorpus::sequential_windows(int64_t T) const {
  check_window(T, "sequential_windows");
  std::vector<int64_t> offsets;
  for (int64_t s = 0; s + T + 1 <= size(); s += T) offsets.push_back(s);
  return gather_windows(T, offsets);
}

std::vector<int32_t> TextCorpus::encode(const std::string& text) {
  std::vector<int32_t> ids;
  ids.reserve(text.size());
  for (unsigned char c : text) ids.push_back(static_cast<int32_t>(c));
  return ids;
}

std::string TextCorpus::decode(const std::vector<int32_t>& ids) {
  std::string out;
  out.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id >= kVocabSize)
      throw Error(DLRT_INVALID_ARGUMENT, "TextCorpus::decode: id " + std::to_string(id) +
                                             " is not a byte; expected 0..255");
    out.push_back(static_cast<char>(static_cast<unsigned char>(id)));
  }
  return out;
}

void TextCorpus::append_file(const std::string& path, std::vector<uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(DLRT_NOT_FOUND, "TextCorpus::read: cannot open '" + path + "' for reading");
  out.insert(out.end(), std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad())
    throw Error(DLRT_INVALID_ARGUMENT, "TextCorpus::read: reading '" + path + "' failed");
}

void TextCorpus::check_window(int64_t T, const char* what) const {
  if (T < 1)
    throw Error(DLRT_INVALID_ARGUMENT, std::string("TextCorpus::") + what + ": T is " +
                                           std::to_string(T) + "; expected >= 1");
  if (size() < T + 1)
    throw Error(DLRT_INVALID_ARGUMENT,
                std::string("TextCorpus::") + what + ": the corpus has " + std::to_string(size()) +
                    " bytes, fewer than one window of T = " + std::to_string(T) +
                    " plus its next-byte target (" + std::to_string(T + 1) + ")");
}

TextWindows TextCorpus::gather_windows(int64_t T, const std::vector<int64_t>& offsets) const {
  const auto n = static_cast<int64_t>(offsets.size());
  std::vector<int32_t> x(static_cast<size_t>(n * T)), y(static_cast<size_t>(n * T));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t t = 0; t < T; ++t) {
      const auto at = static_cast<size_t>(offsets[static_cast<size_t>(i)] + t);
      x[static_cast<size_t>(i * T + t)] = bytes_[at];
      y[static_cast<size_t>(i * T + t)] = bytes_[at + 1];
    }
  return {Array::of<int32_t>({n, T}, x), Array::of<int32_t>({n, T}, y)};
}

}  // namespace dlrt::nn
