// device.cc: the cpu plugin's one device: its description (built once in plugin_create from
// /proc, sched_getaffinity and oneDNN), count, open and close.
#include <oneapi/dnnl/dnnl.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "cpu.hpp"
#include "host_info.hpp"
#include "kernels/winograd_conv.hpp"
#include "peak.hpp"
#include "versioned.hpp"

namespace dlrt::cpu {

using plugin::fail;
using plugin::guard;

namespace {

// The ISA oneDNN will generate code for (its dispatcher's choice, which honours ONEDNN_MAX_CPU_ISA),
// as a name and as f32 FLOP per cycle per core: FMA units x SIMD lanes x 2 (a fused multiply-add
// is two FLOP). avx512: 2 x 16 x 2 = 64; avx2 (with FMA): 2 x 8 x 2 = 32; avx (no FMA): one 8-lane
// add + one 8-lane mul = 16; sse4.1: 4-lane add + mul = 8.
struct Isa {
  const char* name;
  int flops_per_cycle;
};

Isa effective_isa() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41:
      return {"sse41", 8};
    case dnnl_cpu_isa_avx:
      return {"avx", 16};
    case dnnl_cpu_isa_avx2:
      return {"avx2", 32};
    case dnnl_cpu_isa_avx2_vnni:
      return {"avx2_vnni", 32};
    case dnnl_cpu_isa_avx512_mic:
      return {"avx512_mic", 64};
    case dnnl_cpu_isa_avx512_mic_4ops:
      return {"avx512_mic_4ops", 64};
    case dnnl_cpu_isa_avx512_core:
      return {"avx512_core", 64};
    case dnnl_cpu_isa_avx512_core_vnni:
      return {"avx512_core_vnni", 64};
    case dnnl_cpu_isa_avx512_core_bf16:
      return {"avx512_core_bf16", 64};
    case dnnl_cpu_isa_avx512_core_amx:
      return {"avx512_core_amx", 64};
    default:
      return {"unknown", 0};
  }
}

// Whether the loop kernels may run their AVX2 code: the CPU has it and oneDNN dispatches to an
// ISA that contains it (oneDNN's ISA values nest: avx2_vnni and the avx512 ones include avx2's
// bits), so ONEDNN_MAX_CPU_ISA caps both.
bool loops_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  const unsigned avx2 = dnnl_cpu_isa_avx2;
  return __builtin_cpu_supports("avx2") &&
         (static_cast<unsigned>(dnnl_get_effective_cpu_isa()) & avx2) == avx2;
#else
  return false;
#endif
}

// Clock in MHz: the cpufreq maximum when the kernel exposes it (the clock peak is reached at),
// else the "cpu MHz" of /proc/cpuinfo (the current clock; VMs often only have this, and show
// their host's base clock there; on Windows the registry's nominal ~MHz); 0 if unknown.
// `source` says which.
double cpu_mhz(const char*& source) {
  std::ifstream f("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");  // kHz
  double khz = 0;
  if (f >> khz && khz > 0) {
    source = "cpufreq max";
    return khz / 1000.0;
  }
  const std::string v = plugin::host::proc_field("/proc/cpuinfo", "cpu MHz");
  source = v.empty() ? "unknown" : plugin::host::kCpuMhzSource;  // Windows: the registry
  return v.empty() ? 0.0 : std::strtod(v.c_str(), nullptr);
}

// The measured peak checked against the FMA rate the ISA implies at the known clock
// (threads x MHz x FLOP per cycle: the nominal figure). The clock sets how strict the check
// can be: cpufreq's maximum is the turbo clock, which an all-core FMA load may not hold
// (AVX-512 especially), so only below half of it is a sure sign of a low measurement;
// /proc/cpuinfo's "cpu MHz" on a VM is the host's base clock, which a busy core does not
// fall below, so 10% under it is already suspect. (The 120.7 GFLOP/s the plugin once
// measured on a 2.45 GHz Zen 3 guest whose real rate is ~236 is 77% of the 156.5 that
// 2 x 2.45 x 32 give.) A word, not a sentence, so the attribute needs no storage; dlbench
// spells it out with the numbers (tools/dlbench/bench.cc):
//   ok, low (under the bound), unsteady (no two consecutive tries agreed within 3%),
//   low+unsteady, clock-unknown (nothing to check against), not-measured.
const char* peak_check(const PeakMeasurement& m, double nominal, const char* clock_source,
                       double mhz) {
  if (m.gflops <= 0) return "not-measured";
  if (mhz <= 0) return "clock-unknown";
  const bool turbo = std::string(clock_source) == "cpufreq max";
  const bool low = m.gflops < (turbo ? 0.5 : 0.9) * nominal;
  if (low) return m.stable ? "low" : "low+unsteady";
  return m.stable ? "ok" : "unsteady";
}

std::string vendor_name(const std::string& vendor_id) {
  if (vendor_id == "GenuineIntel") return "Intel";
  if (vendor_id == "AuthenticAMD") return "AMD";
  return vendor_id;  // e.g. "" on aarch64, where /proc/cpuinfo has no vendor_id
}

