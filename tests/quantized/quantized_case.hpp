// Random quantized calls for the tests: parameters (scales log-uniform over
// 1e-4..10, zero points with the type's extremes, both roundings, every
// activation, the int16 power-of-two and general paths), broadcast shapes up
// to 6-D in every mode, strided views (transposed, gapped, negative, 0 on
// inputs) and in-place outputs; the expected output from quantized_oracle.hpp
// walking the views index by index.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "quantized_oracle.hpp"
#include "sqdiff/sqdiff.hpp"

namespace sqdiff_test::quantized {

namespace qo = quantized_oracle;
using sqdiff::Activation;
using sqdiff::Broadcast;
using sqdiff::BroadcastKind;
using sqdiff::DType;
using sqdiff::QuantParams;
using sqdiff::Requantize;
using sqdiff::Shape;

inline std::size_t element_size(DType dtype) { return dtype == DType::i16 ? 2 : 1; }

inline int64_t read_element(DType dtype, const std::byte* p) {
  if (dtype == DType::i8) return static_cast<int8_t>(*p);
  if (dtype == DType::u8) return static_cast<uint8_t>(*p);
  int16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

inline void write_element(DType dtype, std::byte* p, int64_t v) {
  if (dtype == DType::i16) {
    const auto x = static_cast<int16_t>(v);
    std::memcpy(p, &x, 2);
  } else {
    *p = static_cast<std::byte>(static_cast<uint8_t>(v));
  }
}

inline std::string shape_text(const Shape& s) {
  std::ostringstream o;
  o << '[';
  for (std::size_t i = 0; i < s.size(); ++i) o << (i ? "," : "") << s[i];
  o << ']';
  return o.str();
}

// A view over its own buffer: `base` elements into `storage`.
struct View {
  Shape shape;
  Shape strides;  // explicit, in elements
  std::vector<std::byte> storage;
  int64_t base = 0;
  std::byte* data() { return storage.data() + base * static_cast<int64_t>(esize); }
  std::size_t esize = 1;

  int64_t offset(const std::vector<int64_t>& index) const {
    int64_t o = base;
    for (std::size_t i = 0; i < index.size(); ++i) o += index[i] * strides[i];
    return o;
  }
};

// Strides nested along a random order of the dims (so the view never reaches
// one element twice), with gaps and reversed dims; inputs may also take stride
// 0 on a dim (an input view may repeat elements).
inline View make_view(std::mt19937_64& rng, const Shape& shape, std::size_t esize, bool is_output, bool dense) {
  View v;
  v.shape = shape;
  v.esize = esize;
  const std::size_t rank = shape.size();
  v.strides.assign(rank, 0);
  std::vector<std::size_t> order(rank);
  for (std::size_t i = 0; i < rank; ++i) order[i] = rank - 1 - i;  // innermost first
  if (!dense && rng() % 3 == 0) std::shuffle(order.begin(), order.end(), rng);
  int64_t reach = 1;  // of the dims placed so far: the next stride must exceed it
  for (const std::size_t d : order) {
    if (!dense && shape[d] == 1 && rng() % 2 == 0) {
      v.strides[d] = static_cast<int64_t>(rng() % 1000) - 500;  // a size-1 dim never moves
      continue;
    }
    int64_t stride = reach;
    if (!dense) {
      if (rng() % 4 == 0) stride *= 1 + static_cast<int64_t>(rng() % 3);  // gaps
      if (rng() % 4 == 0) stride = -stride;
      if (!is_output && rng() % 8 == 0) stride = 0;  // an input may repeat elements
    }
    v.strides[d] = stride;
    if (stride != 0) reach = std::abs(stride) * std::max<int64_t>(shape[d], 1);
  }
  int64_t low = 0;
  int64_t high = 0;
  for (std::size_t d = 0; d < rank; ++d) {
    if (shape[d] == 0) continue;
    const int64_t extent = (shape[d] - 1) * v.strides[d];
    (extent < 0 ? low : high) += extent;
  }
  const int64_t slack = dense ? 0 : static_cast<int64_t>(rng() % 3);
  v.base = -low + slack;
  v.storage.assign(static_cast<std::size_t>((high - low + 1 + 2 * slack) * static_cast<int64_t>(esize)), std::byte{0});
  return v;
}

inline void fill_random(std::mt19937_64& rng, View& v, DType dtype) {
  const qo::TypeLimits lim = qo::limits(dtype);
  for (std::size_t i = 0; i < v.storage.size(); i += v.esize) {
    int64_t x;
    switch (rng() % 8) {
      case 0: x = lim.min; break;
      case 1: x = lim.max; break;
      default: x = lim.min + static_cast<int64_t>(rng() % static_cast<uint64_t>(lim.max - lim.min + 1));
    }
    write_element(dtype, v.storage.data() + i, x);
  }
}

inline float log_uniform_scale(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(std::log(1e-4), std::log(10.0));
  return static_cast<float>(std::exp(u(rng)));
}

inline int32_t random_zero_point(std::mt19937_64& rng, DType dtype) {
  if (dtype == DType::i16) return 0;
  const qo::TypeLimits lim = qo::limits(dtype);
  switch (rng() % 6) {
    case 0: return static_cast<int32_t>(lim.min);
    case 1: return static_cast<int32_t>(lim.max);
    default: return static_cast<int32_t>(lim.min + static_cast<int64_t>(rng() % static_cast<uint64_t>(lim.max - lim.min + 1)));
  }
}

// Scales for the int16 power-of-two path: the output's 2^k, one input's the
// same and the other's 2^(k - j); now and then a hair off the power (within
// CheckedLog2's 1e-3 in the log domain), and now and then a combination that
// LiteRT refuses.
inline void power_of_two_scales(std::mt19937_64& rng, qo::Config& c) {
  const int k = static_cast<int>(rng() % 24) - 18;
  const int j = static_cast<int>(rng() % 20);
  const float out = std::ldexp(1.0f, k);
  const float other = std::ldexp(1.0f, k - j);
  const bool a_shifted = rng() % 2 == 0;
  c.qout.scale = out;
  c.qa.scale = a_shifted ? other : out;
  c.qb.scale = a_shifted ? out : other;
  if (rng() % 6 == 0) c.qa.scale *= 1.0004f;  // log2 off by ~6e-4: still a power of two
  if (rng() % 10 == 0) c.qb.scale = std::ldexp(1.0f, k + 1);  // b above the output: refused
}

inline qo::Config random_config(std::mt19937_64& rng, qo::Op op, DType dtype) {
  qo::Config c;
  c.op = op;
  c.dtype = dtype;
  c.rounding = rng() % 2 == 0 ? Requantize::double_rounding : Requantize::single_rounding;
  c.qa = {log_uniform_scale(rng), random_zero_point(rng, dtype)};
  c.qb = {log_uniform_scale(rng), random_zero_point(rng, dtype)};
  c.qout = {log_uniform_scale(rng), random_zero_point(rng, dtype)};
  if (rng() % 5 == 0) c.qb.scale = c.qa.scale;  // equal input scales: multipliers of exactly 1/2
  if (op == qo::Op::subtract) {
    c.activation = static_cast<Activation>(rng() % 4);
    if (dtype == DType::i16) {
      c.pot_scale_int16 = rng() % 4 != 0;
      if (rng() % 2 == 0) power_of_two_scales(rng, c);
    }
    const int left = dtype == DType::i16 ? 15 : 20;
    const float smallest_out = std::ldexp(2.0f * std::max(c.qa.scale, c.qb.scale), -left);
    if (rng() % 25 == 0) {
      // An output scale the general subtract refuses (at or below 2 max / 2^left).
      c.qout.scale = smallest_out * (rng() % 2 ? 1.0f : 0.75f);
    } else if (rng() % 4 == 0) {
      // Output multipliers in (1/9, 1): the output step is about the scaled
      // inputs' step, so every rounding of the input stage shows in the output.
      c.qout.scale = smallest_out * (1.0f + 8.0f * std::uniform_real_distribution<float>(0.001f, 1.0f)(rng));
    }
  } else if (rng() % 50 == 0) {
    c.activation = static_cast<Activation>(1 + rng() % 3);  // refused: squared_difference has none
  } else if (rng() % 6 == 0) {
    // Tiny output scales: output multipliers far above 1 (TFLite-Micro's left shift).
    c.qout.scale = static_cast<float>(c.qout.scale * 1e-6);
  }
  return c;
}

struct Shapes {
  Shape a, b, out;
  Broadcast mode;
};

inline Shape random_dims(std::mt19937_64& rng, int rank, int64_t budget) {
  Shape s(static_cast<std::size_t>(rank));
  for (int i = 0; i < rank; ++i) {
    const bool inner = i == rank - 1;
    // Inner rows of up to 70 elements cross vector lengths; the others stay small.
    s[static_cast<std::size_t>(i)] = inner && rng() % 3 == 0 ? 1 + static_cast<int64_t>(rng() % 70)
                                                             : 1 + static_cast<int64_t>(rng() % 4);
    if (rng() % 40 == 0) s[static_cast<std::size_t>(i)] = 0;
  }
  while (true) {  // within the budget
    int64_t n = 1;
    for (const int64_t d : s) n *= std::max<int64_t>(d, 1);
    if (n <= budget) break;
    for (auto& d : s) d = std::max<int64_t>(1, d / 2);
  }
  return s;
}

// An input broadcast to `out` in numpy's way: a suffix of its dims, some 1.
inline Shape numpy_input(std::mt19937_64& rng, const Shape& out) {
  const std::size_t rank = out.size() - static_cast<std::size_t>(rng() % (out.size() + 1)) * (rng() % 2);
  Shape s(out.end() - static_cast<std::ptrdiff_t>(rank), out.end());
  for (auto& d : s) {
    if (rng() % 3 == 0) d = 1;
  }
  return s;
}

inline Shapes random_shapes(std::mt19937_64& rng, int64_t budget) {
  Shapes r;
  const int rank = static_cast<int>(rng() % 7);
  const Shape out = random_dims(rng, rank, budget);
  switch (rng() % 4) {
    case 0:
      r.mode = {BroadcastKind::none, -1};
      r.a = r.b = r.out = out;
      break;
    case 1: {
      r.mode = {BroadcastKind::pdpd, -1};
      r.a = r.out = out;
      const std::size_t rank_b = static_cast<std::size_t>(rng() % (out.size() + 1));
      const std::size_t axis = out.size() - rank_b == 0 ? 0 : static_cast<std::size_t>(rng() % (out.size() - rank_b + 1));
      r.b.assign(out.begin() + static_cast<std::ptrdiff_t>(axis), out.begin() + static_cast<std::ptrdiff_t>(axis + rank_b));
      for (auto& d : r.b) {
        if (rng() % 3 == 0) d = 1;
      }
      r.mode.axis = rng() % 2 == 0 && axis + rank_b == out.size() ? -1 : static_cast<int64_t>(axis);
      break;
    }
    default:
      r.mode = {BroadcastKind::numpy, -1};
      r.a = numpy_input(rng, out);
      r.b = numpy_input(rng, out);
      r.out = sqdiff::broadcast_shape(r.a, r.b, r.mode);
  }
  return r;
}

// The element offset where input view `v` (aligned at `first` in the output's
// dims) reads for output index `index` (a dim of size 1 is broadcast).
inline int64_t input_offset(const View& v, std::size_t first, const std::vector<int64_t>& index) {
  int64_t o = v.base;
  for (std::size_t j = 0; j < v.shape.size(); ++j) {
    if (v.shape[j] != 1) o += index[first + j] * v.strides[j];
  }
  return o;
}

inline void for_each_index(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& fn) {
  for (const int64_t d : shape) {
    if (d == 0) return;
  }
  std::vector<int64_t> index(shape.size(), 0);
  while (true) {
    fn(index);
    std::size_t d = shape.size();
    while (d > 0) {
      --d;
      if (++index[d] < shape[d]) break;
      index[d] = 0;
      if (d == 0) return;
    }
    if (shape.empty()) return;
  }
}

inline void call(const qo::Config& c, const sqdiff::ConstTensorView& a, const sqdiff::ConstTensorView& b,
                 const sqdiff::TensorView& out, Broadcast mode, int threads) {
  sqdiff::QuantizedOptions options;
  options.broadcast = mode;
  options.activation = c.activation;
  options.rounding = c.rounding;
  options.pot_scale_int16 = c.pot_scale_int16;
  options.threads = threads;
  if (c.op == qo::Op::subtract) {
    sqdiff::quantized_subtract(a, c.qa, b, c.qb, out, c.qout, options);
  } else {
    sqdiff::quantized_squared_difference(a, c.qa, b, c.qb, out, c.qout, options);
  }
}

inline std::string describe(const qo::Config& c, const Shapes& s) {
  std::ostringstream o;
  o.precision(9);
  o << (c.op == qo::Op::subtract ? "subtract " : "squared_difference ") << sqdiff::dtype_name(c.dtype)
    << " a(" << c.qa.scale << "," << c.qa.zero_point << ") b(" << c.qb.scale << "," << c.qb.zero_point << ") out("
    << c.qout.scale << "," << c.qout.zero_point << ") act " << static_cast<int>(c.activation) << " rounding "
    << static_cast<int>(c.rounding) << " pot " << c.pot_scale_int16 << " shapes " << shape_text(s.a) << " "
    << shape_text(s.b) << " -> " << shape_text(s.out) << " mode " << static_cast<int>(s.mode.kind) << " axis "
    << s.mode.axis;
  return o.str();
}

// One random call against the oracle: dense or strided views, or in place on
// a or b; refused parameters must throw and leave every output byte as it was.
// Returns the number of elements checked (0 for a refused call).
inline int64_t run_random_case(std::mt19937_64& rng, const qo::Config& c, const Shapes& s, int threads, bool dense) {
  const std::size_t es = element_size(c.dtype);
  View a = make_view(rng, s.a, es, false, dense);
  View b = make_view(rng, s.b, es, false, dense);
  fill_random(rng, a, c.dtype);
  fill_random(rng, b, c.dtype);
  // In place: the output is exactly a's (or b's) view, when that has the output's shape.
  const int in_place = dense || rng() % 4 != 0 ? 0 : 1 + static_cast<int>(rng() % 2);
  View own_out = make_view(rng, s.out, es, true, dense);
  View* out = &own_out;
  if (in_place == 1 && a.shape == s.out && !std::count(a.strides.begin(), a.strides.end(), 0)) out = &a;
  if (in_place == 2 && b.shape == s.out && !std::count(b.strides.begin(), b.strides.end(), 0)) out = &b;
  if (out == &own_out) fill_random(rng, own_out, c.dtype);
  // The inputs as they were, for the oracle (the output may overwrite one).
  const View a_before = a;
  const View b_before = b;
  const std::vector<std::byte> out_before = out->storage;

  const sqdiff::ConstTensorView va{a.data(), c.dtype, a.shape, a.strides};
  const sqdiff::ConstTensorView vb{b.data(), c.dtype, b.shape, b.strides};
  const sqdiff::TensorView vo{out->data(), c.dtype, out->shape, out->strides};
  const qo::Prepared p = qo::prepare(c);
  const std::string what = describe(c, s) + " threads " + std::to_string(threads) + " in_place " +
                           std::to_string(in_place) + (dense ? " dense" : " strided");
  if (p.refused) {
    bool threw = false;
    try {
      call(c, va, vb, vo, s.mode, threads);
    } catch (const sqdiff::Error&) {
      threw = true;
    }
    EXPECT_TRUE(threw) << "expected an error (" << *p.refused << "): " << what;
    EXPECT_TRUE(out->storage == out_before) << "a refused call wrote: " << what;
    return 0;
  }
  call(c, va, vb, vo, s.mode, threads);

  const std::size_t first_a = s.mode.kind == BroadcastKind::pdpd ? 0 : s.out.size() - s.a.size();
  const std::size_t first_b = s.mode.kind == BroadcastKind::pdpd
                                  ? (s.mode.axis == -1 ? s.out.size() - s.b.size() : static_cast<std::size_t>(s.mode.axis))
                                  : s.out.size() - s.b.size();
  std::vector<std::byte> expected = out_before;
  int64_t count = 0;
  for_each_index(s.out, [&](const std::vector<int64_t>& index) {
    const int64_t x = read_element(c.dtype, a_before.storage.data() + input_offset(a_before, first_a, index) * static_cast<int64_t>(es));
    const int64_t y = read_element(c.dtype, b_before.storage.data() + input_offset(b_before, first_b, index) * static_cast<int64_t>(es));
    write_element(c.dtype, expected.data() + out->offset(index) * static_cast<int64_t>(es), qo::element(c, p, x, y));
    ++count;
  });
  if (out->storage != expected) {
    int64_t shown = 0;
    for_each_index(s.out, [&](const std::vector<int64_t>& index) {
      const int64_t at = out->offset(index) * static_cast<int64_t>(es);
      const int64_t got = read_element(c.dtype, out->storage.data() + at);
      const int64_t want = read_element(c.dtype, expected.data() + at);
      if (got != want && shown++ < 3) ADD_FAILURE() << "element " << shape_text(index) << ": got " << got << ", expected " << want;
    });
    ADD_FAILURE() << "mismatch (or a write outside the output's elements): " << what;
  }
  return count;
}

}  // namespace sqdiff_test::quantized
