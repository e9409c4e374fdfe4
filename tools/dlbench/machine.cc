// machine.cc: which CPU a figure came from (bench.hpp's cpu_json). A step time means little
// without the processor behind it: the same "AMD EPYC" string covers Zen 2 to Zen 5, whose FMA
// rates differ by 2x, so the family/model/stepping numbers go beside the name, with the
// instruction-set flags dlrt's kernels (and oneDNN's, and PyTorch's) dispatch on.
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "bench.hpp"

namespace dlbench {
namespace {

// The flags that decide which kernels run: AVX2+FMA is the cpu plugin's vector path and the
// FMA peak's 8 lanes; AVX-512F its 16-lane path; the BF16/VNNI/AMX flags oneDNN's 16-bit
// kernels; F16C the f16 conversions.
const char* const kDispatchFlags[] = {"sse4_2",      "avx",         "avx2",     "fma",
                                      "f16c",        "avx512f",     "avx512bw", "avx512vl",
                                      "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_tile"};

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  const size_t b = s.find_last_not_of(" \t");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

}  // namespace

json cpu_json() {
  // The first processor's block of /proc/cpuinfo ("key<TAB>: value" lines up to a blank line);
  // every core of the machines dlbench runs on is the same model.
  std::ifstream f("/proc/cpuinfo");
  if (!f) return {{"unavailable", "/proc/cpuinfo cannot be read (not Linux?)"}};
  json cpu = json::object();
  std::string line, flags;
  while (std::getline(f, line) && !line.empty()) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "model name") cpu["model_name"] = value;
    if (key == "vendor_id") cpu["vendor_id"] = value;
    if (key == "cpu MHz") cpu["cpu_mhz_now"] = std::stod(value);
    if (key == "flags") flags = value;
    // Decimal numbers, as cpuid's family/model/stepping (the extended fields already added).
    if (key == "cpu family" || key == "model" || key == "stepping")
      cpu[key == "cpu family" ? "family" : key] = std::stoi(value);
  }
  std::set<std::string> have;
  std::istringstream words(flags);
  for (std::string w; words >> w;) have.insert(w);
  json present = json::array(), absent = json::array();
  for (const char* flag : kDispatchFlags) (have.count(flag) ? present : absent).push_back(flag);
  cpu["isa_flags"] = present;
  cpu["isa_flags_absent"] = absent;
  if (!cpu.contains("model_name"))
    cpu["unavailable"] = "/proc/cpuinfo has no 'model name' line (expected x86 Linux's layout)";
  return cpu;
}

}  // namespace dlbench
