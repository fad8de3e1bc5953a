// fuzz_api's decoding of a call from the fuzzer's bytes (api/call_decoder.hpp):
// the op, types, shapes, layouts, places in the arena, threads and
// quantization parameters, then the arena's values. The order in which the
// bytes are read is what the committed seeds in fuzz/corpus/fuzz_api/ mean:
// change it and they decode to other calls.
#include "api/call_decoder.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>

#include "quantized/quantized_oracle.hpp"
#include "reduce/gmp_oracle.hpp"
#include "sqdiff/error.hpp"
#include "sqdiff/reduce.hpp"

namespace sqdiff_fuzz::api {
namespace {

namespace gmp = sqdiff_test::gmp;
namespace qo = sqdiff_test::quantized_oracle;

// Keeps one input in milliseconds under ASan (the exact reference path costs
// a few hundred ns per term there).
constexpr int64_t kMaxElements = int64_t{1} << 16;

constexpr int64_t kDims[] = {1, 2, 3, 4, 5, 1, 2, 3, 7, 8, 0, 16, 17, 33, 64, 100};

Shape ones_where(FuzzedDataProvider& in, Shape shape) {
  for (int64_t& d : shape) {
    if (in.ConsumeIntegralInRange<int>(0, 2) == 0) d = 1;
  }
  return shape;
}

// A layout for v's shape: dims in a chosen order (dense in that order), each
// gapped, reversed or zeroed at times, or arbitrary small strides.
void choose_strides(FuzzedDataProvider& in, View& v, bool is_output) {
  const std::size_t rank = v.shape.size();
  const int kind = in.ConsumeIntegralInRange<int>(0, 7);
  if (kind <= 1) return;  // dense, strides omitted
  std::vector<std::size_t> order(rank);
  for (std::size_t i = 0; i < rank; ++i) order[i] = i;
  if (kind >= 3) {  // a permutation: the innermost dim first
    for (std::size_t i = rank; i > 1; --i) std::swap(order[i - 1], order[in.ConsumeIntegralInRange<std::size_t>(0, i - 1)]);
  } else {
    std::reverse(order.begin(), order.end());
  }
  v.strides.assign(rank, 0);
  int64_t step = 1;
  for (const std::size_t i : order) {
    const int64_t gap = kind >= 4 ? in.ConsumeIntegralInRange<int64_t>(1, 3) : 1;
    v.strides[i] = step * gap;
    step = v.strides[i] * std::max<int64_t>(v.shape[i], 1) + (kind >= 5 ? in.ConsumeIntegralInRange<int64_t>(0, 2) : 0);
  }
  if (kind >= 5) {
    for (std::size_t i = 0; i < rank; ++i) {
      const int what = in.ConsumeIntegralInRange<int>(0, 7);
      if (what == 0) v.strides[i] = -v.strides[i];
      if (what == 1 && !is_output) v.strides[i] = 0;
    }
  }
  if (kind == 7) {
    for (std::size_t i = 0; i < rank; ++i) {
      if (in.ConsumeBool()) v.strides[i] = in.ConsumeIntegralInRange<int64_t>(-6, 6);
    }
  }
  // Now and then a strides list of the wrong length (an error).
  if (in.ConsumeIntegralInRange<int>(0, 63) == 0) v.strides.push_back(1);
}

DType pick_dtype(FuzzedDataProvider& in) { return oracle::kAllDTypes[in.ConsumeIntegralInRange<std::size_t>(0, 11)]; }

// The gradients take float types only: mostly one of those, now and then any.
DType pick_gradient_dtype(FuzzedDataProvider& in) {
  constexpr DType kFloats[] = {DType::f16, DType::bf16, DType::f32, DType::f64};
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0) return pick_dtype(in);
  return kFloats[in.ConsumeIntegralInRange<std::size_t>(0, 3)];
}

// The quantized ops take i8, u8 and i16: mostly one of those, now and then any.
DType pick_quantized_dtype(FuzzedDataProvider& in) {
  constexpr DType kQuantized[] = {DType::i8, DType::u8, DType::i16};
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0) return pick_dtype(in);
  return kQuantized[in.ConsumeIntegralInRange<std::size_t>(0, 2)];
}

// SPEC_DECISIONS 7's table: the output types a reduction of `in` allows.
std::vector<DType> reduction_outputs(DType in, Op op) {
  switch (in) {
    case DType::f16: return {DType::f16, DType::f32, DType::f64};
    case DType::bf16: return {DType::bf16, DType::f32, DType::f64};
    case DType::f32: return {DType::f32, DType::f64};
    case DType::f64: return {DType::f64, DType::f32};
    case DType::i8: case DType::i16: case DType::i32: case DType::i64:
      return op == Op::sum ? std::vector<DType>{DType::i64, DType::f64} : std::vector<DType>{DType::f64, DType::f32};
    default:
      return op == Op::sum ? std::vector<DType>{DType::u64, DType::f64} : std::vector<DType>{DType::f64, DType::f32};
  }
}

