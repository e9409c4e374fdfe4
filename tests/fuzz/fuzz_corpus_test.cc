// tests/fuzz/fuzz_corpus_test.cc: the fuzz targets without libFuzzer, for every compiler and
// every CI run. For each target it runs the checked-in seed corpus (corpus/<target>/), then
// `--mutations` (default 3000) random mutations of those seeds drawn from a fixed seed, so a
// failure reproduces exactly. A refused input (core::Error) is fine; any other exception —
// e.g. a broken invariant (std::logic_error) — fails the test, printing the target, the seed
// file and the mutation number, and writes the input to ./fuzz_failure_<target>.bin.
// Crashes and memory errors show as a crash of this process (run under -DDLRT_SANITIZE=ON to
// catch the silent ones).
//
//   fuzz_corpus_test <corpus folder> [--mutations N] [--seed S]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fuzz_targets.hpp"

namespace {

using Bytes = std::vector<uint8_t>;

struct Target {
  const char* name;
  int (*one_input)(const uint8_t*, size_t);
};

// One random edit of the kinds that find parser bugs: bit flips, boundary bytes, digits
// (JSON numbers), inserted/deleted/duplicated runs, truncation, splices with another seed.
void mutate(Bytes& b, const std::vector<Bytes>& seeds, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  static const uint8_t kInteresting[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0x08, 0x0b, 0x0e,
                                         '[',  ']',  '{',  '}',  '"',  ',',  ':',  '-'};
  switch (rng() % 9) {
    case 0:
      if (!b.empty()) b[pick(b.size())] ^= static_cast<uint8_t>(1u << (rng() % 8));
      break;
    case 1:
      if (!b.empty()) b[pick(b.size())] = kInteresting[pick(sizeof(kInteresting))];
      break;
    case 2:
      if (!b.empty()) b[pick(b.size())] = static_cast<uint8_t>('0' + rng() % 10);
      break;
    case 3:
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(pick(b.size() + 1)),
               static_cast<uint8_t>(rng()));
      break;
    case 4:
      if (!b.empty()) {
        size_t at = pick(b.size());
        size_t n = 1 + pick(std::min<size_t>(16, b.size() - at));
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at),
                b.begin() + static_cast<std::ptrdiff_t>(std::min(b.size(), at + n)));
      }
      break;
    case 5:
      b.resize(pick(b.size() + 1));
      break;
    case 6:
      if (!b.empty()) {
        size_t at = pick(b.size());
        size_t n = 1 + pick(std::min<size_t>(32, b.size() - at));
        Bytes run(b.begin() + static_cast<std::ptrdiff_t>(at),
                  b.begin() + static_cast<std::ptrdiff_t>(at + n));
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(pick(b.size() + 1)), run.begin(),
                 run.end());
      }
      break;
    case 7: {  // overwrite one of the first 16 bytes: the length / magic / dims
      if (!b.empty()) b[pick(std::min<size_t>(16, b.size()))] = static_cast<uint8_t>(rng());
      break;
    }
    default: {  // splice: our head, another seed's tail
      const Bytes& other = seeds[pick(seeds.size())];
      size_t cut = pick(b.size() + 1);
      size_t from = pick(other.size() + 1);
      b.resize(cut);
      b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
      break;
    }
  }
}

bool run_one(const Target& t, const Bytes& input, const std::string& label, int* accepted) {
  try {
    *accepted += t.one_input(input.data(), input.size());
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL %s on %s: %s\n", t.name, label.c_str(), e.what());
  } catch (...) {
    std::fprintf(stderr, "FAIL %s on %s: a non-standard exception\n", t.name, label.c_str());
  }
  std::ofstream(std::string("fuzz_failure_") + t.name + ".bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(input.data()),
             static_cast<std::streamsize>(input.size()));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <corpus folder> [--mutations N] [--seed S]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path corpus = argv[1];
  long mutations = 3000;
  uint64_t seed = 20240501;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--mutations") mutations = std::strtol(argv[i + 1], nullptr, 10);
    else if (flag == "--seed") seed = std::strtoull(argv[i + 1], nullptr, 10);
  }
  const Target targets[] = {{"idx", dlrt::fuzz::idx_one_input},
                            {"safetensors", dlrt::fuzz::safetensors_one_input},
                            {"device_spec", dlrt::fuzz::device_spec_one_input},
                            {"plugin_options", dlrt::fuzz::plugin_options_one_input},
                            {"settings", dlrt::fuzz::settings_one_input},
                            {"onnx_model", dlrt::fuzz::onnx_model_one_input}};
  int failures = 0;
  for (const Target& t : targets) {
    std::vector<Bytes> seeds;
    std::vector<std::string> names;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(corpus / t.name))
      if (entry.is_regular_file()) files.push_back(entry.path());
    std::sort(files.begin(), files.end());  // directory order is not stable across machines
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      names.push_back(f.filename().string());
    }
    if (seeds.empty()) {
      std::fprintf(stderr, "FAIL %s: no seed files in %s\n", t.name,
                   (corpus / t.name).string().c_str());
      ++failures;
      continue;
    }
    int accepted_seeds = 0, accepted = 0;
    for (size_t i = 0; i < seeds.size(); ++i)
      failures += !run_one(t, seeds[i], names[i], &accepted_seeds);
    std::mt19937_64 rng(seed);
    for (long m = 0; m < mutations; ++m) {
      size_t s = static_cast<size_t>(rng() % seeds.size());
      Bytes input = seeds[s];
      int edits = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < edits; ++k) mutate(input, seeds, rng);
      failures += !run_one(t, input, names[s] + " mutation " + std::to_string(m), &accepted);
    }
    std::printf("%s: %zu seeds (%d accepted), %ld mutations (%d accepted)\n", t.name, seeds.size(),
                accepted_seeds, mutations, accepted);
    // The seeds include valid files: if none parses, the target tests nothing.
    if (accepted_seeds == 0) {
      std::fprintf(stderr, "FAIL %s: no seed was accepted\n", t.name);
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
