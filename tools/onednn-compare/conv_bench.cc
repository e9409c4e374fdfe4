// conv_bench.cc: times oneDNN's convolution primitives (forward, backward data, backward
// weights; f32 and bf16) on the convolutions of dlrt's two training benchmarks, so that two
// oneDNN versions can be compared on the same machine (tools/onednn-compare/run.sh builds it
// once against Debian's oneDNN 2.6 and once against PyPI's oneDNN 3.x). The same source
// compiles against both APIs: oneDNN 3 dropped the operation descriptors (`desc`) and takes
// the shapes in the primitive_desc constructors instead.
//
// Layouts as dlrt gives them: activations NHWC, weights `any` (the primitive's own blocked
// layout, reordered once before timing: dlrt reorders a variable filter on every run, which is
// not part of this measurement). Each case prints one line: name, pass, dtype, the median
// microseconds of `--repeat` runs after 3 warm-up runs, and oneDNN's implementation name.
//
// Usage: conv_bench [--repeat N]   (threads: the library's default, OMP_NUM_THREADS or all
// cores; run.sh pins both builds to the same cores).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;

struct ConvCase {
  const char* name;
  int64_t n, h, w, ci, co, k, stride, pad;  // square images and filters, symmetric padding
};

// The reference CNN (batch 64, VALID) and ResNet-20 (batch 128, 3x3 SAME-like pad 1, the
// stride-2 stage entries and the 1x1 projections), as in tools/dlbench/ops.cc.
const ConvCase kCases[] = {
    {"cnn.conv1 28x28x1->32", 64, 28, 28, 1, 32, 3, 1, 0},
    {"cnn.conv2 13x13x32->64", 64, 13, 13, 32, 64, 3, 1, 0},
    {"cnn.conv3 5x5x64->64", 64, 5, 5, 64, 64, 3, 1, 0},
    {"resnet.conv16 28x28x16", 128, 28, 28, 16, 16, 3, 1, 1},
    {"resnet.conv32 14x14x32", 128, 14, 14, 32, 32, 3, 1, 1},
    {"resnet.conv64 7x7x64", 128, 7, 7, 64, 64, 3, 1, 1},
    {"resnet.down32 28x28x16 s2", 128, 28, 28, 16, 32, 3, 2, 1},
    {"resnet.down64 14x14x32 s2", 128, 14, 14, 32, 64, 3, 2, 1},
    {"resnet.proj32 1x1 s2", 128, 28, 28, 16, 32, 1, 2, 0},
};

double median_us(const std::vector<double>& v) {
  std::vector<double> s = v;
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

template <typename Fn>
double time_us(stream& s, int repeat, Fn&& run) {
  for (int i = 0; i < 3; ++i) run();
  s.wait();
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    const auto a = std::chrono::steady_clock::now();
    run();
    s.wait();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a)
                    .count());
  }
  return median_us(t);
}

memory filled(const memory::desc& md, const engine& eng) {
  memory m(md, eng);
  // Bytes that are small floats in f32 and in bf16 alike: 0x3c 0x3c... (~0.0115 / 0.0115).
  std::memset(m.get_data_handle(), 0x3c, md.get_size());
  return m;
}

void run_case(const ConvCase& c, dt type, int repeat, engine& eng, stream& s) {
  const int64_t oh = (c.h + 2 * c.pad - c.k) / c.stride + 1, ow = (c.w + 2 * c.pad - c.k) / c.stride + 1;
  const memory::dims x_dims = {c.n, c.ci, c.h, c.w}, w_dims = {c.co, c.ci, c.k, c.k},
                     y_dims = {c.n, c.co, oh, ow};
  const memory::dims strides = {c.stride, c.stride}, pad = {c.pad, c.pad};
  const memory::desc x_md(x_dims, type, tag::nhwc), y_md(y_dims, type, tag::nhwc);
  const memory::desc w_any(w_dims, type, tag::any);
  const memory::desc dw_any(w_dims, dt::f32, tag::any);  // weight gradients accumulate in f32
  const double flops = 2.0 * c.n * oh * ow * c.co * c.ci * c.k * c.k;
  const char* tname = type == dt::bf16 ? "bf16" : "f32";
  auto report = [&](const char* pass, double us, const char* impl) {
    std::printf("%-28s %-16s %-5s %9.1f us %7.1f GFLOP/s  %s\n", c.name, pass, tname, us,
                flops / us * 1e-3, impl);
  };
#if DNNL_VERSION_MAJOR >= 3
  convolution_forward::primitive_desc fwd(eng, prop_kind::forward_training,
                                          algorithm::convolution_direct, x_md, w_any, y_md,
                                          strides, pad, pad);
  convolution_backward_data::primitive_desc bwd_d(eng, algorithm::convolution_direct, x_md,
                                                  w_any, y_md, strides, pad, pad, fwd);
  convolution_backward_weights::primitive_desc bwd_w(eng, algorithm::convolution_direct, x_md,
                                                     dw_any, y_md, strides, pad, pad, fwd);
#else
  convolution_forward::primitive_desc fwd(
      convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct, x_md,
                                w_any, y_md, strides, pad, pad),
      eng);
  convolution_backward_data::primitive_desc bwd_d(
      convolution_backward_data::desc(algorithm::convolution_direct, x_md, w_any, y_md, strides,
                                      pad, pad),
      eng, fwd);
  convolution_backward_weights::primitive_desc bwd_w(
      convolution_backward_weights::desc(algorithm::convolution_direct, x_md, dw_any, y_md,
                                         strides, pad, pad),
      eng, fwd);
#endif
  memory x = filled(x_md, eng), y = filled(y_md, eng), w = filled(fwd.weights_desc(), eng);
  memory wd = filled(bwd_d.weights_desc(), eng), dw = filled(bwd_w.diff_weights_desc(), eng);
  {
    convolution_forward p(fwd);
    const double us = time_us(s, repeat, [&] {
      p.execute(s, {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, y}});
    });
    report("forward", us, fwd.impl_info_str());
  }
  if (c.ci > 1) {  // training never needs the image's gradient at the first layer
    convolution_backward_data p(bwd_d);
    const double us = time_us(s, repeat, [&] {
      p.execute(s, {{DNNL_ARG_DIFF_DST, y}, {DNNL_ARG_WEIGHTS, wd}, {DNNL_ARG_DIFF_SRC, x}});
    });
    report("backward_data", us, bwd_d.impl_info_str());
  }
  {
    convolution_backward_weights p(bwd_w);
    const double us = time_us(s, repeat, [&] {
      p.execute(s, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DIFF_DST, y}, {DNNL_ARG_DIFF_WEIGHTS, dw}});
    });
    report("backward_weights", us, bwd_w.impl_info_str());
  }
}

int main(int argc, char** argv) {
  int repeat = 21;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--repeat") repeat = std::max(1, std::atoi(argv[i + 1]));
  const dnnl_version_t* v = dnnl_version();
  std::printf("oneDNN %d.%d.%d (%s), cpu runtime %s\n", v->major, v->minor, v->patch, v->hash,
              v->cpu_runtime == DNNL_RUNTIME_OMP   ? "OpenMP"
              : v->cpu_runtime == DNNL_RUNTIME_TBB ? "TBB"
                                                   : "other");
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  for (const ConvCase& c : kCases)
    for (dt type : {dt::f32, dt::bf16}) {
      try {
        run_case(c, type, repeat, eng, s);
      } catch (const dnnl::error& e) {
        std::printf("%-28s %-5s unavailable: %s\n", c.name, type == dt::bf16 ? "bf16" : "f32",
                    e.what());
      }
    }
  return 0;
}
