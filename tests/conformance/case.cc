// tests/conformance/case.cc: the pieces of case.hpp that are not the table itself (that is
// cases_from_schema.cc): random numbers, host tensors, value generators, attributes and
// descriptions.
#include "case.hpp"

#include "narrow_float.hpp"  // plugins/common

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>

namespace dlrt::conformance {

// ---- random numbers ------------------------------------------------------------------------

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double Rng::uniform(double lo, double hi) {
  const double u = static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);  // [0,1)
  return lo + (hi - lo) * u;
}

int64_t Rng::integer(int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int64_t>(next() % span);
}

uint64_t case_seed(uint64_t run_seed, const std::string& op, size_t index) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the op name
  for (unsigned char c : op) h = (h ^ c) * 1099511628211ull;
  Rng mix(run_seed ^ h ^ (static_cast<uint64_t>(index) * 0xD1B54A32D192ED03ull));
  return mix.next();
}

// ---- host tensors --------------------------------------------------------------------------

size_t dtype_size(dlrt_dtype dtype) { return dlrt_dtype_size(dtype); }

const char* dtype_name(dlrt_dtype dtype) {
  const char* name = dlrt_dtype_name(dtype);
  return name != nullptr ? name : "invalid";
}

int64_t num_elements(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string format_dims(const Dims& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + ")";
}

namespace {
template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}
}  // namespace

HostTensor::HostTensor(dlrt_dtype t, Dims d) : dtype(t), dims(std::move(d)) {
  if (dtype_size(dtype) == 0)
    throw std::invalid_argument(std::string("conformance: no host conversion for ") +
                                dtype_name(dtype));
  bytes.assign(static_cast<size_t>(size()) * dtype_size(dtype), 0);
}

double HostTensor::get(int64_t i) const {
  const uint8_t* p = bytes.data() + static_cast<size_t>(i) * dtype_size(dtype);
  switch (dtype) {
    case DLRT_F32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DLRT_F64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case DLRT_I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DLRT_I64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case DLRT_U8:
      return *p;
    case DLRT_I8:
      return static_cast<int8_t>(*p);
    case DLRT_U16:
      return load<uint16_t>(p);
    case DLRT_I16:
      return load<int16_t>(p);
    case DLRT_U32:
      return load<uint32_t>(p);
    case DLRT_U64:  // nearest double above 2^53; compare() checks integers by their bytes
      return static_cast<double>(load<uint64_t>(p));
    case DLRT_BOOL:
      return *p;
    case DLRT_F16:
    case DLRT_BF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return plugin::narrow_to_double(dtype, h);
    }
    default:
      return NAN;
  }
}

void HostTensor::set(int64_t i, double v) {
  uint8_t* p = bytes.data() + static_cast<size_t>(i) * dtype_size(dtype);
  switch (dtype) {
    case DLRT_F32: {
      float x = static_cast<float>(v);
      std::memcpy(p, &x, 4);
      break;
    }
    case DLRT_F64:
      std::memcpy(p, &v, 8);
      break;
    case DLRT_I32: {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(p, &x, 4);
      break;
    }
    case DLRT_I64: {
      int64_t x = static_cast<int64_t>(v);
      std::memcpy(p, &x, 8);
      break;
    }
    case DLRT_U8:
      *p = static_cast<uint8_t>(v);
      break;
    case DLRT_I8:
      *p = static_cast<uint8_t>(static_cast<int8_t>(v));
      break;
    // The fills make integer values in the dtype's range (bits() writes bytes, not here);
    // through int64 the conversions are defined for every such value below 2^63.
    case DLRT_U16:
      store(p, static_cast<uint16_t>(static_cast<int64_t>(v)));
      break;
    case DLRT_I16:
      store(p, static_cast<int16_t>(static_cast<int64_t>(v)));
      break;
    case DLRT_U32:
      store(p, static_cast<uint32_t>(static_cast<int64_t>(v)));
      break;
    case DLRT_U64:
      store(p, static_cast<uint64_t>(static_cast<int64_t>(v)));
      break;
    case DLRT_BOOL:
      *p = v != 0 ? 1 : 0;
      break;
    case DLRT_F16:
    case DLRT_BF16: {  // rounded to nearest, ties to even (what a device stores)
      const uint16_t h = plugin::double_to_narrow(dtype, v);
      std::memcpy(p, &h, 2);
      break;
    }
    default:
      break;
  }
}

std::string HostTensor::index_text(int64_t i) const {
  std::vector<int64_t> idx(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    idx[k] = i % dims[k];
    i /= dims[k];
  }
  std::string s = "[";
  for (size_t k = 0; k < idx.size(); ++k) s += (k ? "," : "") + std::to_string(idx[k]);
  return s + "]";
}

dlrt_tensor_desc HostTensor::desc() const {
  dlrt_tensor_desc d{};
  d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
  d.dtype = dtype;
  d.rank = static_cast<int32_t>(dims.size());
  for (size_t k = 0; k < dims.size(); ++k) d.dims[k] = dims[k];
  d.layout = DLRT_LAYOUT_DENSE;
  return d;
}

// ---- value generators ----------------------------------------------------------------------

Fill uniform(double lo, double hi) {
  return [=](Rng& rng, HostTensor& t, const std::vector<HostTensor>&) {
    for (int64_t i = 0; i < t.size(); ++i) t.set(i, rng.uniform(lo, hi));
  };
}