const char* runtime_name(unsigned runtime) {
  switch (runtime) {
    case DNNL_RUNTIME_SEQ:
      return "sequential";
    case DNNL_RUNTIME_OMP:
      return "OpenMP";
    case DNNL_RUNTIME_TBB:
      return "TBB";
    case DNNL_RUNTIME_THREADPOOL:
      return "threadpool";
    default:
      return "other";
  }
}

dlrt_attr make_attr(const char* name, dlrt_attr_type type) {
  dlrt_attr a{};
  a.struct_size = sizeof(dlrt_attr);
  a.name = name;
  a.type = type;
  return a;
}

}  // namespace

void build_desc(dlrt_plugin* p) {
  DescStorage& s = p->info;
  s.name = plugin::host::proc_field("/proc/cpuinfo", "model name");
  s.vendor = vendor_name(plugin::host::proc_field("/proc/cpuinfo", "vendor_id"));
  const dnnl_version_t* v = dnnl_version();
  s.library_versions = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                       std::to_string(v->patch);
  // Distribution builds report the hash as "N/A"; only a real one is worth showing.
  if (v->hash != nullptr && v->hash[0] != '\0' && std::string(v->hash) != "N/A")
    s.library_versions += std::string(" (") + v->hash + ")";
  s.cpu_runtime = runtime_name(v->cpu_runtime);
  const Isa isa = effective_isa();
  s.isa = isa.name;
  p->avx2 = loops_avx2();
  p->onednn_avx512 = isa.flops_per_cycle == 64;
  {
    const dnnl_cpu_isa_t e = dnnl_get_effective_cpu_isa();
    p->onednn_bf16 = e == dnnl_cpu_isa_avx512_core_bf16 || e == dnnl_cpu_isa_avx512_core_amx;
  }
  // dtypes as dlprobe shows them (docs/ops.md, "16-bit floats"): "native" ones have kernels
  // of their own (bf16 for convolutions and matmuls where oneDNN has AVX512-BF16); f16, and
  // bf16 elsewhere, run each op's f32 kernel between conversions.
  s.native_dtypes = p->onednn_bf16 ? "f32,bf16" : "f32";
  s.converted_dtypes = "f16,bf16";
  const int cores = plugin::host::affinity_cpu_count();
  const char* clock_source = "unknown";
  const double mhz = cpu_mhz(clock_source);
  // Peak f32 GFLOP/s. Nominal: threads used x clock (GHz) x FLOP per cycle per core of the
  // ISA (see effective_isa), e.g. 2 cores x 2.45 GHz x 32 (avx2) = 157 GFLOP/s; it ignores
  // turbo and AVX-512 down-clocking. Measured (option peak=measured, the default): FMA chains
  // in that ISA's registers on the same threads (peak.hpp), which sees the clock the kernels
  // run at; the nominal figure stays where the ISA has no FMA to measure or it fails. Used
  // by placement and by dlbench's floor_fraction.
  const int used = p->threads < cores ? p->threads : cores;
  s.nominal_peak_gflops = used * (mhz / 1000.0) * isa.flops_per_cycle;
  const PeakMeasurement measured =
      p->measure_peak ? measure_peak_gflops(used, isa.flops_per_cycle / 4) : PeakMeasurement{};
  s.measured_peak_gflops = measured.gflops;
  // Which of dlrt's and oneDNN's kernels run where both can (needs the flags above and the
  // engine; kernel_choices.hpp).
  calibrate_kernels(p, p->calibrate);
  s.calibration = p->choices.source;
  s.kernel_choices = p->choices.describe();
  s.calibration_key = calibration_key(*p);

  // Attributes; pointers are taken after the vector is complete, so they stay valid.
  dlrt_attr a = make_attr("isa", DLRT_ATTR_STRING);
  a.s = s.isa.c_str();
  s.attrs.push_back(a);
  a = make_attr("threads", DLRT_ATTR_INT);
  a.i = p->threads;
  s.attrs.push_back(a);
  // 1 when 3x3 convolutions may run as Winograd: option `winograd` (plugin.cc) on and a CPU
  // that runs dlrt's Winograd kernel (kernels/winograd_conv.hpp: AVX2+FMA, and oneDNN's ISA
  // not capped below AVX2; its AVX-512 build where that ISA is AVX-512); 2
  // when the option forces it wherever it can run.
  a = make_attr("winograd", DLRT_ATTR_INT);
  a.i = p->winograd && wino::cpu_supported(*p) ? (p->winograd_force ? 2 : 1) : 0;
  s.attrs.push_back(a);
  // How the kernel choices were made (measured now, read from the cache, skipped) and, when
  // measured, each choice with both kernels' times (dlprobe lists them under the device).
  a = make_attr("calibration", DLRT_ATTR_STRING);
  a.s = s.calibration.c_str();
  s.attrs.push_back(a);
  if (!s.kernel_choices.empty()) {
    a = make_attr("kernel_choices", DLRT_ATTR_STRING);
    a.s = s.kernel_choices.c_str();
    s.attrs.push_back(a);
  }
  a = make_attr("calibration_key", DLRT_ATTR_STRING);
  a.s = s.calibration_key.c_str();
  s.attrs.push_back(a);
  a = make_attr("cpu_mhz", DLRT_ATTR_FLOAT);
  a.f = mhz;
  s.attrs.push_back(a);
  // The clock's source and the peak measurement's record (peak.hpp): tries, spread, check.
  a = make_attr("clock_source", DLRT_ATTR_STRING);
  a.s = clock_source;  // a string literal
  s.attrs.push_back(a);
  a = make_attr("peak_attempts", DLRT_ATTR_INT);
  a.i = measured.attempts;
  s.attrs.push_back(a);
  a = make_attr("peak_spread", DLRT_ATTR_FLOAT);
  a.f = measured.spread;
  s.attrs.push_back(a);
  a = make_attr("peak_check", DLRT_ATTR_STRING);
  a.s = peak_check(measured, s.nominal_peak_gflops, clock_source, mhz);  // a literal
  s.attrs.push_back(a);
  a = make_attr("flops_per_cycle", DLRT_ATTR_INT);
  a.i = isa.flops_per_cycle;
  s.attrs.push_back(a);
  a = make_attr("nominal_peak_gflops", DLRT_ATTR_FLOAT);
  a.f = s.nominal_peak_gflops;
  s.attrs.push_back(a);
  if (s.measured_peak_gflops > 0) {
    a = make_attr("measured_peak_gflops", DLRT_ATTR_FLOAT);
    a.f = s.measured_peak_gflops;
    s.attrs.push_back(a);
  }
  a = make_attr("cpu_runtime", DLRT_ATTR_STRING);
  a.s = s.cpu_runtime.c_str();
  s.attrs.push_back(a);
  a = make_attr("native_dtypes", DLRT_ATTR_STRING);
  a.s = s.native_dtypes.c_str();
  s.attrs.push_back(a);
  a = make_attr("converted_dtypes", DLRT_ATTR_STRING);
  a.s = s.converted_dtypes.c_str();
  s.attrs.push_back(a);
  // Buffers are this process's heap memory (memory.cc) and kernels take any pointer aligned
  // to its element size: the host may read tensors in place and wrap caller memory as
  // tensors (plugin.h, "host_memory"; dlrt_tensor_host_data / dlrt_tensor_wrap_host).
  a = make_attr("host_memory", DLRT_ATTR_BOOL);
  a.i = 1;
  s.attrs.push_back(a);
  for (const dlrt_attr& x : s.attrs) s.attr_ptrs.push_back(&x);

  dlrt_device_desc& d = s.desc;
  d.struct_size = sizeof(dlrt_device_desc);
  d.device_class = DLRT_DEVICE_CLASS_CPU;
  d.ordinal = 0;
  d.type = "CPU";
  d.name = s.name.c_str();
  d.vendor = s.vendor.c_str();
  d.pci_bus_id = "";
  d.uuid = "";
  d.core_count = cores;
  d.memory_total = plugin::host::memory_total();
  d.driver_version = "";
  d.library_versions = s.library_versions.c_str();
  d.peak_gflops = s.measured_peak_gflops > 0 ? s.measured_peak_gflops : s.nominal_peak_gflops;
  d.memory_bandwidth_gbps = 0;  // unknown: nothing portable reports it
  d.launch_overhead_us = 0;
  d.num_attrs = s.attr_ptrs.size();
  d.attrs = s.attr_ptrs.data();
}

