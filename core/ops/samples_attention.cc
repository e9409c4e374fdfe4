// core/ops/samples_attention.cc: samples of causal_mask, attention and attention_grad
// (infer_attention.cc).
//
// attention: rank 3 (B, T, D) and rank 4 (batch, heads, T, head_dim); causal and not; Tq < Tk
// causal (a chunk of queries against a longer key/value cache, bottom-right aligned); Tq = 1
// (one generated token against the cache); D != Dv; a scale attribute; Tq > Tk without the
// mask (allowed: every row sees every key); and lengths past a 32/64-row tile (the cpu and
// cuda kernels tile queries and keys, so partial tiles and fully masked key tiles are hit).
// attention_grad takes the same shapes with do, o and lse drawn independently: its outputs
// are a fixed function of its six inputs (lse in [0.5, 2.5) keeps exp(S - lse) moderate).
#include "samples.hpp"

namespace dlrt::ops::samples {
namespace {

struct AttnShape {
  Dims batch;
  int64_t tq, tk, d, dv;
  int causal;
  double scale;  // 0: the default 1/sqrt(D)
  const char* note;
};
const AttnShape kAttnShapes[] = {
    {{2, 3}, 5, 5, 4, 4, 0, 0, "rank 4 (batch, heads, T, head_dim)"},
    {{2, 3}, 5, 5, 4, 4, 1, 0, "rank 4, causal"},
    {{3}, 4, 7, 8, 8, 1, 0, "rank 3, causal, Tq < Tk (bottom-right aligned)"},
    {{2, 2}, 1, 9, 8, 8, 1, 0, "Tq = 1 against a key/value cache"},
    {{2}, 6, 6, 8, 3, 0, 0.5, "D != Dv, scale 0.5"},
    {{2}, 9, 4, 4, 4, 0, 0, "Tq > Tk without the mask"},
    {{1, 2}, 33, 40, 16, 12, 1, 0, "causal, partial tiles"},
    {{1}, 130, 130, 32, 32, 1, 0, "causal, several tiles, head_dim 32"},
    {{2}, 70, 70, 16, 16, 0, 0.125, "several tiles, not causal"},
};

Dims cat(Dims d, std::initializer_list<int64_t> tail) {
  d.insert(d.end(), tail);
  return d;
}

}  // namespace

std::vector<Sample> causal_mask(const OpDef&) {
  const Values u = uniform(-2, 2);
  return {
      {{f32_in("x", {5, 5}, u)}, {}, true, "square: the lower triangle"},
      {{f32_in("x", {2, 3, 4, 7}, u)}, {}, true, "Tq < Tk: bottom-right aligned"},
      {{f32_in("x", {3, 1, 6}, u)}, {{"fill", -1e9}}, true, "Tq = 1: every key, a finite fill"},
      {{f32_in("x", {2, 6, 6}, u)}, {{"fill", 0.0}}, true, "fill 0 (the gradient's form)"},
  };
}

SampleFn attention(bool grad) {
  return [grad](const OpDef&) {
    std::vector<Sample> out;
    const Values u = uniform(-1, 1);
    for (const AttnShape& s : kAttnShapes) {
      Sample k;
      k.note = s.note;
      if (s.causal) k.attrs.emplace("causal", int64_t{1});
      if (s.scale != 0) k.attrs.emplace("scale", s.scale);
      const Dims q = cat(s.batch, {s.tq, s.d}), kd = cat(s.batch, {s.tk, s.d}),
                 v = cat(s.batch, {s.tk, s.dv}), o = cat(s.batch, {s.tq, s.dv}),
                 lse = cat(s.batch, {s.tq});
      if (grad) k.inputs.push_back(f32_in("do", o, u));
      k.inputs.push_back(f32_in("q", q, u));
      k.inputs.push_back(f32_in("k", kd, u));
      k.inputs.push_back(f32_in("v", v, u));
      if (grad) {
        k.inputs.push_back(f32_in("o", o, u));
        k.inputs.push_back(f32_in("lse", lse, uniform(0.5, 2.5)));
      }
      out.push_back(std::move(k));
    }
    return out;
  };
}

}  // namespace dlrt::ops::samples
