// nn_text_test.cc: the byte-level text corpus (nn/text_data.hpp) — how a folder is read, the
// contiguous split, seeded windows whose targets are the next bytes, each bad input's error —
// and a sequence model trained on it: Debian's fortunes through Embedding -> Dense over
// (batch, T, 256) with the sparse cross-entropy over every position, which must beat the
// unigram entropy of the validation text (a bigram model does; a broken loss or metric does
// not), with the token accuracy of evaluate() equal to the one computed from predict().
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nn_test_util.hpp"

namespace nn = dlrt::nn;
namespace fs = std::filesystem;

namespace {

using nn_test::error_of;

const char* kFortunes = "/usr/share/games/fortunes";

// A fresh folder under the test's temp dir.
fs::path scratch(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("dlrt_nn_text_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

}  // namespace

TEST(NnText, FolderReadsRegularFilesInNameOrderSkippingLinksIndicesAndHidden) {
  const fs::path d = scratch("folder");
  write(d / "b", "BBB");
  write(d / "a", "aa");
  write(d / "a.dat", "\x01\x02");  // strfile's index: binary, skipped
  write(d / ".hidden", "hh");
#if !defined(_WIN32)
  // Debian's duplicate names. (Windows: creating a link needs a privilege, and Wine has no
  // CreateSymbolicLink; the rest of the rule is checked there.)
  fs::create_symlink(d / "a", d / "a.u8");
#endif
  fs::create_directories(d / "sub");
  write(d / "sub" / "c", "cc");  // sub-folders are not entered
  const nn::TextCorpus c = nn::TextCorpus::read(d.string());
  EXPECT_EQ(std::string(c.bytes().begin(), c.bytes().end()), "aaBBB");
  fs::remove_all(d);
}

TEST(NnText, BadCorporaAreClearErrors) {
  const fs::path d = scratch("bad");
  auto [code, msg] = error_of([&] { nn::TextCorpus::read((d / "missing").string()); });
  EXPECT_EQ(code, DLRT_NOT_FOUND);
  EXPECT_NE(msg.find("does not exist"), std::string::npos) << msg;

  write(d / "empty", "");
  std::tie(code, msg) = error_of([&] { nn::TextCorpus::read((d / "empty").string()); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("is empty"), std::string::npos) << msg;

  const fs::path e = scratch("only_dat");
  write(e / "x.dat", "index");
  std::tie(code, msg) = error_of([&] { nn::TextCorpus::read(e.string()); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("no non-empty regular file"), std::string::npos) << msg;

  // Smaller than one window plus its target.
  const nn::TextCorpus tiny = nn::TextCorpus::from_string("abcd");
  std::tie(code, msg) = error_of([&] { tiny.windows(4, 1, 0); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("4 bytes, fewer than one window of T = 4"), std::string::npos) << msg;
  EXPECT_NO_THROW(tiny.windows(3, 1, 0));  // exactly T + 1 bytes: one offset
  EXPECT_EQ(error_of([&] { tiny.windows(0, 1, 0); }).first, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(error_of([&] { tiny.windows(2, 0, 0); }).first, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(error_of([&] { tiny.split(0.0); }).first, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(error_of([&] { tiny.split(1.0); }).first, DLRT_INVALID_ARGUMENT);
  std::tie(code, msg) = error_of([&] { nn::TextCorpus::decode({65, 256}); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("id 256 is not a byte"), std::string::npos) << msg;
  fs::remove_all(d);
  fs::remove_all(e);
}

TEST(NnText, WindowsAreSeededAndTargetsAreTheNextBytes) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text.push_back(static_cast<char>(i * 7 % 251));
  text += "\xff\xfe";  // non-UTF-8 bytes are tokens like any other
  const nn::TextCorpus c = nn::TextCorpus::from_string(text);
  auto [train, val] = c.split(0.1);
  EXPECT_EQ(train.size() + val.size(), c.size());
  EXPECT_EQ(train.size(), 902);  // round(1002 * 0.9)
  EXPECT_EQ(val.bytes().back(), 0xfe);

  const nn::TextWindows a = c.windows(16, 50, 7), b = c.windows(16, 50, 7), o = c.windows(16, 50, 8);
  EXPECT_EQ(a.x.dims(), (std::vector<int64_t>{50, 16}));
  EXPECT_EQ(a.x.bytes(), b.x.bytes());
  EXPECT_NE(a.x.bytes(), o.x.bytes());
  const std::vector<int32_t> x = a.x.values<int32_t>(), y = a.y.values<int32_t>();
  for (int i = 0; i < 50; ++i) {
    // Find the window's offset from its first bytes, then check every position's target.
    const std::string head = nn::TextCorpus::decode({x.begin() + i * 16, x.begin() + i * 16 + 16});
    const size_t at = text.find(head);
    ASSERT_NE(at, std::string::npos);
    for (int t = 0; t < 16; ++t)
      EXPECT_EQ(y[i * 16 + t], static_cast<unsigned char>(text[at + t + 1]));
  }
  const nn::TextWindows s = c.sequential_windows(100);  // (1002 - 1) / 100 = 10 windows
  EXPECT_EQ(s.x.rows(), 10);
  EXPECT_EQ(s.y.values<int32_t>()[999], static_cast<unsigned char>(text[1000]));
}

TEST(NnText, BigramModelOnFortunesBeatsTheUnigramEntropy) {
  if (!fs::exists(kFortunes)) GTEST_SKIP() << "no fortunes corpus in " << kFortunes;
#if defined(_WIN32)
  // Under Wine the corpus is Debian's folder seen through drive Z:, where its symbolic links
  // (the .u8 duplicates) read as regular files: another corpus than the bar was set on.
  GTEST_SKIP() << "the Debian corpus under Wine reads its symbolic links as files";
#endif
  const nn::TextCorpus corpus = nn::TextCorpus::read(kFortunes);
  ASSERT_GT(corpus.size(), 2'000'000);  // about 2.5 MB of English
  auto [train, val] = corpus.split(0.1);

  // The unigram entropy of the validation bytes under the training frequencies (add-one):
  // what a model that ignores context scores at best.
  std::vector<double> freq(256, 1.0);
  for (uint8_t b : train.bytes()) freq[b] += 1.0;
  double total = 0, unigram_bits = 0;
  for (double f : freq) total += f;
  for (uint8_t b : val.bytes()) unigram_bits -= std::log2(freq[b] / total);
  unigram_bits /= static_cast<double>(val.size());
  EXPECT_GT(unigram_bits, 4.0);  // English bytes: about 4.5 bits

  const int64_t T = 32;
  const nn::TextWindows tw = train.windows(T, 3000, 1);
  const nn::TextWindows vw = val.windows(T, 301, 2);  // not a multiple of the batch: padding
  dlrt::Context ctx = nn_test::cpu_context();
  nn::Sequential m(ctx, {nn::Input({T}), nn::Embedding(256, 32), nn::Dense(256)});
  m.compile(nn::Adam(1e-2), nn::SparseCategoricalCrossentropy(true), {"accuracy"});
  nn::FitOptions fo;
  fo.epochs = 3;
  fo.batch_size = 64;
  fo.progress.verbose = 0;
  m.fit(tw.x, tw.y, fo);
  const nn::Logs logs = m.evaluate(vw.x, vw.y, 64);
  const double bits = logs.at(0).second / std::log(2.0);
  EXPECT_LT(bits, unigram_bits - 0.6) << "loss " << logs.at(0).second << " nats/char";

  // The metric is the token accuracy: the argmax of predict() against y at every position.
  const nn::Array p = m.predict(vw.x);
  ASSERT_EQ(p.dims(), (std::vector<int64_t>{301, T, 256}));
  const std::vector<float> pv = p.values<float>();
  const std::vector<int32_t> yv = vw.y.values<int32_t>();
  int64_t hits = 0;
  for (size_t r = 0; r < yv.size(); ++r) {
    size_t best = 0;
    for (size_t k = 1; k < 256; ++k)
      if (pv[r * 256 + k] > pv[r * 256 + best]) best = k;
    hits += static_cast<int64_t>(best) == yv[r];
  }
  ASSERT_EQ(logs.at(1).first, "accuracy");
  EXPECT_NEAR(logs.at(1).second, static_cast<double>(hits) / static_cast<double>(yv.size()), 1e-6);
  EXPECT_GT(logs.at(1).second, 0.25);  // a bigram model's guess is right about a third of the time
}

TEST(NnText, SequenceLabelsMustMatchTheOutputPositions) {
  dlrt::Context ctx = nn_test::cpu_context();
  nn::Sequential m(ctx, {nn::Input({8}), nn::Embedding(256, 4), nn::Dense(256)});
  m.compile(nn::Adam(1e-2), nn::SparseCategoricalCrossentropy(true));
  const nn::TextWindows w = nn::TextCorpus::from_string(std::string(100, 'x')).windows(8, 4, 0);
  auto [code, msg] = error_of([&] {
    m.fit(w.x, nn::Array::of<int32_t>({4}, {1, 2, 3, 4}));
  });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("expected (None, 8), one class per position"), std::string::npos) << msg;
}
