// Fuzzes the library's public API on random views inside one arena:
// sqdiff::subtract and squared_difference (checked against the scalar oracle
// of tests/oracle.hpp) and sum_squared_difference / mean_squared_difference
// (checked against the library itself on dense copies, one thread, exact path
// only: what a layout, the thread count or the fast paths could change).
//
// The input decides the op, the dtypes, the broadcast mode and axis, small
// shapes, each view's strides (dense, permuted, gapped, reversed, 0, arbitrary,
// or the output exactly aliasing an input) and offset inside one arena, so
// views overlap freely; then the threads, the arena's alignment and its bytes.
// Every arena granule outside the views' extents is poisoned for ASan, so a
// read or write beyond a view stops the run.
//
// Checks (SPEC sections 3-7, docs/SPEC_DECISIONS.md):
// - a valid call succeeds and leaves the arena equal to the snapshot taken
//   before it, with only the output's elements replaced by the expected results
//   (computed from the snapshot: any overlap gives the as-if-copied result);
//   a NaN result may be any NaN;
// - an invalid call (types, shapes, axes, a strides list of the wrong length, a
//   self-overlapping output, threads < 0) throws sqdiff::Error and leaves the
//   arena untouched; nothing else is ever thrown;
// - the same call again (the per-thread plan memo replays it) with another
//   thread count gives the same arena.
// A self-overlapping output is an error (the strides must nest); for an empty
// output either outcome is accepted, with the arena untouched.
#include <sanitizer/asan_interface.h>

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "oracle.hpp"
#include "reduce/fast_squares.hpp"
#include "sqdiff/error.hpp"
#include "sqdiff/ops.hpp"
#include "sqdiff/reduce.hpp"