// The op, from one byte v. The committed seeds were made when v % 6 was the
// op (ConsumeIntegralInRange(0, 5) reads one byte the same way), and it still
// is, except that
// - squared_difference_backward's values with an odd v / 6 pick
//   mean_squared_difference_backward, its sibling (the same terms with an
//   implicit grad_out): 1/12 of the inputs each;
// - squared_difference's values with an even v / 6 pick the quantized ops
//   (v / 12 even: quantized_squared_difference, odd: quantized_subtract),
//   which share its element-wise validation, plan and walk: 1/12 of the
//   inputs for squared_difference, 1/24 for each quantized op;
// and no committed seed of squared_difference_backward or squared_difference
// had one of those values: every seed keeps its call.
Op decode_op(FuzzedDataProvider& in) {
  const auto v = in.ConsumeIntegral<uint8_t>();
  const auto op = static_cast<Op>(v % 6);
  if (op == Op::squared_difference_backward && (v / 6) % 2 == 1) return Op::mean_squared_difference_backward;
  if (op == Op::squared_difference && (v / 6) % 2 == 0) {
    return (v / 12) % 2 == 0 ? Op::quantized_squared_difference : Op::quantized_subtract;
  }
  return op;
}

// A scale: 2^(base_exponent + a small step) times a mantissa that is often 1
// (a power of two: int16 subtract's Sub16 path), a hair off 1 (around
// CheckedLog2's tolerance of 1e-3 in log2), or random; now and then far from
// the base (output multipliers far above 1, or below 2^-31), extreme
// (subnormal, FLT_MAX) or not a positive finite float (an error). (Inputs
// that run out of bytes read 0s: the ordinary cases come first.)
float pick_scale(FuzzedDataProvider& in, int base_exponent) {
  const int kind = in.ConsumeIntegralInRange<int>(0, 31);
  const float inf = std::numeric_limits<float>::infinity();
  switch (kind) {
    case 26: return in.ConsumeBool() ? 0.0f : -0.0f;
    case 27: return -std::ldexp(1.0f + static_cast<float>(in.ConsumeIntegralInRange<int>(0, 7)) / 8, base_exponent);
    case 28: return in.ConsumeBool() ? inf : -inf;
    case 29: return std::numeric_limits<float>::quiet_NaN();
    case 30: return std::ldexp(1.0f, in.ConsumeIntegralInRange<int>(-149, -126));  // subnormal, or FLT_MIN
    case 31: return std::numeric_limits<float>::max();
    default: break;
  }
  const int exponent = base_exponent + (kind < 23 ? in.ConsumeIntegralInRange<int>(-3, 3)
                                                  : in.ConsumeIntegralInRange<int>(-60, 60));
  float mantissa = 1.0f;
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 2:  // 1 + k 2^-14: log2 about k 8.8e-5, so |k| <= 11 passes CheckedLog2
      mantissa += std::ldexp(static_cast<float>(in.ConsumeIntegralInRange<int>(-16, 16)), -14);
      break;
    case 3: mantissa += std::ldexp(static_cast<float>(in.ConsumeIntegralInRange<uint32_t>(0, (1u << 23) - 1)), -23); break;
    default: break;
  }
  return std::ldexp(mantissa, exponent);  // may overflow to inf or underflow to 0 (errors)
}

// A zero point: mostly inside the type (its ends often), 0 for int16; now
// and then outside the type, or non-zero for int16 (errors).
int32_t pick_zero_point(FuzzedDataProvider& in, DType dtype) {
  const qo::TypeLimits type = qo::limits(dtype);
  const int kind = in.ConsumeIntegralInRange<int>(0, 15);
  if (kind == 15) {
    switch (in.ConsumeIntegralInRange<int>(0, 4)) {
      case 0: return static_cast<int32_t>(type.min - 1);
      case 1: return static_cast<int32_t>(type.max + 1);
      case 2: return std::numeric_limits<int32_t>::min();
      case 3: return std::numeric_limits<int32_t>::max();
      default: return in.ConsumeIntegral<int32_t>();
    }
  }
  if (kind == 14) return static_cast<int32_t>(in.ConsumeIntegralInRange<int64_t>(type.min, type.max));
  if (dtype == DType::i16) return 0;
  if (kind == 13) return static_cast<int32_t>(type.min);
  if (kind == 12) return static_cast<int32_t>(type.max);
  return static_cast<int32_t>(in.ConsumeIntegralInRange<int64_t>(type.min, type.max));
}

