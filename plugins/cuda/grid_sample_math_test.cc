// grid_sample_math_test.cc: the per-element code of grid_sample.cu (and of the cpu plugin's
// loop kernel): plugins/common/grid_sample_math.hpp's y_at, dx_band and dgrid_at, run on the
// host and compared with the reference kernels (written separately, after ONNX's reference)
// on every mode x padding_mode x align_corners, both layouts, images one cell high or wide,
// grids reaching past the image, and integer grids whose nearest coordinates are .5 ties.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "grid_sample_geom.hpp"
#include "op_view.hpp"
#include "ops/op_instance.hpp"
#include "ops/shape_util.hpp"
#include "reference_kernels.hpp"

namespace dlrt::cuda {
namespace {

namespace gs = plugin::grid_sample;
using ops::AttrMap;

ops::OpInstance make(const std::string& name, const std::vector<ops::TensorType>& inputs,
                     const AttrMap& attrs) {
  auto r = ops::instantiate(name, inputs, attrs);
  EXPECT_TRUE(r.ok()) << name << ": " << r.status().to_string();
  return std::move(r).value();
}

void reference_run(const ops::OpInstance& inst, const std::vector<const void*>& in,
                   const std::vector<void*>& out) {
  plugin::OpView op(&inst.desc());
  reference::check_supported(op);
  reference::run(op, in.data(), out.data(), 0);
}

std::vector<float> values(size_t n, uint32_t seed, float lo, float hi, bool integers = false) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = integers ? static_cast<float>(static_cast<int>(d(gen))) : d(gen);
  return v;
}

TEST(GridSampleMath, MatchesReferenceInEveryMode) {
  struct Geometry {
    const char* format;
    int64_t n, h, w, c, oh, ow;
  };
  const Geometry geometries[] = {
      {"NHWC", 1, 3, 4, 2, 5, 3}, {"NCHW", 2, 4, 5, 3, 3, 4}, {"NHWC", 2, 1, 6, 3, 2, 2},
      {"NCHW", 1, 5, 1, 2, 4, 3}, {"NHWC", 1, 4, 6, 1, 6, 5},
  };
  uint32_t seed = 7;
  for (const Geometry& geo : geometries)
    for (const char* mode : {"bilinear", "nearest", "bicubic"})
      for (const char* pad : {"zeros", "border", "reflection"})
        for (bool align : {false, true})
          for (bool ties : {false, true}) {
            SCOPED_TRACE(std::string(geo.format) + " " + std::to_string(geo.h) + "x" +
                         std::to_string(geo.w) + " " + mode + " " + pad +
                         (align ? " align" : "") + (ties ? " integer grid" : ""));
            const std::vector<int64_t> xd = ops::image_dims(geo.format, geo.n, geo.h, geo.w, geo.c);
            const std::vector<int64_t> gd = {geo.n, geo.oh, geo.ow, 2};
            const std::vector<int64_t> yd =
                ops::image_dims(geo.format, geo.n, geo.oh, geo.ow, geo.c);
            const AttrMap attrs{{"data_format", geo.format},
                                {"mode", mode},
                                {"padding_mode", pad},
                                {"align_corners", align}};
            auto fwd = make("grid_sample", {{DLRT_F32, xd}, {DLRT_F32, gd}}, attrs);
            const size_t nx = size_t(ops::num_elements(xd)), ng = size_t(ops::num_elements(gd)),
                         ny = size_t(ops::num_elements(yd));
            const std::vector<float> x = values(nx, seed++, -2, 2);
            // Integers in [-2, 2]: coordinates on cell centres, edges and .5 ties.
            const std::vector<float> grid =
                ties ? values(ng, seed++, -2.99f, 2.99f, true) : values(ng, seed++, -1.6f, 1.6f);
            std::vector<float> y(ny);
            reference_run(fwd, {x.data(), grid.data()}, {y.data()});
            const gs::Geom g = gs::geom_of(plugin::OpView(&fwd.desc()));
            for (int64_t j = 0; j < int64_t(ny); ++j)
              EXPECT_NEAR(gs::y_at(g, x.data(), grid.data(), j), y[size_t(j)], 1e-5) << j;

            auto bwd = make("grid_sample_grad", {{DLRT_F32, yd}, {DLRT_F32, xd}, {DLRT_F32, gd}},
                            attrs);
            const std::vector<float> dy = values(ny, seed++, -2, 2);
            std::vector<float> dx(nx), dgrid(ng);
            reference_run(bwd, {dy.data(), x.data(), grid.data()}, {dx.data(), dgrid.data()});
            const gs::Geom bg = gs::geom_of(plugin::OpView(&bwd.desc()));
            std::vector<float> first;
            for (int64_t bands : {int64_t{1}, int64_t{2}, geo.h}) {
              std::vector<float> got(nx, 99.0f);  // poisoned: every cell must be written
              for (int64_t t = 0; t < gs::dx_threads(bg, bands); ++t)
                gs::dx_band(bg, dy.data(), grid.data(), got.data(), t, bands);
              for (size_t k = 0; k < nx; ++k) EXPECT_NEAR(got[k], dx[k], 1e-5) << "bands " << bands << " dx " << k;
              if (first.empty()) first = got;
              EXPECT_EQ(got, first) << "bands " << bands << ": not the same bits";
            }
            for (int64_t p = 0; p < bg.points(); ++p) {
              double gx, gy;
              gs::dgrid_at(bg, dy.data(), x.data(), grid.data(), p, &gx, &gy);
              EXPECT_NEAR(gx, dgrid[size_t(2 * p)], 1e-4 * std::max(1.0, std::fabs(gx))) << p;
              EXPECT_NEAR(gy, dgrid[size_t(2 * p + 1)], 1e-4 * std::max(1.0, std::fabs(gy))) << p;
            }
          }
}

// Known values: the coordinate rules at the ends of an axis of 4, mirrors, and Keys' weights.
TEST(GridSampleMath, KnownCoordinatesAndWeights) {
  gs::Geom g;
  g.w = 4;
  gs::Taps t = gs::axis_taps(g, -1.0, 4);  // -1 is the outer edge: u = -0.5, taps -1 (0) and 0
  EXPECT_EQ(t.index[0], -1);
  EXPECT_EQ(t.index[1], 0);
  EXPECT_DOUBLE_EQ(t.w[1], 0.5);
  EXPECT_DOUBLE_EQ(t.dcoord, 2.0);  // du/dg = L/2
  g.align = true;
  t = gs::axis_taps(g, 1.0, 4);  // the last cell's centre: u = 3
  EXPECT_EQ(t.index[0], 3);
  EXPECT_DOUBLE_EQ(t.w[0], 1.0);
  EXPECT_DOUBLE_EQ(t.dcoord, 1.5);  // (L-1)/2
  g.align = false, g.mode = gs::kNearest;
  EXPECT_EQ(gs::axis_taps(g, 0.0, 4).index[0], 2);   // u = 1.5: to even, 2
  EXPECT_EQ(gs::axis_taps(g, -0.5, 4).index[0], 0);  // u = 0.5: to even, 0
  double s;
  EXPECT_DOUBLE_EQ(gs::reflect(-1.25, -0.5, 3.5, &s), 0.25);
  EXPECT_EQ(s, -1.0);
  EXPECT_DOUBLE_EQ(gs::reflect(8.0, -0.5, 3.5, &s), -0.5 + 0.5);  // mirrored at 3.5, then -0.5
  EXPECT_EQ(s, 1.0);
  EXPECT_DOUBLE_EQ(gs::reflect(5.0, 0.0, 0.0, &s), 0.0);  // one cell: nothing to mirror
  EXPECT_DOUBLE_EQ(gs::keys(0), 1.0);
  EXPECT_DOUBLE_EQ(gs::keys(1), 0.0);
  EXPECT_DOUBLE_EQ(gs::keys(2), 0.0);
  // The four weights of any fraction sum to 1, and their slopes to 0.
  for (double f : {0.0, 0.25, 0.5, 0.9}) {
    EXPECT_NEAR(gs::keys(1 + f) + gs::keys(f) + gs::keys(1 - f) + gs::keys(2 - f), 1.0, 1e-12);
    EXPECT_NEAR(gs::keys_slope(1 + f) + gs::keys_slope(f) - gs::keys_slope(1 - f) -
                    gs::keys_slope(2 - f),
                0.0, 1e-12);
  }
}

}  // namespace
}  // namespace dlrt::cuda
