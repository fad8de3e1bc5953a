#include "compare/difference_stats.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/fused_compare.hpp"
#include "sqdiff/bfloat16.hpp"
#include "sqdiff/float16.hpp"

// The block loops are compiled for several x86-64 levels and picked at run
// time: the baseline (SSE2) has no 64-bit integer compare, so its maxima stay
// scalar, while SSE4.2 and AVX2 vectorize the whole loop.
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define SQDIFF_BLOCK_CLONES __attribute__((target_clones("avx512f", "avx2", "sse4.2", "default")))
#endif
#endif
#ifndef SQDIFF_BLOCK_CLONES
#define SQDIFF_BLOCK_CLONES
#endif

namespace sqdiff::detail {

// Pairs per block: the widened inputs (2 x 2 KiB) stay in L1 for the rescans.
inline constexpr int64_t kBlock = 256;

// What one pair of floats contributes, computed without branches so that the
// block loop vectorizes; the rescans call the same function for one pair.
struct FloatPairKeys {
  bool a_nan, b_nan, a_inf, b_inf, differing, finite, out;
  int64_t all_key;     // -1: no |a - b| (a NaN in the pair); 0 for an equal pair
  int64_t finite_key;  // -1: not a finite pair
  int64_t worst_key;   // -1: within tolerance
};

inline FloatPairKeys float_pair_keys(double p, double q, const Tolerance& t) {
  FloatPairKeys k;
  k.a_nan = p != p;
  k.b_nan = q != q;
  k.a_inf = std::fabs(p) == std::numeric_limits<double>::infinity();
  k.b_inf = std::fabs(q) == std::numeric_limits<double>::infinity();
  const bool both_nan = k.a_nan & k.b_nan;
  const bool same = p == q;
  k.differing = !(same | both_nan);
  k.finite = !(k.a_nan | k.b_nan | k.a_inf | k.b_inf);
  const double d = std::fabs(p - q);
  // Two roundings, as NumPy's atol + rtol * abs(b): this file is compiled
  // with -ffp-contract=off.
  const bool within = d <= t.atol + t.rtol * std::fabs(q);
  k.out = !((k.finite & within) | same | (t.equal_nan & both_nan));
  const int64_t bits = std::bit_cast<int64_t>(d);  // d >= 0 (or a NaN with its sign cleared): ordered as d
  // all_key: 0 for an equal pair (inf vs inf of one sign too), else |a - b|,
  // or -1 where that is NaN (a NaN in the pair, two NaNs included).
  const int64_t has = -static_cast<int64_t>(d == d);
  const int64_t equal = -static_cast<int64_t>(same);
  k.all_key = ~equal & ((bits & has) | ~has);
  const int64_t finite = -static_cast<int64_t>(k.finite);
  k.finite_key = (bits & finite) | ~finite;
  const int64_t out = -static_cast<int64_t>(k.out);
  k.worst_key = (bits & out) | ~out;
  return k;
}

struct FloatBlockSummary {
  int64_t a_nan = 0, b_nan = 0, a_inf = 0, b_inf = 0, differing = 0, finite = 0, out = 0;
  int64_t all_key = -1, finite_key = -1, worst_key = -1;
};

SQDIFF_BLOCK_CLONES
FloatBlockSummary summarise_float_block(const double* __restrict x, const double* __restrict y, int64_t n,
                                        const Tolerance& tolerance) {
  const Tolerance t = tolerance;
  int64_t a_nan = 0, b_nan = 0, a_inf = 0, b_inf = 0, differing = 0, finite = 0, out = 0;
  int64_t all_key = -1, finite_key = -1, worst_key = -1;
  for (int64_t i = 0; i < n; ++i) {
    const FloatPairKeys k = float_pair_keys(x[i], y[i], t);
    a_nan += k.a_nan;
    b_nan += k.b_nan;
    a_inf += k.a_inf;
    b_inf += k.b_inf;
    differing += k.differing;
    finite += k.finite;
    out += k.out;
    all_key = k.all_key > all_key ? k.all_key : all_key;
    finite_key = k.finite_key > finite_key ? k.finite_key : finite_key;
    worst_key = k.worst_key > worst_key ? k.worst_key : worst_key;
  }
  return {a_nan, b_nan, a_inf, b_inf, differing, finite, out, all_key, finite_key, worst_key};
}

// summarise_float_block for a block of finite pairs only, in about half the
// work per pair (no NaN or inf to count or place: every pair is finite and
// every key is |a - b|); false, with `s` unset, when the block holds a NaN or
// an inf, which summarise_float_block then takes. Most blocks of most
// comparisons are all finite. `In`: double (widened inputs) or float, read
// in place (each float exact in f64).
template <typename In>
inline bool finite_float_summary(const In* __restrict x, const In* __restrict y, int64_t n,
                                 const Tolerance& tolerance, FloatBlockSummary& s) {
  const Tolerance t = tolerance;
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  int64_t not_finite = 0, differing = 0, out = 0;
  int64_t all_key = -1, worst_key = -1;
  for (int64_t i = 0; i < n; ++i) {
    const double p = x[i], q = y[i];
    not_finite += !(std::fabs(p) < kInfinity) | !(std::fabs(q) < kInfinity);  // a NaN compares false too
    const bool same = p == q;
    differing += !same;
    const double d = std::fabs(p - q);
    const bool o = !((d <= t.atol + t.rtol * std::fabs(q)) | same);
    out += o;
    const int64_t bits = std::bit_cast<int64_t>(d);
    all_key = bits > all_key ? bits : all_key;
    const int64_t mask = -static_cast<int64_t>(o);
    const int64_t worst = (bits & mask) | ~mask;
    worst_key = worst > worst_key ? worst : worst_key;
  }
  if (not_finite != 0) return false;
  s = FloatBlockSummary{0, 0, 0, 0, differing, n, out, all_key, all_key, worst_key};
  return true;
}

SQDIFF_BLOCK_CLONES
bool summarise_finite_float_block(const double* __restrict x, const double* __restrict y, int64_t n,
                                  const Tolerance& tolerance, FloatBlockSummary& s) {
  return finite_float_summary(x, y, n, tolerance, s);
}

SQDIFF_BLOCK_CLONES
bool summarise_finite_f32_block(const float* __restrict x, const float* __restrict y, int64_t n,
                                const Tolerance& tolerance, FloatBlockSummary& s) {
  return finite_float_summary(x, y, n, tolerance, s);
}

// Integers, widened to 64 bits (signed or unsigned by the dtype): |a - b| is
// exact in uint64. Every pair has one, and every pair is finite.
template <typename W>
struct IntegerPairKeys {
  bool differing, out;
  uint64_t d;          // the exact |a - b|
  uint64_t worst_key;  // 0 within tolerance (a pair out of it has d > 0)
  uint64_t b_magnitude;
};

template <typename W>
inline IntegerPairKeys<W> integer_pair_keys(W p, W q, const Tolerance& t) {
  IntegerPairKeys<W> k;
  const auto up = static_cast<uint64_t>(p), uq = static_cast<uint64_t>(q);
  k.d = p >= q ? up - uq : uq - up;
  if constexpr (std::is_signed_v<W>) {
    k.b_magnitude = q < 0 ? uint64_t{0} - uq : uq;
  } else {
    k.b_magnitude = uq;
  }
  k.differing = k.d != 0;
  k.out = !(static_cast<double>(k.d) <= t.atol + t.rtol * static_cast<double>(k.b_magnitude));
  k.worst_key = k.out ? k.d : 0;
  return k;
}

struct IntegerBlockSummary {
  int64_t differing = 0, out = 0;
  uint64_t all_key = 0, worst_key = 0;
};

template <typename W>
IntegerBlockSummary summarise_integer_block_impl(const W* __restrict x, const W* __restrict y, int64_t n,
                                                 const Tolerance& tolerance) {
  const Tolerance t = tolerance;
  int64_t differing = 0, out = 0;
  uint64_t all_key = 0, worst_key = 0;
  for (int64_t i = 0; i < n; ++i) {
    const IntegerPairKeys<W> k = integer_pair_keys(x[i], y[i], t);
    differing += k.differing;
    out += k.out;
    all_key = k.d > all_key ? k.d : all_key;
    worst_key = k.worst_key > worst_key ? k.worst_key : worst_key;
  }
  return {differing, out, all_key, worst_key};
}

SQDIFF_BLOCK_CLONES
IntegerBlockSummary summarise_signed_block(const int64_t* x, const int64_t* y, int64_t n, const Tolerance& t) {
  return summarise_integer_block_impl(x, y, n, t);
}

SQDIFF_BLOCK_CLONES
IntegerBlockSummary summarise_unsigned_block(const uint64_t* x, const uint64_t* y, int64_t n, const Tolerance& t) {
  return summarise_integer_block_impl(x, y, n, t);
}

namespace {

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

template <typename T>
double as_double(T value) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return static_cast<double>(static_cast<float>(value));
  } else {
    return static_cast<double>(value);
  }
}