// The quantized ops' parameters: scales around one base exponent (equal
// input scales at times: multipliers of exactly 1/2), at times an output
// scale at the output multiplier's boundary of 1 (subtract refuses 1 or
// more; squared_difference computes it as TFLite-Micro does), zero points,
// the activation (squared_difference has none: an error), the rounding, and
// pot_scale_int16; enum values outside the enums now and then (errors).
void decode_quantization(FuzzedDataProvider& in, Call& c) {
  const DType dtype = c.a.dtype;
  const int base = in.ConsumeIntegralInRange<int>(0, 7) == 7 ? in.ConsumeIntegralInRange<int>(-149, 127)
                                                             : in.ConsumeIntegralInRange<int>(-16, 4);
  c.qa.scale = pick_scale(in, base);
  c.qb.scale = in.ConsumeIntegralInRange<int>(0, 3) == 3 ? c.qa.scale : pick_scale(in, base);
  c.qout.scale = pick_scale(in, base);
  if (in.ConsumeIntegralInRange<int>(0, 7) == 7) {
    // s = 2 max(s_a, s_b); the output multiplier is s / (2^left s_out) for
    // subtract, s^2 / (2^(2 left) s_out) for squared_difference: near 1 here.
    const double s = 2.0 * std::max<double>(c.qa.scale, c.qb.scale);
    const bool subtract = c.op == Op::quantized_subtract;
    const int left = subtract ? (dtype == DType::i16 ? 15 : 20) : (dtype == DType::i16 ? 0 : 7);
    const double at_one = subtract ? std::ldexp(s, -left) : std::ldexp(s * s, -2 * left);
    constexpr double kFactors[] = {1.0, 1.0 + 1e-7, 1.0 - 1e-7, 0.75, 1.5, 1.0 + 1e-9};
    c.qout.scale = static_cast<float>(at_one * kFactors[in.ConsumeIntegralInRange<std::size_t>(0, 5)]);
    if (in.ConsumeBool()) c.qout.scale = std::nextafter(c.qout.scale, in.ConsumeBool() ? 0.0f : 1e30f);
  }
  c.qa.zero_point = pick_zero_point(in, dtype);
  c.qb.zero_point = pick_zero_point(in, dtype);
  c.qout.zero_point = pick_zero_point(in, dtype);
  const int activation = in.ConsumeIntegralInRange<int>(0, 31);
  if (activation >= 29) {
    c.activation = static_cast<uint8_t>(4 + in.ConsumeIntegralInRange<int>(0, 251));
  } else if (c.op == Op::quantized_subtract) {
    c.activation = static_cast<uint8_t>(activation % 4);
  } else {
    c.activation = static_cast<uint8_t>(activation < 26 ? 0 : activation - 25);
  }
  const int rounding = in.ConsumeIntegralInRange<int>(0, 31);
  c.rounding = static_cast<uint8_t>(rounding == 31 ? in.ConsumeIntegralInRange<int>(2, 255) : rounding % 2);
  c.pot_scale_int16 = in.ConsumeIntegralInRange<int>(0, 3) != 3;
}

// A value of float type t near the square root of its smallest subnormal
// 2^u: 2^(u/2 - 8) to 2^(u/2 + 9) with a short mantissa (exact in every
// type), either sign, or a zero of either sign. Squares and products
// 2 (a - b) g of such values lie around the subnormal range, above and below
// it: where a term may underflow and a sum round to a signed zero.
uint64_t tiny_value(std::mt19937_64& rng, DType t) {
  const bool negative = rng() % 2 == 0;
  double v = 0;
  if (rng() % 8 != 0) {
    const int exponent = gmp::format_of(t).smallest_step() / 2 + static_cast<int>(rng() % 17) - 8;
    v = std::ldexp(1 + static_cast<double>(rng() % 8) / 8, exponent);
  }
  return float_bits(t, negative ? -v : v);
}

}  // namespace

