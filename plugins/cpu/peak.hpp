// peak.hpp: the cpu device's f32 peak, measured. The nominal figure (threads x clock x FLOP
// per cycle of the ISA, device.cc) takes the clock from cpufreq or /proc/cpuinfo, which is the
// base clock on most machines and VMs; cores run short kernels at their boost clock, so on a
// 2-core AMD EPYC (Zen 5, 2.6 GHz base) onnxruntime's convolutions ran above the nominal peak.
// The measured figure is what a chain of fused multiply-adds in the ISA's widest registers
// reaches on `threads` threads at once (OpenMP, as the kernels run): each thread's fastest of
// many ~0.1 ms runs, summed over the threads, measured again (up to three times, the highest
// kept) when the threads disagree by more than 20%, the mark of a descheduled thread.
#pragma once

namespace dlrt::cpu {

// GFLOP/s of f32 FMAs on `threads` threads, `lanes` floats per vector (16: AVX-512, 8: AVX2+FMA;
// anything else: 0, not measured). About 3 ms. 0 when the CPU lacks the ISA.
double measure_peak_gflops(int threads, int lanes);

}  // namespace dlrt::cpu