// The widened type of T: f64 for floats, int64/uint64 for integers.
template <typename T>
using Wide = std::conditional_t<kIsFloat<T>, double, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

template <typename T>
void widen(const T* source, int64_t stride, int64_t n, Wide<T>* out) {
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Wide<T>>(as_double(source[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Wide<T>>(as_double(source[i * stride]));
  }
}

// Integers widen exactly (as_double would round int64 beyond 2^53).
template <typename T>
void widen_integers(const T* source, int64_t stride, int64_t n, Wide<T>* out) {
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Wide<T>>(source[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Wide<T>>(source[i * stride]);
  }
}

void take_first(int64_t count, int64_t& first, int64_t position) {
  if (count > 0 && first < 0) first = position;
}

// Adds a block's counts to `stats`.
void add_counts(const FloatBlockSummary& s, DifferenceStats& stats) {
  stats.a_nan += s.a_nan;
  stats.b_nan += s.b_nan;
  stats.a_inf += s.a_inf;
  stats.b_inf += s.b_inf;
  stats.differing += s.differing;
  stats.finite_pairs += s.finite;
  stats.out_of_tolerance += s.out;
}

// What a block holds that is new, so that its position must be looked for:
// a first NaN or inf, a larger |a - b| (earlier blocks hold earlier
// positions: a tie keeps the position found).
struct Wanted {
  bool a_nan, b_nan, a_inf, b_inf, all, finite, worst;
  bool any() const { return a_nan || b_nan || a_inf || b_inf || all || finite || worst; }
};

Wanted wanted(const FloatBlockSummary& s, const DifferenceStats& stats) {
  const auto beats = [](int64_t key, const Maximum& m) {
    return key >= 0 && (m.position < 0 || static_cast<uint64_t>(key) > m.key);
  };
  return {s.a_nan > 0 && stats.a_first_nan < 0, s.b_nan > 0 && stats.b_first_nan < 0,
          s.a_inf > 0 && stats.a_first_inf < 0, s.b_inf > 0 && stats.b_first_inf < 0,
          beats(s.all_key, stats.max_abs),         beats(s.finite_key, stats.finite_max_abs),
          beats(s.worst_key, stats.worst)};
}

// The positions of what `w` says is new in the block (x, y widened).
void locate(const FloatBlockSummary& s, const Wanted& w, const double* x, const double* y, int64_t n,
            int64_t position, const Tolerance& t, DifferenceStats& stats) {
  bool found_all = false, found_finite = false, found_worst = false;
  for (int64_t i = 0; i < n; ++i) {
    const FloatPairKeys k = float_pair_keys(x[i], y[i], t);
    if (w.a_nan && k.a_nan) take_first(1, stats.a_first_nan, position + i);
    if (w.b_nan && k.b_nan) take_first(1, stats.b_first_nan, position + i);
    if (w.a_inf && k.a_inf) take_first(1, stats.a_first_inf, position + i);
    if (w.b_inf && k.b_inf) take_first(1, stats.b_first_inf, position + i);
    if (w.all && !found_all && k.all_key == s.all_key) {
      stats.max_abs = {position + i, static_cast<uint64_t>(k.all_key), 0};
      found_all = true;
    }
    if (w.finite && !found_finite && k.finite_key == s.finite_key) {
      stats.finite_max_abs = {position + i, static_cast<uint64_t>(k.finite_key), 0};
      found_finite = true;
    }
    if (w.worst && !found_worst && k.worst_key == s.worst_key) {
      stats.worst = {position + i, static_cast<uint64_t>(k.worst_key), std::fabs(y[i])};
      found_worst = true;
    }
  }
}

// One block of floats (widened): summarised in one pass; positions looked
// for only where the summary shows something new.
void float_block(const double* x, const double* y, int64_t n, int64_t position, const Tolerance& t,
                 DifferenceStats& stats) {
  FloatBlockSummary s;
  if (!summarise_finite_float_block(x, y, n, t, s)) s = summarise_float_block(x, y, n, t);
  add_counts(s, stats);
  const Wanted w = wanted(s, stats);
  if (w.any()) locate(s, w, x, y, n, position, t, stats);
}

// A contiguous float32 block summarised in place: its counts added, its pairs
// widened only when a position must be looked for.
void add_f32_summary(const FloatBlockSummary& s, const float* a, const float* b, int64_t n, int64_t position,
                     const Tolerance& t, DifferenceStats& stats) {
  add_counts(s, stats);
  const Wanted w = wanted(s, stats);
  if (!w.any()) return;
  alignas(64) double x[kBlock];
  alignas(64) double y[kBlock];
  widen(a, 1, n, x);
  widen(b, 1, n, y);
  locate(s, w, x, y, n, position, t, stats);
}

template <typename W>
void integer_block(const W* x, const W* y, int64_t n, int64_t position, const Tolerance& t, DifferenceStats& stats) {
  IntegerBlockSummary s;
  if constexpr (std::is_signed_v<W>) {
    s = summarise_signed_block(x, y, n, t);
  } else {
    s = summarise_unsigned_block(x, y, n, t);
  }
  stats.differing += s.differing;
  stats.finite_pairs += n;
  stats.out_of_tolerance += s.out;
  const bool want_all = n > 0 && (stats.max_abs.position < 0 || s.all_key > stats.max_abs.key);
  const bool want_worst = s.out > 0 && (stats.worst.position < 0 || s.worst_key > stats.worst.key);
  if (!(want_all || want_worst)) return;
  bool found_all = false, found_worst = false;
  for (int64_t i = 0; i < n && !(found_all && found_worst); ++i) {
    const IntegerPairKeys<W> k = integer_pair_keys(x[i], y[i], t);
    if (want_all && !found_all && k.d == s.all_key) {
      stats.max_abs = {position + i, k.d, 0};
      found_all = true;
    }
    if (want_worst && !found_worst && k.out && k.worst_key == s.worst_key) {
      stats.worst = {position + i, k.d, static_cast<double>(k.b_magnitude)};
      found_worst = true;
    }
    found_all = found_all || !want_all;
    found_worst = found_worst || !want_worst;
  }
  if (want_all) stats.finite_max_abs = stats.max_abs;  // every integer pair is finite
}

// Where difference_stats_and_squares adds the chunk's squares, and whether
// every pair so far went there.
struct SquaresSink {
  SquareSums* sums;
  bool complete;
};

// Blocks per call of the fused kernel: their statistics (2 KiB) on the stack.
inline constexpr int64_t kFusedBlocks = 64;

// A contiguous float32 row through the fused kernel: statistics and squares
// in one pass, positions looked for as in row_stats. Returns how many pairs
// it took: all of them, or those before the first block holding a NaN or an
// inf (then `sums` holds garbage).
int64_t fused_row(const float* a, const float* b, int64_t n, int64_t first, const Tolerance& t,
                  DifferenceStats& stats, SquareSums& sums) {
  FiniteBlockStats blocks[kFusedBlocks];
  for (int64_t start = 0; start < n; start += kFusedBlocks * kBlock) {
    const int64_t m = std::min(kFusedBlocks * kBlock, n - start);
    const int64_t taken = fused_f32_blocks(a + start, b + start, m, kBlock, t.atol, t.rtol, &sums, blocks);
    for (int64_t k = 0; k < taken; ++k) {
      const int64_t at = start + k * kBlock;
      const int64_t len = std::min(kBlock, n - at);
      const FiniteBlockStats& f = blocks[k];
      // Every key is |a - b| >= 0, ordered as its bits; a pair out of
      // tolerance has |a - b| > 0, so worst 0 means none (-1).
      const auto all_key = std::bit_cast<int64_t>(f.max_abs);
      const int64_t worst_key = f.worst > 0 ? std::bit_cast<int64_t>(f.worst) : -1;
      const FloatBlockSummary s{0, 0, 0, 0, f.differing, len, f.out, all_key, all_key, worst_key};
      add_f32_summary(s, a + at, b + at, len, first + at, t, stats);
    }
    if (taken * kBlock < m) return start + taken * kBlock;
  }
  return n;
}

// One row of `n` pairs (the innermost dim of a chunk), block by block; with a
// sink, contiguous float32 rows of a block or more add their squares to it in
// the same pass. Shorter rows do not: a call of the kernel and a fold of its
// lanes per row of a few pairs cost more than the second pass saves ([4M, 3]
// float32: 149 ms of CPU time fused, 86 ms in two passes).
template <typename T>
void row_stats(const T* a, int64_t sa, const T* b, int64_t sb, int64_t n, int64_t first, const Tolerance& t,
               DifferenceStats& stats, SquaresSink* sink) {
  if constexpr (std::is_same_v<T, float>) {
    if (sink != nullptr && sink->complete && sa == 1 && sb == 1 && n >= kBlock) {
      const int64_t done = fused_row(a, b, n, first, t, stats, *sink->sums);
      if (done == n) return;
      // A NaN or an inf: the rest of the row as without a sink.
      sink->complete = false;
      sink = nullptr;
      a += done;
      b += done;
      n -= done;
      first += done;
    }
  }
  if (sink != nullptr) sink->complete = false;
  alignas(64) Wide<T> x[kBlock];
  alignas(64) Wide<T> y[kBlock];
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t m = std::min(kBlock, n - start);
    if constexpr (std::is_same_v<T, float>) {
      // Contiguous float32 blocks of finite pairs are summarised in place, and
      // widened only when a position must be found.
      FloatBlockSummary s;
      if (sa == 1 && sb == 1 && summarise_finite_f32_block(a + start, b + start, m, t, s)) {
        add_f32_summary(s, a + start, b + start, m, first + start, t, stats);
        continue;
      }
    }
    if constexpr (kIsFloat<T>) {
      widen(a + start * sa, sa, m, x);
      widen(b + start * sb, sb, m, y);
      float_block(x, y, m, first + start, t, stats);
    } else {
      widen_integers(a + start * sa, sa, m, x);
      widen_integers(b + start * sb, sb, m, y);
      integer_block(x, y, m, first + start, t, stats);
    }
  }
}

template <typename T>
DifferenceStats typed_stats(const void* a, const Shape& a_strides, const void* b, const Shape& b_strides,
                            const Shape& shape, int64_t first, const Tolerance& t, SquaresSink* sink = nullptr) {
  DifferenceStats stats;
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  const std::size_t rank = shape.size();
  if (rank == 0) {
    row_stats(pa, 0, pb, 0, 1, first, t, stats, sink);
    return stats;
  }
  for (int64_t dim : shape) {
    if (dim == 0) return stats;
  }
  const int64_t n = shape[rank - 1];
  Shape index(rank, 0);
  int64_t position = first;
  for (;;) {
    int64_t oa = 0, ob = 0;
    for (std::size_t k = 0; k + 1 < rank; ++k) {
      oa += index[k] * a_strides[k];
      ob += index[k] * b_strides[k];
    }
    row_stats(pa + oa, a_strides[rank - 1], pb + ob, b_strides[rank - 1], n, position, t, stats, sink);
    position += n;
    std::size_t k = rank - 1;
    for (; k-- > 0;) {  // the next row, last outer dim fastest
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
    if (k == static_cast<std::size_t>(-1)) return stats;
  }
}

void first_of(int64_t& mine, int64_t other) {
  if (other >= 0 && (mine < 0 || other < mine)) mine = other;
}

}  // namespace

void Maximum::offer(const Maximum& other) {
  if (other.position < 0) return;
  if (position < 0 || other.key > key || (other.key == key && other.position < position)) *this = other;
}

double Maximum::as_double() const { return std::bit_cast<double>(key); }

void DifferenceStats::merge(const DifferenceStats& other) {
  a_nan += other.a_nan;
  b_nan += other.b_nan;
  a_inf += other.a_inf;
  b_inf += other.b_inf;
  first_of(a_first_nan, other.a_first_nan);
  first_of(b_first_nan, other.b_first_nan);
  first_of(a_first_inf, other.a_first_inf);
  first_of(b_first_inf, other.b_first_inf);
  differing += other.differing;
  max_abs.offer(other.max_abs);
  finite_pairs += other.finite_pairs;
  finite_max_abs.offer(other.finite_max_abs);
  out_of_tolerance += other.out_of_tolerance;
  worst.offer(other.worst);
}

DifferenceStats difference_stats(DType dtype, const void* a, const Shape& a_strides, const void* b,
                                 const Shape& b_strides, const Shape& shape, int64_t first, const Tolerance& t) {
  switch (dtype) {
    case DType::f16: return typed_stats<float16>(a, a_strides, b, b_strides, shape, first, t);
    case DType::bf16: return typed_stats<bfloat16>(a, a_strides, b, b_strides, shape, first, t);
    case DType::f32: return typed_stats<float>(a, a_strides, b, b_strides, shape, first, t);
    case DType::f64: return typed_stats<double>(a, a_strides, b, b_strides, shape, first, t);
    case DType::i8: return typed_stats<int8_t>(a, a_strides, b, b_strides, shape, first, t);
    case DType::i16: return typed_stats<int16_t>(a, a_strides, b, b_strides, shape, first, t);
    case DType::i32: return typed_stats<int32_t>(a, a_strides, b, b_strides, shape, first, t);
    case DType::i64: return typed_stats<int64_t>(a, a_strides, b, b_strides, shape, first, t);
    case DType::u8: return typed_stats<uint8_t>(a, a_strides, b, b_strides, shape, first, t);
    case DType::u16: return typed_stats<uint16_t>(a, a_strides, b, b_strides, shape, first, t);
    case DType::u32: return typed_stats<uint32_t>(a, a_strides, b, b_strides, shape, first, t);
    case DType::u64: return typed_stats<uint64_t>(a, a_strides, b, b_strides, shape, first, t);
  }
  return {};
}

bool difference_stats_and_squares(DType dtype, const void* a, const Shape& a_strides, const void* b,
                                  const Shape& b_strides, const Shape& shape, int64_t first, const Tolerance& t,
                                  DifferenceStats& stats, SquareSums& squares) {
  if (dtype != DType::f32) {
    stats = difference_stats(dtype, a, a_strides, b, b_strides, shape, first, t);
    return false;
  }
  SquaresSink sink{&squares, true};
  stats = typed_stats<float>(a, a_strides, b, b_strides, shape, first, t, &sink);
  return sink.complete;
}

}  // namespace sqdiff::detail