std::optional<Call> decode(FuzzedDataProvider& in) {
  Call c;
  c.op = decode_op(in);
  const bool reduction = is_reduction(c.op);
  const bool gradient = is_gradient(c.op);
  const DType dtype = gradient                ? pick_gradient_dtype(in)
                      : is_quantized(c.op) ? pick_quantized_dtype(in)
                                           : pick_dtype(in);
  c.a.dtype = dtype;
  c.b.dtype = in.ConsumeIntegralInRange<int>(0, 31) == 0 ? pick_dtype(in) : dtype;
  c.mode.kind = static_cast<BroadcastKind>(in.ConsumeIntegralInRange<int>(0, 2));

  const auto rank = in.ConsumeIntegralInRange<std::size_t>(0, 4);
  Shape base(rank);
  for (int64_t& d : base) d = kDims[in.ConsumeIntegralInRange<std::size_t>(0, 15)];
  switch (c.mode.kind) {
    case BroadcastKind::none:
      c.a.shape = c.b.shape = base;
      break;
    case BroadcastKind::numpy: {
      const auto ra = in.ConsumeIntegralInRange<std::size_t>(0, rank);
      const auto rb = in.ConsumeIntegralInRange<std::size_t>(0, rank);
      c.a.shape = ones_where(in, Shape(base.end() - static_cast<std::ptrdiff_t>(ra), base.end()));
      c.b.shape = ones_where(in, Shape(base.end() - static_cast<std::ptrdiff_t>(rb), base.end()));
      if (in.ConsumeBool()) std::swap(c.a.shape, c.b.shape);
      break;
    }
    case BroadcastKind::pdpd: {
      c.a.shape = base;
      const auto rb = in.ConsumeIntegralInRange<std::size_t>(0, rank);
      const auto start = in.ConsumeIntegralInRange<std::size_t>(0, rank - rb);
      c.b.shape = ones_where(in, Shape(base.begin() + static_cast<std::ptrdiff_t>(start),
                                       base.begin() + static_cast<std::ptrdiff_t>(start + rb)));
      c.mode.axis = start + rb == rank && in.ConsumeBool() ? -1 : static_cast<int64_t>(start);
      break;
    }
  }
  // Now and then a shape or an axis that may not broadcast (an error).
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0) {
    Shape& s = in.ConsumeBool() ? c.a.shape : c.b.shape;
    if (!s.empty()) s[in.ConsumeIntegralInRange<std::size_t>(0, s.size() - 1)] = in.ConsumeIntegralInRange<int64_t>(0, 5);
  }
  if (in.ConsumeIntegralInRange<int>(0, 31) == 0) c.mode.axis = in.ConsumeIntegralInRange<int64_t>(-3, 5);

  const std::optional<Shape> broadcast = oracle::broadcast(c.a.shape, c.b.shape, c.mode.kind, c.mode.axis);
  const Shape full = broadcast ? *broadcast : base;
  if (count_of(c.a.shape) > kMaxElements || count_of(c.b.shape) > kMaxElements || count_of(full) > kMaxElements) {
    return std::nullopt;
  }
  if (reduction) {
    if (in.ConsumeBool()) {
      c.axes = Shape(in.ConsumeIntegralInRange<std::size_t>(0, full.size() + 1));
      const auto r = static_cast<int64_t>(full.size());
      for (int64_t& x : *c.axes) x = in.ConsumeIntegralInRange<int64_t>(-r - 1, r);
    }
    c.keepdims = in.ConsumeBool();
    try {
      c.out.shape = sqdiff::reduced_shape(full, c.axes, c.keepdims);
    } catch (const sqdiff::Error&) {
      c.out.shape = full;
    }
    const std::vector<DType> outs = reduction_outputs(dtype, c.op);
    c.out.dtype = in.ConsumeIntegralInRange<int>(0, 31) == 0 ? pick_dtype(in)
                                                              : outs[in.ConsumeIntegralInRange<std::size_t>(0, outs.size() - 1)];
  } else if (gradient) {
    // grad_out (when the op takes one) of the broadcast shape, grad_a (out)
    // of a's, grad_b of b's; either gradient skipped at times, a wrong shape
    // or type now and then.
    const auto type_of_view = [&] { return in.ConsumeIntegralInRange<int>(0, 31) == 0 ? pick_dtype(in) : dtype; };
    if (has_grad_out(c.op)) {
      c.g.shape = full;
      c.g.dtype = type_of_view();
    }
    c.out.shape = c.a.shape;
    c.out.dtype = type_of_view();
    c.grad_b.shape = c.b.shape;
    c.grad_b.dtype = type_of_view();
    const int skip = in.ConsumeIntegralInRange<int>(0, 7);
    c.want_a = skip != 0;
    c.want_b = skip != 1;
    if (in.ConsumeIntegralInRange<int>(0, 31) == 0) {
      Shape& s = has_grad_out(c.op) && in.ConsumeBool() ? c.g.shape : c.grad_b.shape;
      if (!s.empty()) s[in.ConsumeIntegralInRange<std::size_t>(0, s.size() - 1)] += 1;
    }
  } else {
    c.out.shape = full;
    c.out.dtype = in.ConsumeIntegralInRange<int>(0, 31) == 0 ? pick_dtype(in) : dtype;
  }
  if (in.ConsumeIntegralInRange<int>(0, 31) == 0 && !c.out.shape.empty()) {
    c.out.shape[in.ConsumeIntegralInRange<std::size_t>(0, c.out.shape.size() - 1)] += 1;  // the wrong shape
  }

  choose_strides(in, c.a, false);
  choose_strides(in, c.b, false);
  choose_strides(in, c.out, true);
  if (has_grad_out(c.op)) choose_strides(in, c.g, false);
  if (gradient) choose_strides(in, c.grad_b, true);

  // Place the views: the arena is as large as the largest view's reach plus a
  // little, so that views overlap often.
  const std::vector<View*> placed = Call::views_of(c);
  std::size_t arena_size = 8 * in.ConsumeIntegralInRange<std::size_t>(0, 8);
  for (const View* v : placed) {
    const auto [lo, hi] = reach(*v);
    if (hi - lo + 1 > 4 * kMaxElements) return std::nullopt;
    arena_size = std::max(arena_size, static_cast<std::size_t>(hi - lo + 1) * v->item());
  }
  arena_size = (arena_size + 8 * in.ConsumeIntegralInRange<std::size_t>(0, 16) + 7) / 8 * 8;
  for (View* v : placed) {
    const auto [lo, hi] = reach(*v);
    const auto slots = static_cast<int64_t>(arena_size / v->item()) - (hi - lo + 1);
    v->start = (in.ConsumeIntegralInRange<int64_t>(0, std::max<int64_t>(slots, 0)) - lo) * static_cast<int64_t>(v->item());
  }
  // An output exactly on one of the inputs (in place), or grad_b exactly on
  // grad_a (an error), when the types and shapes allow.
  const auto alias_onto = [&](View& target, const std::vector<const View*>& candidates) {
    const auto pick = in.ConsumeIntegralInRange<std::size_t>(0, candidates.size() + 3);
    const View* same = pick < candidates.size() ? candidates[pick] : nullptr;
    if (same && same->dtype == target.dtype && same->shape == target.shape) {
      target.strides = same->strides;
      target.start = same->start;
    }
  };
  // (A skipped grad_a was not placed: grad_b stays off it.)
  const View* placed_grad_a = c.want_a ? &c.out : &c.g;
  if (c.op == Op::squared_difference_backward) {
    alias_onto(c.out, {&c.a, &c.b, &c.g});
    alias_onto(c.grad_b, {&c.a, &c.b, &c.g, placed_grad_a});
  } else if (c.op == Op::subtract_backward) {
    alias_onto(c.out, {&c.g});
    alias_onto(c.grad_b, {&c.g, placed_grad_a});
  } else if (c.op == Op::mean_squared_difference_backward) {
    alias_onto(c.out, {&c.a, &c.b});
    alias_onto(c.grad_b, c.want_a ? std::vector<const View*>{&c.a, &c.b, &c.out}
                                  : std::vector<const View*>{&c.a, &c.b});
  } else {
    alias_onto(c.out, {&c.a, &c.b});
  }
  const int threads = in.ConsumeIntegralInRange<int>(0, 63);
  c.threads = threads == 0 ? -1 : threads % 4;  // 0 is the library's default
  c.arena_size = arena_size;
  c.arena_shift = 8 * in.ConsumeIntegralInRange<std::size_t>(0, 7);
  if (is_quantized(c.op)) decode_quantization(in, c);
  return c;
}

void fill(FuzzedDataProvider& in, Arena& arena, DType dtype) {
  std::mt19937_64 rng(in.ConsumeIntegral<uint64_t>());
  const bool tiny = oracle::is_float(dtype) && in.ConsumeIntegralInRange<int>(0, 3) == 0;
  const std::size_t item = oracle::elem_size(dtype);
  for (std::size_t at = 0; at + item <= arena.size(); at += item) {
    const bool near_underflow = tiny && rng() % 8 != 0;
    const uint64_t bits = near_underflow ? tiny_value(rng, dtype) : sqdiff_test::values::random_value(rng, dtype);
    oracle::store_bits(arena.data() + at, dtype, bits);
  }
  const std::vector<uint8_t> rest = in.ConsumeRemainingBytes<uint8_t>();
  if (!rest.empty()) std::memcpy(arena.data(), rest.data(), std::min(rest.size(), arena.size()));
}

}  // namespace sqdiff_fuzz::api
