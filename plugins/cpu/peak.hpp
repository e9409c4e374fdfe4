// peak.hpp: the cpu device's f32 peak, measured. The nominal figure (threads x clock x FLOP
// per cycle of the ISA, device.cc) takes the clock from cpufreq or /proc/cpuinfo, which is the
// base clock on most machines and VMs; cores run short kernels at their boost clock, so on a
// 2-core AMD EPYC (Zen 5, 2.6 GHz base) onnxruntime's convolutions ran above the nominal peak.
// The measured figure is what a chain of fused multiply-adds in the ISA's widest registers
// reaches on `threads` threads at once (OpenMP, as the kernels run): each thread's fastest of
// many ~0.1 ms runs, summed over the threads.
//
// One such measurement can come back low without any sign inside it: on a shared 2-core guest
// it once read 120.7 GFLOP/s, half the real ~236, with both threads agreeing (both shared
// their cores with a neighbour's work for the whole 3 ms). So the measurement is repeated
// until two consecutive ones agree within kStable (and the threads within one measurement
// within 20%), at most kMaxAttempts times; the highest is kept, and the number of tries and
// the spread of all of them are reported. Agreement is not proof (a neighbour can stay busy
// for all the tries), which is why device.cc also checks the figure against the rate the ISA
// and clock lead one to expect.
#pragma once

namespace dlrt::cpu {

struct PeakMeasurement {
  double gflops = 0;  // the highest measurement; 0: not measured (no such ISA here)
  int attempts = 0;   // measurements taken
  double spread = 0;  // (highest - lowest) / highest over them
  bool stable = false;  // two consecutive measurements agreed within kStable
};

// GFLOP/s of f32 FMAs on `threads` threads, `lanes` floats per vector (16: AVX-512, 8: AVX2+FMA;
// anything else: not measured). About 3 ms a try, 2 to 8 tries. gflops 0 when the CPU lacks
// the ISA.
PeakMeasurement measure_peak_gflops(int threads, int lanes);

}  // namespace dlrt::cpu