Fill away_from_zero(double lo, double hi) {
  return [=](Rng& rng, HostTensor& t, const std::vector<HostTensor>&) {
    for (int64_t i = 0; i < t.size(); ++i) {
      const double m = rng.uniform(lo, hi);
      t.set(i, rng.coin() ? m : -m);
    }
  };
}

Fill distinct(double lo, double hi) {
  return [=](Rng& rng, HostTensor& t, const std::vector<HostTensor>&) {
    const int64_t n = t.size();
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    for (int64_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.integer(0, i)]);
    const double step = (hi - lo) / static_cast<double>(n);
    // Slot k holds lo + step*(k + 0.25..0.75): neighbours stay at least step/2 apart.
    for (int64_t i = 0; i < n; ++i)
      t.set(i, lo + step * (static_cast<double>(order[i]) + rng.uniform(0.25, 0.75)));
  };
}

Fill integers(int64_t lo, int64_t hi) {
  return [=](Rng& rng, HostTensor& t, const std::vector<HostTensor>&) {
    for (int64_t i = 0; i < t.size(); ++i) t.set(i, static_cast<double>(rng.integer(lo, hi)));
  };
}

Fill bits() {
  return [](Rng& rng, HostTensor& t, const std::vector<HostTensor>&) {
    for (uint8_t& b : t.bytes) b = static_cast<uint8_t>(rng.next() >> 56);
  };
}

Fill constant(double v) {
  return [=](Rng&, HostTensor& t, const std::vector<HostTensor>&) {
    for (int64_t i = 0; i < t.size(); ++i) t.set(i, v);
  };
}

// ---- attributes ----------------------------------------------------------------------------

dlrt_attr Attr::c() const {
  dlrt_attr a{};
  a.struct_size = DLRT_STRUCT_SIZE(dlrt_attr);
  a.name = name.c_str();
  a.type = type;
  a.i = i;
  a.f = f;
  a.s = type == DLRT_ATTR_STRING ? s.c_str() : nullptr;
  if (type == DLRT_ATTR_INTS) {
    a.ints = ints.data();
    a.count = ints.size();
  } else if (type == DLRT_ATTR_FLOATS) {
    a.floats = floats.data();
    a.count = floats.size();
  }
  return a;
}

std::string Attr::value_text() const {
  std::ostringstream os;
  switch (type) {
    case DLRT_ATTR_INT:
      os << i;
      break;
    case DLRT_ATTR_FLOAT:
      os << f;
      break;
    case DLRT_ATTR_BOOL:
      os << (i ? "true" : "false");
      break;
    case DLRT_ATTR_STRING:
      os << s;
      break;
    case DLRT_ATTR_DTYPE:
      os << dtype_name(static_cast<dlrt_dtype>(i));
      break;
    case DLRT_ATTR_INTS:
      os << format_dims(ints);
      break;
    case DLRT_ATTR_FLOATS:
      os << "(";
      for (size_t k = 0; k < floats.size(); ++k) os << (k ? "," : "") << floats[k];
      os << ")";
      break;
    default:
      os << "?";
      break;
  }
  return os.str();
}

Attr a_int(std::string name, int64_t v) {
  Attr a;
  a.name = std::move(name);
  a.type = DLRT_ATTR_INT;
  a.i = v;
  return a;
}
Attr a_float(std::string name, double v) {
  Attr a;
  a.name = std::move(name);
  a.type = DLRT_ATTR_FLOAT;
  a.f = v;
  return a;
}
Attr a_bool(std::string name, bool v) {
  Attr a;
  a.name = std::move(name);
  a.type = DLRT_ATTR_BOOL;
  a.i = v ? 1 : 0;
  return a;
}
Attr a_str(std::string name, std::string v) {
  Attr a;
  a.name = std::move(name);
  a.type = DLRT_ATTR_STRING;
  a.s = std::move(v);
  return a;
}
Attr a_ints(std::string name, std::vector<int64_t> v) {
  Attr a;
  a.name = std::move(name);
  a.type = DLRT_ATTR_INTS;
  a.ints = std::move(v);
  return a;
}
Attr a_dtype(std::string name, dlrt_dtype v) {
  Attr a;
  a.name = std::move(name);
  a.type = DLRT_ATTR_DTYPE;
  a.i = v;
  return a;
}

// ---- cases ---------------------------------------------------------------------------------

std::string Case::describe() const {
  std::string s;
  for (size_t k = 0; k < inputs.size(); ++k)
    s += (k ? ", " : "") + inputs[k].name + " " + dtype_name(inputs[k].dtype) +
         format_dims(inputs[k].dims);
  if (inputs.empty()) s = "no inputs";
  if (!attrs.empty()) {
    s += ";";
    for (const Attr& a : attrs) s += " " + a.name + "=" + a.value_text();
  }
  if (!in_place.empty()) s += "; in place";
  if (!note.empty()) s += " [" + note + "]";
  return s;
}

std::vector<HostTensor> Case::make_inputs(Rng& rng) const {
  std::vector<HostTensor> out;
  out.reserve(inputs.size());
  for (const TensorSpec& spec : inputs) {
    HostTensor t(spec.dtype, spec.dims);
    if (spec.fill) spec.fill(rng, t, out);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<const Case*> cases_for(const std::string& op) {
  std::vector<const Case*> out;
  for (const Case& c : all_cases())
    if (c.op == op) out.push_back(&c);
  return out;
}

}  // namespace dlrt::conformance
