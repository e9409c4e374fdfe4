// dlrt/nn/text_data.hpp: a byte-level text corpus for language models: a file or a folder of
// files -> token ids, a train/validation split, and seeded random windows of length T.
// nn/text_data.cc reads files with the standard library and throws dlrt::Error as the rest of
// nn does.
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
// Decisions this reader makes, written down because no file format fixes them:
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

#include <cstdint>
#include <filesystem>
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
  static TextCorpus from_string(const std::string& text);

  // A file, or a folder's regular files as described above. NOT_FOUND for a path that does
  // not exist, INVALID_ARGUMENT for an empty result (an empty file, a folder with no files).
  static TextCorpus read(const std::string& path);

  int64_t size() const { return static_cast<int64_t>(bytes_.size()); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

  // (train, validation): the first round((1 - validation_fraction) * size) bytes, then the rest.
  std::pair<TextCorpus, TextCorpus> split(double validation_fraction) const;

  // n windows of length T at seeded uniform offsets (see the decisions above).
  TextWindows windows(int64_t T, int64_t n, uint64_t seed) const;

  // floor((size-1)/T) windows at offsets 0, T, 2T, ...: each byte but the first is a target
  // exactly once (up to the tail that does not fill a window).
  TextWindows sequential_windows(int64_t T) const;

  // Bytes -> ids (i32) and back; decode maps each id in [0, 256) to its byte and throws
  // INVALID_ARGUMENT for any other (a sampled id is always in range; a caller's may not be).
  static std::vector<int32_t> encode(const std::string& text);
  static std::string decode(const std::vector<int32_t>& ids);

 private:
  static void append_file(const std::string& path, std::vector<uint8_t>& out);

  void check_window(int64_t T, const char* what) const;

  TextWindows gather_windows(int64_t T, const std::vector<int64_t>& offsets) const;

  std::vector<uint8_t> bytes_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_TEXT_DATA_HPP_