namespace {

using sqdiff::BroadcastKind;
using sqdiff::DType;
using sqdiff::Shape;
using sqdiff_fuzz::check;
using sqdiff_fuzz::fail;
namespace oracle = sqdiff_test::oracle;

// Keeps one input in milliseconds under ASan (the exact reference path costs
// a few hundred ns per term there).
constexpr int64_t kMaxElements = int64_t{1} << 16;

enum class Op { subtract, squared_difference, sum, mean };

const char* op_name(Op op) {
  switch (op) {
    case Op::subtract: return "subtract";
    case Op::squared_difference: return "squared_difference";
    case Op::sum: return "sum_squared_difference";
    case Op::mean: return "mean_squared_difference";
  }
  return "?";
}

std::string shape_text(const Shape& s) { return oracle::shape_str(s); }

int64_t count_of(const Shape& shape) {
  int64_t n = 1;
  for (const int64_t d : shape) n *= d;
  return n;
}

// A view as the fuzzer builds it: strides explicit (or empty = dense), and
// where in the arena its element [0,...,0] lies.
struct View {
  DType dtype = DType::f32;
  Shape shape;
  Shape strides;       // as passed to the library (may be empty)
  int64_t start = 0;   // byte offset of element [0,...,0] in the arena
  bool strides_ok() const { return strides.empty() || strides.size() == shape.size(); }
  Shape effective_strides() const { return strides.empty() ? oracle::dense_strides(shape) : strides; }
  std::size_t item() const { return oracle::elem_size(dtype); }
};

// Lowest and highest element offset a view reaches (0, 0 for an empty view).
std::pair<int64_t, int64_t> reach(const View& v) {
  if (count_of(v.shape) == 0 || !v.strides_ok()) return {0, 0};
  const Shape s = v.effective_strides();
  int64_t lo = 0, hi = 0;
  for (std::size_t i = 0; i < v.shape.size(); ++i) {
    const int64_t step = s[i] * (v.shape[i] - 1);
    (step < 0 ? lo : hi) += step;
  }
  return {lo, hi};
}

// SPEC_DECISIONS 4: the dims of size > 1, ordered by |stride|, each stride
// larger than the reach of all the smaller ones.
bool strides_nest(const View& v) {
  const Shape s = v.effective_strides();
  std::vector<std::pair<int64_t, int64_t>> dims;  // |stride|, size
  for (std::size_t i = 0; i < v.shape.size(); ++i) {
    if (v.shape[i] > 1) dims.emplace_back(s[i] < 0 ? -s[i] : s[i], v.shape[i]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t covered = 0;
  for (const auto& [stride, size] : dims) {
    if (stride <= covered) return false;
    covered += stride * (size - 1);
  }
  return true;
}

// Calls f(byte offset in the arena) for each element of v, row-major.
template <typename F>
void for_each_element(const View& v, F&& f) {
  const int64_t n = count_of(v.shape);
  if (n == 0) return;
  const Shape s = v.effective_strides();
  std::vector<int64_t> index(v.shape.size(), 0);
  const auto item = static_cast<int64_t>(v.item());
  for (int64_t k = 0; k < n; ++k) {
    int64_t offset = 0;
    for (std::size_t i = 0; i < index.size(); ++i) offset += index[i] * s[i];
    f(v.start + offset * item);
    for (std::size_t i = index.size(); i-- > 0;) {
      if (++index[i] < v.shape[i]) break;
      index[i] = 0;
    }
  }
}

// The arena: `size` bytes at `shift` bytes past a 64-byte boundary, in an
// allocation of exactly shift + size bytes, so ASan sees a step past either end.
class Arena {
 public:
  Arena(std::size_t size, std::size_t shift)
      : block_(static_cast<unsigned char*>(::operator new(shift + size, std::align_val_t{64}))),
        size_(size),
        shift_(shift) {
    ASAN_POISON_MEMORY_REGION(block_, shift_);
  }
  ~Arena() {
    ASAN_UNPOISON_MEMORY_REGION(block_, shift_ + size_);
    ::operator delete(block_, std::align_val_t{64});
  }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  unsigned char* data() const { return block_ + shift_; }
  std::size_t size() const { return size_; }

  // Poisons every 8-byte granule outside the views' extents (from each view's
  // lowest to its highest element): a kernel may read a whole row's span,
  // gaps included (the block rows do), but nothing beyond it. ASan tracks
  // granules, so up to 7 bytes past an extent stay readable.
  void poison_outside(const std::vector<const View*>& views) {
    std::vector<bool> used((shift_ + size_ + 7) / 8, false);
    for (const View* v : views) {
      if (!v->strides_ok() || count_of(v->shape) == 0) continue;  // nothing may be touched
      const auto [lo, hi] = reach(*v);
      const auto item = static_cast<int64_t>(v->item());
      const int64_t first = v->start + lo * item, end = v->start + (hi + 1) * item;
      check(first >= 0 && static_cast<std::size_t>(end) <= size_, "a view outside the arena");
      for (int64_t b = first; b < end; ++b) used[(shift_ + static_cast<std::size_t>(b)) / 8] = true;
    }
    for (std::size_t g = 0; g < used.size(); ++g) {
      if (!used[g]) ASAN_POISON_MEMORY_REGION(block_ + g * 8, std::min<std::size_t>(8, shift_ + size_ - g * 8));
    }
  }
  void unpoison() { ASAN_UNPOISON_MEMORY_REGION(data(), size_); }

 private:
  unsigned char* block_;
  std::size_t size_;
  std::size_t shift_;
};

struct Call {
  Op op = Op::subtract;
  View a, b, out;
  sqdiff::Broadcast mode;
  std::optional<Shape> axes;
  bool keepdims = false;
  int threads = 1;
  std::size_t arena_size = 8;
  std::size_t arena_shift = 0;  // bytes past a 64-byte boundary
  std::string describe() const {
    std::string text = std::string(op_name(op)) + " " + oracle::name_of(a.dtype) + shape_text(a.shape) + " strides " +
                       shape_text(a.strides) + " @" + std::to_string(a.start) + ", " + oracle::name_of(b.dtype) +
                       shape_text(b.shape) + " strides " + shape_text(b.strides) + " @" + std::to_string(b.start) +
                       " -> " + oracle::name_of(out.dtype) + shape_text(out.shape) + " strides " +
                       shape_text(out.strides) + " @" + std::to_string(out.start) + " (" + oracle::name_of(mode.kind) +
                       ", axis " + std::to_string(mode.axis) + ")";
    if (op == Op::sum || op == Op::mean) {
      text += " axes " + (axes ? shape_text(*axes) : std::string("all")) + (keepdims ? " keepdims" : "");
    }
    return text + " threads " + std::to_string(threads);
  }
};

// Runs the call on views into `base`; returns the error text, or nullopt.
std::optional<std::string> run(const Call& c, unsigned char* base, int threads) {
  const sqdiff::ConstTensorView a{base + c.a.start, c.a.dtype, c.a.shape, c.a.strides};
  const sqdiff::ConstTensorView b{base + c.b.start, c.b.dtype, c.b.shape, c.b.strides};
  const sqdiff::TensorView out{base + c.out.start, c.out.dtype, c.out.shape, c.out.strides};
  try {
    switch (c.op) {
      case Op::subtract: sqdiff::subtract(a, b, out, {c.mode, threads}); break;
      case Op::squared_difference: sqdiff::squared_difference(a, b, out, {c.mode, threads}); break;
      case Op::sum: sqdiff::sum_squared_difference(a, b, out, {c.mode, c.axes, c.keepdims, threads}); break;
      case Op::mean: sqdiff::mean_squared_difference(a, b, out, {c.mode, c.axes, c.keepdims, threads}); break;
    }
  } catch (const sqdiff::Error& e) {
    return std::string(e.what());
  } catch (const std::exception& e) {
    fail(c.describe() + ": threw something other than sqdiff::Error: " + e.what());
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Decoding the input.

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

std::optional<Call> decode(FuzzedDataProvider& in) {
  Call c;
  c.op = static_cast<Op>(in.ConsumeIntegralInRange<int>(0, 3));
  const bool reduction = c.op == Op::sum || c.op == Op::mean;
  const DType dtype = pick_dtype(in);
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

  // Place the views: the arena is as large as the largest view's reach plus a
  // little, so that views overlap often.
  std::size_t arena_size = 8 * in.ConsumeIntegralInRange<std::size_t>(0, 8);
  for (View* v : {&c.a, &c.b, &c.out}) {
    const auto [lo, hi] = reach(*v);
    if (hi - lo + 1 > 4 * kMaxElements) return std::nullopt;
    arena_size = std::max(arena_size, static_cast<std::size_t>(hi - lo + 1) * v->item());
  }
  arena_size = (arena_size + 8 * in.ConsumeIntegralInRange<std::size_t>(0, 16) + 7) / 8 * 8;
  for (View* v : {&c.a, &c.b, &c.out}) {
    const auto [lo, hi] = reach(*v);
    const auto slots = static_cast<int64_t>(arena_size / v->item()) - (hi - lo + 1);
    v->start = (in.ConsumeIntegralInRange<int64_t>(0, std::max<int64_t>(slots, 0)) - lo) * static_cast<int64_t>(v->item());
  }
  // The output exactly one of the inputs (in place), when the types and shapes allow.
  const int alias = in.ConsumeIntegralInRange<int>(0, 5);
  const View* same = alias == 0 ? &c.a : alias == 1 ? &c.b : nullptr;
  if (same && same->dtype == c.out.dtype && same->shape == c.out.shape) {
    c.out.strides = same->strides;
    c.out.start = same->start;
  }
  const int threads = in.ConsumeIntegralInRange<int>(0, 63);
  c.threads = threads == 0 ? -1 : threads % 4;  // 0 is the library's default
  c.arena_size = arena_size;
  c.arena_shift = 8 * in.ConsumeIntegralInRange<std::size_t>(0, 7);
  return c;
}

// Fills the arena with values of `dtype` biased to its special cases, then
// lays the fuzzer's remaining bytes over its start.
void fill(FuzzedDataProvider& in, Arena& arena, DType dtype) {
  std::mt19937_64 rng(in.ConsumeIntegral<uint64_t>());
  const std::size_t item = oracle::elem_size(dtype);
  for (std::size_t at = 0; at + item <= arena.size(); at += item) {
    oracle::store_bits(arena.data() + at, dtype, sqdiff_test::values::random_value(rng, dtype));
  }
  const std::vector<uint8_t> rest = in.ConsumeRemainingBytes<uint8_t>();
  if (!rest.empty()) std::memcpy(arena.data(), rest.data(), std::min(rest.size(), arena.size()));
}

// The arena after a successful call: the snapshot with the output's elements
// set to `results` (row-major bits). nullopt results: an error is expected.
struct Expectation {
  bool error = false;
  bool either = false;  // an empty self-overlapping output: error or not
  std::vector<uint64_t> results;
};

void compare(const Call& c, const std::vector<unsigned char>& snapshot, const Arena& arena,
             const Expectation& expected, const std::optional<std::string>& error, const char* pass) {
  const std::string what = c.describe() + " (" + pass + ")";
  if (!expected.either) {
    if (expected.error && !error) fail(what + ": an invalid call succeeded");
    if (!expected.error && error) fail(what + ": a valid call failed: " + *error);
  }
  std::vector<unsigned char> want = snapshot;
  if (!error) {
    std::size_t k = 0;
    for_each_element(c.out, [&](int64_t at) {
      const uint64_t expect = expected.results[k];
      const uint64_t actual = oracle::load_bits(arena.data() + at, c.out.dtype);
      if (!oracle::bits_match(c.out.dtype, expect, actual)) {
        fail(what + ": output element " + std::to_string(k) + " (arena byte " + std::to_string(at) + ") is " +
             oracle::hex_bits(c.out.dtype, actual) + ", expected " + oracle::hex_bits(c.out.dtype, expect));
      }
      oracle::store_bits(want.data() + at, c.out.dtype, actual);  // any NaN where a NaN is expected
      ++k;
    });
  }
  if (std::memcmp(want.data(), arena.data(), want.size()) != 0) {
    std::size_t at = 0;
    while (want[at] == arena.data()[at]) ++at;
    fail(what + ": arena byte " + std::to_string(at) + " is " + std::to_string(arena.data()[at]) + ", expected " +
         std::to_string(want[at]) + (error ? " (the call failed, and must write nothing: " + *error + ")" : " (outside the output)"));
  }
}

// Expected results of subtract / squared_difference: the scalar oracle on the snapshot.
Expectation elementwise_expectation(const Call& c, const std::vector<unsigned char>& snapshot) {
  Expectation e;
  const bool views_ok = c.a.strides_ok() && c.b.strides_ok() && c.out.strides_ok();
  const oracle::Op op = c.op == Op::subtract ? oracle::Op::subtract : oracle::Op::squared_difference;
  const auto result = views_ok ? oracle::compute(op, {snapshot.data() + c.a.start, c.a.dtype, c.a.shape, c.a.strides},
                                                 {snapshot.data() + c.b.start, c.b.dtype, c.b.shape, c.b.strides},
                                                 c.mode.kind, c.mode.axis)
                               : std::nullopt;
  e.error = !result || c.out.dtype != c.a.dtype || result->shape != c.out.shape || c.threads < 0;
  if (!e.error && !strides_nest(c.out)) {
    e.error = true;
    e.either = count_of(c.out.shape) == 0;
  }
  if (!e.error) e.results = result->bits;
  return e;
}

// Expected results of a reduction: the library on dense copies, one thread,
// every output summed exactly.
Expectation reduction_expectation(const Call& c, const std::vector<unsigned char>& snapshot) {
  Expectation e;
  const bool views_ok = c.a.strides_ok() && c.b.strides_ok() && c.out.strides_ok();
  if (!views_ok) {  // a strides list of the wrong length: no dense copy to make
    e.error = true;
    return e;
  }
  auto dense = [&](const View& v) {
    std::vector<unsigned char> bytes;
    for_each_element(v, [&](int64_t at) { bytes.insert(bytes.end(), &snapshot[at], &snapshot[at] + v.item()); });
    bytes.resize(std::max<std::size_t>(bytes.size(), 8));
    return bytes;
  };
  const std::vector<unsigned char> a = dense(c.a), b = dense(c.b);
  std::vector<unsigned char> out(std::max<std::size_t>(static_cast<std::size_t>(count_of(c.out.shape)) * c.out.item(), 8), 0xA5);
  std::optional<std::string> error;
  {
    const sqdiff::ConstTensorView av{a.data(), c.a.dtype, c.a.shape};
    const sqdiff::ConstTensorView bv{b.data(), c.b.dtype, c.b.shape};
    const sqdiff::TensorView ov{out.data(), c.out.dtype, c.out.shape};
    sqdiff::detail::set_fast_square_reductions(false);
    try {
      if (c.op == Op::sum) {
        sqdiff::sum_squared_difference(av, bv, ov, {c.mode, c.axes, c.keepdims, 1});
      } else {
        sqdiff::mean_squared_difference(av, bv, ov, {c.mode, c.axes, c.keepdims, 1});
      }
    } catch (const sqdiff::Error& x) {
      error = x.what();
    }
    sqdiff::detail::set_fast_square_reductions(true);
  }
  e.error = error.has_value() || c.threads < 0;
  if (!e.error && !strides_nest(c.out)) {
    e.error = true;
    e.either = count_of(c.out.shape) == 0;
  }
  if (!e.error) {
    for (int64_t k = 0; k < count_of(c.out.shape); ++k) {
      e.results.push_back(oracle::load_bits(out.data() + k * static_cast<int64_t>(c.out.item()), c.out.dtype));
    }
  }
  return e;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const std::optional<Call> call = decode(in);
  if (!call) return 0;
  const Call& c = *call;
  Arena arena(c.arena_size, c.arena_shift);
  fill(in, arena, c.a.dtype);
  const std::vector<unsigned char> snapshot(arena.data(), arena.data() + arena.size());
  const bool reduction = c.op == Op::sum || c.op == Op::mean;
  const Expectation expected = reduction ? reduction_expectation(c, snapshot) : elementwise_expectation(c, snapshot);

  arena.poison_outside({&c.a, &c.b, &c.out});
  std::optional<std::string> error = run(c, arena.data(), c.threads);
  arena.unpoison();
  compare(c, snapshot, arena, expected, error, "first call");

  // Again from the same snapshot with another thread count: the plan memo
  // replays the call, and results may not depend on the threads.
  const int threads = c.threads < 0 ? c.threads : c.threads == 1 ? 2 : 1;
  std::memcpy(arena.data(), snapshot.data(), snapshot.size());
  arena.poison_outside({&c.a, &c.b, &c.out});
  error = run(c, arena.data(), threads);
  arena.unpoison();
  compare(c, snapshot, arena, expected, error, threads == 1 ? "again, 1 thread" : "again, 2 threads");
  return 0;
}