dlrt_status* device_count(dlrt_plugin* p, int32_t* out_count) {
  if (out_count != nullptr) *out_count = 0;
  return guard([&] {
    plugin::require(p, "plugin");
    plugin::require(out_count, "out_count");
    if (!p->unavailable.empty()) fail(DLRT_UNAVAILABLE, p->unavailable);
    *out_count = 1;
  });
}

namespace {

void check_ordinal(dlrt_plugin* p, int32_t ordinal) {
  plugin::require(p, "plugin");
  if (!p->unavailable.empty()) fail(DLRT_UNAVAILABLE, p->unavailable);
  if (ordinal != 0)
    fail(DLRT_INVALID_ARGUMENT, prefix() + "device ordinal " + std::to_string(ordinal) +
                                    " is out of range, expected 0 (the cpu plugin has one device)");
}

}  // namespace

dlrt_status* device_get_desc(dlrt_plugin* p, int32_t ordinal, dlrt_device_desc* out) {
  return guard([&] {
    check_ordinal(p, ordinal);
    plugin::write_versioned(out, p->info.desc, "out");
  });
}

dlrt_status* device_open(dlrt_plugin* p, int32_t ordinal, dlrt_device** out_device) {
  if (out_device != nullptr) *out_device = nullptr;
  return guard([&] {
    plugin::require(out_device, "out_device");
    check_ordinal(p, ordinal);
    *out_device = new dlrt_device{p};
  });
}

void device_close(dlrt_device* device) {
  plugin::guard_void("device_close", [&] { delete device; });
}

}  // namespace dlrt::cpu
