// dlrt/nn/text_data.hpp: a byte-level text corpus for language models: a file or a folder of
// files -> token ids, a train/validation split, and seeded random windows of length T.
// Header-only; reads files with the standard library, throws dlrt::Error as the rest of nn.
//
//   auto corpus = nn::TextCorpus::read("/usr/share/games/fortunes");   // 2.5 MB of English
//   auto [train, val] = corpus.split(0.1);                              // the last 10% is val
//   nn::TextWindows w = train.windows(128, 4096, seed);  // x, y: (4096, 128) i32, y = x shifted
//   model.fit(w.x, w.y, ...);                             // nn::Embedding takes the ids as given
//
// Tokens are bytes: the vocabulary is the 256 byte values (kVocabSize), so any file, UTF-8 or
// not, is a valid corpus (a multi-byte UTF-8 character is several tokens, as in byte-level
// GPT-2 before merges) and no id can fall outside an Embedding(256, d).
//
// Decisions, written down because the issue is silent on them:
// - A folder is read as its regular files (symlinks are skipped: Debian's fortunes has a
//   `name.u8 -> name` link beside every file, which would double the corpus), in byte order of
//   their names, without hidden files (".x") and strfile's binary indices ("*.dat"); the
//   files' bytes are concatenated as they are. Sub-folders are not entered.
// - split(f) keeps the text contiguous: the first (1-f) of the bytes train, the rest
//   validate (as nanoGPT and Karpathy's char-rnn do), so no window of one straddles the other.
// - windows(T, n, seed) draws n start offsets uniformly from [0, size-T-1] with splitmix64
//   keyed by the seed: window i is bytes [s_i, s_i+T) and its targets [s_i+1, s_i+T+1), so a
//   corpus needs at least T+1 bytes. The same (corpus, T, n, seed) gives the same windows in
//   every process; drawing a new seed per epoch gives fresh windows (samples/char_transformer).
// - sequential_windows(T) tiles the corpus without overlap (for a validation loss over all of
//   it, every byte predicted once except the last window's tail).
#ifndef DLRT_NN_TEXT_DATA_HPP_
#define DLRT_NN_TEXT_DATA_HPP_

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "dlrt/nn/data.hpp"

namespace dlrt::nn {

// x (n, T) i32 token ids and y (n, T) i32 next-token ids: y[i][t] = x[i][t+1] inside the
// corpus; the Array pair fit() takes with a SparseCategoricalCrossentropy over (batch, T, V).
struct TextWindows {
  Array x;
  Array y;
};

class TextCorpus {
 public:
  static constexpr int64_t kVocabSize = 256;  // byte values

  TextCorpus() = default;
  explicit TextCorpus(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  static TextCorpus from_string(const std::string& text) {
    return TextCorpus(std::vector<uint8_t>(text.begin(), text.end()));
  }

  // A file, or a folder's regular files as described above. NOT_FOUND for a path that does
  // not exist, INVALID_ARGUMENT for an empty result (an empty file, a folder with no files).
  static TextCorpus read(const std::string& path) {
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

  int64_t size() const { return static_cast<int64_t>(bytes_.size()); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

  // (train, validation): the first round((1 - validation_fraction) * size) bytes, then the rest.
  std::pair<TextCorpus, TextCorpus> split(double validation_fraction) const {
    if (!(validation_fraction > 0.0 && validation_fraction < 1.0))
      throw Error(DLRT_INVALID_ARGUMENT,
                  "TextCorpus::split: validation_fraction is " +
                      std::to_string(validation_fraction) + "; expected a value in (0, 1)");
    const auto cut = static_cast<size_t>(
        static_cast<double>(bytes_.size()) * (1.0 - validation_fraction) + 0.5);
    if (cut == 0 || cut >= bytes_.size())
      throw Error(DLRT_INVALID_ARGUMENT,
                  "TextCorpus::split: " + std::to_string(bytes_.size()) +
                      " bytes are too few to split at " + std::to_string(validation_fraction));
    return {TextCorpus(std::vector<uint8_t>(bytes_.begin(), bytes_.begin() + cut)),
            TextCorpus(std::vector<uint8_t>(bytes_.begin() + cut, bytes_.end()))};
  }

  // n windows of length T at seeded uniform offsets (see the decisions above).
  TextWindows windows(int64_t T, int64_t n, uint64_t seed) const {
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

  // floor((size-1)/T) windows at offsets 0, T, 2T, ...: each byte but the first is a target
  // exactly once (up to the tail that does not fill a window).
  TextWindows sequential_windows(int64_t T) const {
    check_window(T, "sequential_windows");
    std::vector<int64_t> offsets;
    for (int64_t s = 0; s + T + 1 <= size(); s += T) offsets.push_back(s);
    return gather_windows(T, offsets);
  }

  // Bytes -> ids (i32) and back; decode maps each id in [0, 256) to its byte and throws
  // INVALID_ARGUMENT for any other (a sampled id is always in range; a caller's may not be).
  static std::vector<int32_t> encode(const std::string& text) {
    std::vector<int32_t> ids;
    ids.reserve(text.size());
    for (unsigned char c : text) ids.push_back(static_cast<int32_t>(c));
    return ids;
  }
  static std::string decode(const std::vector<int32_t>& ids) {
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

 private:
  static void append_file(const std::string& path, std::vector<uint8_t>& out) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw Error(DLRT_NOT_FOUND, "TextCorpus::read: cannot open '" + path + "' for reading");
    out.insert(out.end(), std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad())
      throw Error(DLRT_INVALID_ARGUMENT, "TextCorpus::read: reading '" + path + "' failed");
  }

  void check_window(int64_t T, const char* what) const {
    if (T < 1)
      throw Error(DLRT_INVALID_ARGUMENT, std::string("TextCorpus::") + what + ": T is " +
                                             std::to_string(T) + "; expected >= 1");
    if (size() < T + 1)
      throw Error(DLRT_INVALID_ARGUMENT,
                  std::string("TextCorpus::") + what + ": the corpus has " +
                      std::to_string(size()) + " bytes, fewer than one window of T = " +
                      std::to_string(T) + " plus its next-byte target (" +
                      std::to_string(T + 1) + ")");
  }

  TextWindows gather_windows(int64_t T, const std::vector<int64_t>& offsets) const {
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

  std::vector<uint8_t> bytes_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_TEXT_DATA_HPP_
