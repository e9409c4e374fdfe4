// core/ops/samples_gather.cc: samples of gather and scatter_add (infer_gather.cc): ids of
// rank 0, 1 (B) and 2 (B,T), i32 and i64, repeated ids (more ids than rows, so scatter_add
// sums several rows into one), rows of rank 0 (params (R)), 1 and 2, a single row (R = 1),
// and gather of u8 and i64 params. The schema has no zero-sized tensors, so no empty batch.
// Ids are in range: an out-of-range id is an error (reference, cpu), tested by their units.
#include "samples.hpp"

namespace dlrt::ops::samples {

namespace {
struct Geometry {
  Dims ids;   // I...
  Dims row;   // D...
  int64_t r;  // rows
  dlrt_dtype id_type;
  const char* note;
};
const Geometry kGeometries[] = {
    {{7}, {3}, 10, DLRT_I32, ""},
    {{4, 5}, {6}, 3, DLRT_I64, "rank-2 ids (B,T), repeated"},
    {{12}, {2, 3}, 4, DLRT_I32, "repeated ids, rows (2,3)"},
    {{}, {5}, 6, DLRT_I64, "a scalar id"},
    {{3, 2}, {}, 5, DLRT_I32, "rows of rank 0: params (R)"},
    {{9}, {4}, 1, DLRT_I64, "one row: every id 0"},
    {{2, 3, 4}, {17}, 40, DLRT_I32, "rank-3 ids, odd row length"},
};

Dims concat_dims(Dims a, const Dims& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
}  // namespace

std::vector<Sample> gather(const OpDef&) {
  std::vector<Sample> out;
  const Values u = uniform(-2, 2);
  for (const Geometry& g : kGeometries) {
    Sample s{{f32_in("params", concat_dims({g.r}, g.row), u),
              typed_in("indices", g.id_type, g.ids, integers(0, static_cast<double>(g.r - 1)))}};
    s.note = g.note;
    out.push_back(std::move(s));
  }
  out.push_back({{typed_in("params", DLRT_U8, {12, 28}, integers(0, 255)),
                  typed_in("indices", DLRT_I32, {4, 5}, integers(0, 11))},
                 {},
                 false,
                 "u8 rows (byte images)"});
  out.push_back({{typed_in("params", DLRT_I64, {6, 3}, integers(-1000, 1000)),
                  typed_in("indices", DLRT_I64, {5}, integers(0, 5))},
                 {},
                 false,
                 "i64 rows"});
  out.push_back({{typed_in("params", DLRT_U16, {7, 3}, bits()),
                  typed_in("indices", DLRT_I32, {4}, integers(0, 6))},
                 {},
                 false,
                 "u16 rows (2-byte elements)"});
  out.push_back({{typed_in("params", DLRT_U64, {5, 2}, bits()),
                  typed_in("indices", DLRT_I64, {3}, integers(0, 4))},
                 {},
                 false,
                 "u64 rows"});
  return out;
}

std::vector<Sample> scatter_add(const OpDef&) {
  std::vector<Sample> out;
  const Values u = uniform(-2, 2);
  for (const Geometry& g : kGeometries) {
    Sample s{{typed_in("indices", g.id_type, g.ids, integers(0, static_cast<double>(g.r - 1))),
              f32_in("updates", concat_dims(g.ids, g.row), u)},
             {{"num_rows", g.r}}};
    s.note = g.note;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace dlrt::ops::samples
