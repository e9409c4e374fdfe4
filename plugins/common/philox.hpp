// philox.hpp: the counter-based generator behind every random op (docs/ops.md, "Random ops"):
// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11;
// the Random123 reference), and the mapping from (seed, rng_offset, element index) to the
// numbers random_uniform, random_normal and dropout draw. Every backend includes this file, so
// every backend draws the same bits; the same source compiles as CUDA device code (nvcc sees
// __host__ __device__ on every function, and no function here calls into std::).
//
// The mapping, fixed here for all backends:
//   key     = (lo32(seed), hi32(seed))
//   counter = (lo32(i/4), hi32(i/4), lo32(rng_offset), hi32(rng_offset))
//   element i takes word i%4 of philox4x32_10(counter, key)
//   uniform(i) = (word >> 8) * 2^-24                         in [0, 1), exact in f32
//   normal(i):  pair p = i/2 uses words (2p, 2p+1) of the same block:
//               u1 = 1 - uniform(2p) in (0, 1], u2 = uniform(2p+1),
//               r = sqrt(-2 ln u1), even i: r*cos(2 pi u2), odd i: r*sin(2 pi u2),
//               computed in double (rounded to the output dtype by the caller).
//
// What it is not: a general RNG library (no engines, no distributions beyond these two).
#pragma once

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define DLRT_PHILOX_FN __host__ __device__ inline
#else
#define DLRT_PHILOX_FN inline
#endif

namespace dlrt::philox {

// Four 32-bit words: a counter or one output block.
struct Block {
  uint32_t w[4];
};

constexpr uint32_t kMul0 = 0xD2511F53u;  // Philox 4x32 round multipliers
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // key schedule increments (golden ratio, sqrt(3)-1)
constexpr uint32_t kWeyl1 = 0xBB67AE85u;

DLRT_PHILOX_FN void mulhilo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  uint64_t p = static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
  *hi = static_cast<uint32_t>(p >> 32);
  *lo = static_cast<uint32_t>(p);
}

// Philox-4x32 with 10 rounds, exactly Random123's philox4x32_R(10, ctr, key).
DLRT_PHILOX_FN Block philox4x32_10(Block ctr, uint32_t key0, uint32_t key1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += kWeyl0;
      key1 += kWeyl1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kMul0, ctr.w[0], &hi0, &lo0);
    mulhilo(kMul1, ctr.w[2], &hi1, &lo1);
    Block next;
    next.w[0] = hi1 ^ ctr.w[1] ^ key0;
    next.w[1] = lo1;
    next.w[2] = hi0 ^ ctr.w[3] ^ key1;
    next.w[3] = lo0;
    ctr = next;
  }
  return ctr;
}

// The block holding element `index` (its word is index % 4).
DLRT_PHILOX_FN Block block_for(uint64_t seed, uint64_t rng_offset, uint64_t index) {
  uint64_t b = index / 4;
  Block ctr;
  ctr.w[0] = static_cast<uint32_t>(b);
  ctr.w[1] = static_cast<uint32_t>(b >> 32);
  ctr.w[2] = static_cast<uint32_t>(rng_offset);
  ctr.w[3] = static_cast<uint32_t>(rng_offset >> 32);
  return philox4x32_10(ctr, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// The raw 32 random bits of element `index`.
DLRT_PHILOX_FN uint32_t bits(uint64_t seed, uint64_t rng_offset, uint64_t index) {
  return block_for(seed, rng_offset, index).w[index % 4];
}

// 24 high bits scaled to [0, 1): exactly representable in f32.
DLRT_PHILOX_FN float to_uniform(uint32_t x) {
  return static_cast<float>(x >> 8) * (1.0f / 16777216.0f);
}

// Uniform [0, 1) of element `index`.
DLRT_PHILOX_FN float uniform(uint64_t seed, uint64_t rng_offset, uint64_t index) {
  return to_uniform(bits(seed, rng_offset, index));
}

// Standard normal of element `index`, by Box-Muller over the pair (2p, 2p+1), p = index/2.
DLRT_PHILOX_FN double normal(uint64_t seed, uint64_t rng_offset, uint64_t index) {
  Block b = block_for(seed, rng_offset, index);
  unsigned first = static_cast<unsigned>(index % 4) & ~1u;        // 0 or 2
  double u1 = 1.0 - static_cast<double>(to_uniform(b.w[first]));  // (0, 1]: log(u1) is finite
  double u2 = static_cast<double>(to_uniform(b.w[first + 1]));
  double r = sqrt(-2.0 * log(u1));
  double theta = 6.283185307179586476925286766559 * u2;
  return (index % 2 == 0) ? r * cos(theta) : r * sin(theta);
}

}  // namespace dlrt::philox
