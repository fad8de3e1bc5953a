// The call memo (src/call_memo.hpp): a call that repeats the shapes of the
// thread's last general-path call reuses its plan. These tests alternate calls
// that differ in one part of the memo's key, or only in their pointers, and
// check every result against the scalar oracle: a key that missed a part, or a
// pointer check that let through what the full path handles differently,
// reuses the wrong plan and shows up here.
#include <gtest/gtest.h>

#include <hwy/targets.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "elementwise/call_memo.hpp"
#include "elementwise/plan.hpp"
#include "elementwise/short_rows.hpp"
#include "kernels/kernel_table.hpp"
#include "oracle.hpp"
#include "shape/validate.hpp"
#include "sqdiff/sqdiff.hpp"
#include "test_support.hpp"

namespace {

namespace oracle = sqdiff_test::oracle;
namespace values = sqdiff_test::values;
using sqdiff::DType;
using Shape = std::vector<int64_t>;

// Random elements of one dtype, in which a call's views are placed by element
// offset (so that an output can overlap an input).
class Pool {
 public:
  Pool(DType dtype, std::size_t elements) : dtype_(dtype), bytes_(elements * oracle::elem_size(dtype)) {}

  void refill(std::mt19937_64& rng) {
    const std::size_t size = oracle::elem_size(dtype_);
    for (std::size_t i = 0; i * size < bytes_.size(); ++i) {
      oracle::store_bits(bytes_.data() + i * size, dtype_, values::random_value(rng, dtype_));
    }
  }
  unsigned char* at(int64_t element) {
    return bytes_.data() + element * static_cast<int64_t>(oracle::elem_size(dtype_));
  }
  DType dtype() const { return dtype_; }
  const std::vector<unsigned char>& bytes() const { return bytes_; }

 private:
  DType dtype_;
  std::vector<unsigned char> bytes_;
};

struct ViewSpec {
  Shape shape;
  Shape strides;   // empty: dense
  int64_t at = 0;  // element offset of the view's first element in the pool
};

struct CallSpec {
  ViewSpec a;
  ViewSpec b;
  ViewSpec out;
  sqdiff::Broadcast mode = {};
  oracle::Op op = oracle::Op::squared_difference;  // not part of the memo's key
};

// Element offsets (from the pool's start) of every output element, row-major.
std::vector<int64_t> output_offsets(const ViewSpec& out) {
  const Shape strides = out.strides.empty() ? oracle::dense_strides(out.shape) : out.strides;
  std::vector<int64_t> offsets;
  sqdiff_test::for_each_index(out.shape, [&](const std::vector<int64_t>& index, int64_t) {
    int64_t offset = out.at;
    for (std::size_t d = 0; d < index.size(); ++d) offset += index[d] * strides[d];
    offsets.push_back(offset);
  });
  return offsets;
}

// Runs the call's op on fresh random data and checks every output element
// against the oracle (computed from the inputs as they were before the call),
// and that nothing outside the output changed.
void run_and_check(const CallSpec& spec, Pool& pool, std::mt19937_64& rng, const char* what) {
  SCOPED_TRACE(what);
  pool.refill(rng);
  const std::vector<unsigned char> before = pool.bytes();
  const DType dtype = pool.dtype();
  const auto offset_in = [&](const ViewSpec& view) {
    return before.data() + view.at * static_cast<int64_t>(oracle::elem_size(dtype));
  };
  const auto expected = oracle::compute(spec.op,
                                        {offset_in(spec.a), dtype, spec.a.shape, spec.a.strides},
                                        {offset_in(spec.b), dtype, spec.b.shape, spec.b.strides}, spec.mode.kind,
                                        spec.mode.axis);
  ASSERT_TRUE(expected.has_value());
  ASSERT_EQ(expected->shape, spec.out.shape);

  sqdiff::Options options;
  options.broadcast = spec.mode;
  options.threads = 1;
  const sqdiff::ConstTensorView a{pool.at(spec.a.at), dtype, spec.a.shape, spec.a.strides};
  const sqdiff::ConstTensorView b{pool.at(spec.b.at), dtype, spec.b.shape, spec.b.strides};
  const sqdiff::TensorView out{pool.at(spec.out.at), dtype, spec.out.shape, spec.out.strides};
  if (spec.op == oracle::Op::subtract) {
    sqdiff::subtract(a, b, out, options);
  } else {
    sqdiff::squared_difference(a, b, out, options);
  }

  const std::vector<int64_t> offsets = output_offsets(spec.out);
  const std::set<int64_t> written(offsets.begin(), offsets.end());
  int mismatches = 0;
  for (std::size_t i = 0; i < offsets.size() && mismatches < 5; ++i) {
    const uint64_t actual = oracle::load_bits(pool.at(offsets[i]), dtype);
    if (!oracle::bits_match(dtype, expected->bits[i], actual)) {
      ADD_FAILURE() << "output element " << i << ": expected " << oracle::hex_bits(dtype, expected->bits[i])
                    << ", got " << oracle::hex_bits(dtype, actual);
      ++mismatches;
    }
  }
  const std::size_t size = oracle::elem_size(dtype);
  for (std::size_t i = 0; i * size < before.size(); ++i) {
    if (written.count(static_cast<int64_t>(i)) != 0) continue;
    ASSERT_EQ(std::memcmp(before.data() + i * size, pool.bytes().data() + i * size, size), 0)
        << "element " << i << " of the pool, outside the output, changed";
  }
}

struct Step {
  const CallSpec& spec;
  Pool& pool;
  const char* what;
};

// Runs the steps in order, three times over: each call must be right
// whatever the memo holds from the calls before it.
void in_turn(std::initializer_list<Step> steps, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 3; ++round) {
    for (const Step& step : steps) run_and_check(step.spec, step.pool, rng, step.what);
  }
}

// Calls `first` and `second` in turn, each twice in a row.
void alternate(const CallSpec& first, const CallSpec& second, DType dtype) {
  Pool pool(dtype, 8192);
  in_turn({{first, pool, "first"}, {first, pool, "first, repeated"}, {second, pool, "second"},
           {second, pool, "second, repeated"}},
          20261122);
}

// The specs' example: block rows (a small 2-D block looked up through index
// tables in the memo's scratch).
CallSpec spec_example() {
  return {{{8, 1, 6, 1}, {}, 0}, {{7, 1, 5}, {}, 100}, {{8, 7, 6, 5}, {}, 2000}, {}};
}

TEST(CallMemoTest, InputStridesArePartOfTheKey) {
  CallSpec reversed = spec_example();
  reversed.a.strides = {-6, 6, -1, 1};  // same shape, rows and columns read backwards
  reversed.a.at = 47;
  alternate(spec_example(), reversed, DType::f32);
  CallSpec gapped = spec_example();
  gapped.b.strides = {10, 10, 2};
  alternate(spec_example(), gapped, DType::f32);
}

TEST(CallMemoTest, OutputStridesArePartOfTheKey) {
  CallSpec transposed = spec_example();
  transposed.out.strides = {1, 8, 56, 336};
  alternate(spec_example(), transposed, DType::f32);
}

TEST(CallMemoTest, ShapesArePartOfTheKey) {
  CallSpec other = spec_example();
  other.b.shape = {7, 1, 6};  // out [8,7,6,6]: one more column per row
  other.out.shape = {8, 7, 6, 6};
  alternate(spec_example(), other, DType::f32);
  // Same output shape: inputs of more elements, each read differently.
  CallSpec full_b = spec_example();
  full_b.b.shape = {7, 6, 5};
  alternate(spec_example(), full_b, DType::f32);
  CallSpec full_a = spec_example();
  full_a.a.shape = {8, 7, 6, 1};
  full_a.b.at = 400;
  alternate(spec_example(), full_a, DType::f32);
}

TEST(CallMemoTest, DTypeIsPartOfTheKey) {
  // Same element size: only the kernels differ.
  const CallSpec call = spec_example();
  Pool f32(DType::f32, 8192);
  Pool i32(DType::i32, 8192);
  Pool f64(DType::f64, 8192);
  in_turn({{call, f32, "f32"}, {call, i32, "i32"}, {call, f64, "f64"}}, 7);
}

TEST(CallMemoTest, BroadcastModeIsPartOfTheKey) {
  // b [2,1] aligns with a's trailing dims under numpy (and pdpd axis 1), with
  // its leading dims under pdpd axis 0: same shapes, different elements.
  CallSpec numpy{{{2, 2, 3}, {}, 0}, {{2, 1}, {}, 50}, {{2, 2, 3}, {}, 100}, {}};
  CallSpec pdpd_axis0 = numpy;
  pdpd_axis0.mode = {sqdiff::BroadcastKind::pdpd, 0};
  CallSpec pdpd_axis1 = numpy;
  pdpd_axis1.mode = {sqdiff::BroadcastKind::pdpd, 1};
  alternate(numpy, pdpd_axis0, DType::f32);
  alternate(pdpd_axis1, pdpd_axis0, DType::f32);
}

TEST(CallMemoTest, KernelTableIsPartOfTheKey) {
  // a spans 12 elements of each [12,3] block: a block row where a vector
  // holds 16 f32 lanes (AVX-512), copied blocks where it holds 8 (AVX2) or
  // fewer. A plan reused across targets would look 12 elements up from 8.
  const CallSpec call{{{12, 1}, {}, 0}, {{5, 1, 3}, {}, 20}, {{5, 12, 3}, {}, 100}, {}};
  std::mt19937_64 rng(11);
  Pool pool(DType::f32, 8192);
  const int64_t compiled = sqdiff::detail::compiled_targets();
  for (int round = 0; round < 2; ++round) {
    for (int64_t targets = compiled & hwy::SupportedTargets(); targets != 0; targets &= targets - 1) {
      const int64_t target = targets & -targets;
      SCOPED_TRACE(hwy::TargetName(target));
      hwy::SetSupportedTargetsForTest(target);
      run_and_check(call, pool, rng, "this target");
      run_and_check(call, pool, rng, "this target, repeated");
      hwy::SetSupportedTargetsForTest(0);
    }
  }
}

TEST(CallMemoTest, TheOpIsNotPartOfTheKeyButEachCallRunsItsOwn) {
  CallSpec subtract = spec_example();
  subtract.op = oracle::Op::subtract;
  alternate(spec_example(), subtract, DType::f32);
  alternate(subtract, spec_example(), DType::i16);  // no block rows for 16-bit lanes
}

// A small call's kernel calls are recorded and replayed (execute.hpp,
// RecordedRun) when there are at most RecordedRun::kMaxCalls of them. These
// calls differ only in their pointers, so each replays the one before.
TEST(CallMemoTest, RecordedKernelCallsReplayAtNewPointers) {
  // out [t,4,40] from a [t,1,40] and b [4,40]: a's dim of 4 does not merge,
  // so the run makes one kernel call of 4 rows per outer index.
  const auto rows = [](int64_t outer, int64_t a_at, int64_t b_at, int64_t out_at) {
    return CallSpec{{{outer, 1, 40}, {}, a_at}, {{4, 40}, {}, b_at}, {{outer, 4, 40}, {}, out_at}, {}};
  };
  static_assert(sqdiff::detail::RecordedRun::kMaxCalls == 4, "the calls below count on it");
  for (const int64_t outer : {3, 4, 5}) {  // recorded, recorded (all of kMaxCalls), too many calls
    SCOPED_TRACE("outer " + std::to_string(outer));
    Pool pool(DType::f32, 8192);
    in_turn({{rows(outer, 0, 300, 1000), pool, "first"},
             {rows(outer, 7, 500, 2000), pool, "moved"},
             {rows(outer, 0, 300, 0), pool, "in place"},
             {rows(outer, 1, 2, 3000), pool, "moved again"}},
            static_cast<uint64_t>(outer));
  }
  // The specs' example is one block call; reversed rows and columns of a
  // start the record at an offset into a.
  CallSpec reversed = spec_example();
  reversed.a.strides = {-6, 6, -1, 1};
  reversed.a.at = 47;
  CallSpec reversed_moved = reversed;
  reversed_moved.a.at = 60;
  reversed_moved.out.at = 3000;
  Pool pool(DType::f32, 8192);
  in_turn({{reversed, pool, "reversed"}, {reversed_moved, pool, "reversed, moved"}}, 3);
}

TEST(CallMemoTest, PartialOverlapTakesTheFullPathsSnapshot) {
  const CallSpec separate{{{4, 64}, {}, 0}, {{64}, {}, 300}, {{4, 64}, {}, 1000}, {}};
  CallSpec overlapping = separate;
  overlapping.out.at = 5;  // out starts inside a: a must be read as it was before
  CallSpec overlapping_b = separate;
  overlapping_b.out.at = 280;  // out covers b (elements 300-363): b must be read as it was before
  CallSpec in_place = separate;
  in_place.out.at = 0;  // out is a: no copy needed, the memo may run it
  alternate(separate, overlapping, DType::f32);
  alternate(separate, overlapping_b, DType::f32);
  alternate(separate, in_place, DType::f32);
  alternate(in_place, overlapping, DType::f32);
}

TEST(CallMemoTest, UnrememberedCallRebuildingTheScratchIsNotMistakenForIt) {
  // `overlapping` is never remembered (its b needs a snapshot), but its block
  // rows of [5,6] rebuild the index tables the specs' example's plan points to.
  const CallSpec remembered = spec_example();
  CallSpec overlapping{{{8, 1, 5, 1}, {}, 0}, {{7, 1, 6}, {}, 2100}, {{8, 7, 5, 6}, {}, 2000}, {}};
  Pool pool(DType::f32, 8192);
  in_turn({{remembered, pool, "remembered"}, {overlapping, pool, "overlapping"},
           {remembered, pool, "remembered, after the overlapping call"}},
          5);
}

TEST(CallMemoTest, ErrorsAreStillReported) {
  std::vector<float> a(48), b(35), out(1680, 7.0f);
  const sqdiff::ConstTensorView va{a.data(), DType::f32, {8, 1, 6, 1}};
  const sqdiff::ConstTensorView vb{b.data(), DType::f32, {7, 1, 5}};
  const sqdiff::TensorView vout{out.data(), DType::f32, {8, 7, 6, 5}};
  sqdiff::squared_difference(va, vb, vout);
  sqdiff::squared_difference(va, vb, vout);  // remembered now
  std::fill(out.begin(), out.end(), 7.0f);

  const sqdiff::ConstTensorView null_b{nullptr, DType::f32, {7, 1, 5}};
  EXPECT_NE(sqdiff_test::error_message([&] { sqdiff::squared_difference(va, null_b, vout); }).find("null"),
            std::string::npos);
  // A view whose first element is at the top of the address space.
  const auto top = reinterpret_cast<const void*>(~uintptr_t{0} - 16);
  const sqdiff::ConstTensorView wrapping_a{top, DType::f32, {8, 1, 6, 1}};
  EXPECT_NE(sqdiff_test::error_message([&] { sqdiff::squared_difference(wrapping_a, vb, vout); })
                .find("beyond the address space"),
            std::string::npos);
  // The same views under modes that do not broadcast them, and an output of
  // as many elements in another shape.
  for (const auto kind : {sqdiff::BroadcastKind::none, sqdiff::BroadcastKind::pdpd}) {
    sqdiff::Options options;
    options.broadcast.kind = kind;
    EXPECT_NE(sqdiff_test::error_message([&] { sqdiff::squared_difference(va, vb, vout, options); }), "");
  }
  const sqdiff::TensorView misshapen_out{out.data(), DType::f32, {8, 7, 5, 6}};
  EXPECT_NE(sqdiff_test::error_message([&] { sqdiff::squared_difference(va, vb, misshapen_out); })
                .find("differs from the broadcast shape"),
            std::string::npos);
  for (const float value : out) ASSERT_EQ(value, 7.0f) << "a rejected call wrote its output";
}

TEST(CallMemoTest, RandomSequencesOfRepeatedAndChangedCalls) {
  const std::vector<CallSpec> calls = {
      spec_example(),
      {{{8, 1, 6, 1}, {-6, 6, -1, 1}, 47}, {{7, 1, 5}, {}, 100}, {{8, 7, 6, 5}, {}, 2000}, {}},
      {{{8, 1, 6, 1}, {}, 0}, {{7, 1, 5}, {}, 100}, {{8, 7, 6, 5}, {1, 8, 56, 336}, 2000}, {}},
      {{{4, 64}, {}, 0}, {{64}, {}, 300}, {{4, 64}, {}, 0}, {}},
      {{{4, 64}, {}, 0}, {{64}, {}, 300}, {{4, 64}, {}, 7}, {}},
      {{{1, 32, 32, 2}, {}, 0}, {{16, 1, 1, 2}, {}, 3000}, {{16, 32, 32, 2}, {}, 3100}, {}},
      {{{2, 2, 3}, {}, 0}, {{2, 1}, {}, 50}, {{2, 2, 3}, {}, 100}, {sqdiff::BroadcastKind::pdpd, 0}},
  };
  std::mt19937_64 rng(20261122);
  Pool pool(DType::f32, 40000);
  std::size_t previous = 0;
  for (int step = 0; step < 120; ++step) {
    // Half the time the same call again, so that the memo is used.
    const std::size_t pick = rng() % 2 == 0 ? previous : static_cast<std::size_t>(rng() % calls.size());
    SCOPED_TRACE("step " + std::to_string(step) + ", call " + std::to_string(pick));
    run_and_check(calls[pick], pool, rng, "random");
    previous = pick;
  }
}

// Block rows of three shapes, each with index tables in its own memo's
// scratch, called in turn: a table shared between memos, or rebuilt under a
// remembered plan, reads the wrong elements.
TEST(CallMemoTest, SeveralRecentKeysKeepTheirOwnTables) {
  const CallSpec spec = spec_example();
  const CallSpec transposed_block{{{8, 1, 5, 1}, {}, 0}, {{7, 1, 6}, {}, 100}, {{8, 7, 5, 6}, {}, 2000}, {}};
  const CallSpec small_block{{{4, 1, 3, 1}, {}, 50}, {{5, 1, 7}, {}, 300}, {{4, 5, 3, 7}, {}, 3000}, {}};
  Pool pool(DType::f32, 8192);
  in_turn({{spec, pool, "specs' example"}, {transposed_block, pool, "[8,1,5,1] with [7,1,6]"},
           {small_block, pool, "[4,1,3,1] with [5,1,7]"}, {spec, pool, "specs' example, again"},
           {small_block, pool, "[4,1,3,1] with [5,1,7], again"}},
          17);
}

// What the full path does to remember a call (src/ops.cpp): validate, plan,
// widen short rows into the memo's scratch, remember.
void remember_as_full_path(sqdiff::detail::CallMemo& memo, const sqdiff::ConstTensorView& a,
                           const sqdiff::ConstTensorView& b, const sqdiff::TensorView& out,
                           const sqdiff::Options& options) {
  namespace detail = sqdiff::detail;
  const detail::KernelTable& table = detail::kernel_table();
  memo.forget();
  const detail::CheckedCall call = detail::validate_call("test", a, b, out, options);
  detail::Plan plan = detail::make_plan(call.aligned);
  detail::ShortRowInputs inputs{call.a.data, call.b.data};
  detail::widen_short_rows(plan, call.element_size, table.lookup_lanes[static_cast<int>(a.dtype)], inputs,
                           memo.scratch());
  memo.remember(table, a, b, out, options, call, plan);
}

// White box: the thread's recent keys, and which one a new key replaces.
TEST(CallMemoTest, RecentCallsKeepTheLastKeysUsed) {
  namespace detail = sqdiff::detail;
  const detail::KernelTable& table = detail::kernel_table();
  std::vector<float> a(64, 3.0f), b(64, 1.0f), out(4096, 0.0f);
  const sqdiff::Options options;
  // Key k: out [k+2, 3, 5] from a [k+2, 3, 1] and b [5].
  const auto views = [&](int64_t k) {
    return std::tuple{sqdiff::ConstTensorView{a.data(), DType::f32, {k + 2, 3, 1}},
                      sqdiff::ConstTensorView{b.data(), DType::f32, {5}},
                      sqdiff::TensorView{out.data(), DType::f32, {k + 2, 3, 5}}};
  };
  const auto hits = [&](detail::RecentCalls& recent, int64_t k) {
    const auto [va, vb, vout] = views(k);
    return recent.try_run(table, detail::Op::squared_difference, va, vb, vout, options);
  };
  const auto full_path = [&](detail::RecentCalls& recent, int64_t k) {
    const auto [va, vb, vout] = views(k);
    remember_as_full_path(recent.claim(), va, vb, vout, options);
  };
  static_assert(detail::RecentCalls::kEntries == 4, "the keys below count on it");
  detail::RecentCalls recent;
  for (int64_t k = 0; k < 4; ++k) {
    EXPECT_FALSE(hits(recent, k)) << k;
    full_path(recent, k);
  }
  for (int64_t k = 0; k < 4; ++k) EXPECT_TRUE(hits(recent, k)) << k;
  for (const float value : out) ASSERT_TRUE(value == 4.0f || value == 0.0f);
  EXPECT_TRUE(hits(recent, 0));  // key 1 is now the least recently used
  EXPECT_FALSE(hits(recent, 4));
  full_path(recent, 4);
  EXPECT_FALSE(hits(recent, 1));
  for (const int64_t k : {0, 2, 3, 4}) EXPECT_TRUE(hits(recent, k)) << k;
}

// White box: which remembered calls replay their kernel calls.
TEST(CallMemoTest, SmallRunsOfFewKernelCallsAreReplayed) {
  namespace detail = sqdiff::detail;
  const auto replays = [](const Shape& a_shape, const Shape& b_shape, const Shape& out_shape,
                           const Shape& out_strides = {}) {
    std::vector<float> a(100000), b(100000), out(1000000);
    const sqdiff::ConstTensorView va{a.data(), DType::f32, a_shape};
    const sqdiff::ConstTensorView vb{b.data(), DType::f32, b_shape};
    const sqdiff::TensorView vout{out.data(), DType::f32, out_shape, out_strides};
    detail::CallMemo memo;
    remember_as_full_path(memo, va, vb, vout, {});
    return memo.replays();
  };
  EXPECT_TRUE(replays({8, 1, 6, 1}, {7, 1, 5}, {8, 7, 6, 5}));  // one block call
  EXPECT_TRUE(replays({4, 1, 40}, {4, 40}, {4, 4, 40}));        // four vv calls
  EXPECT_FALSE(replays({5, 1, 40}, {4, 40}, {5, 4, 40}));       // five
  EXPECT_FALSE(replays({8, 1, 6, 1}, {7, 1, 5}, {8, 7, 6, 5}, {1, 8, 56, 336}));  // packed rows
  EXPECT_FALSE(replays({2, 1, 40000}, {4, 40000}, {2, 4, 40000}));  // 1.28 MB: may use threads
}

// White box: a repeated call is run by the memo, and a call differing in one
// part of the key, or needing the full path, is not.
TEST(CallMemoTest, MemoRunsTheRepeatedCallOnly) {
  namespace detail = sqdiff::detail;
  std::vector<float> a(48, 3.0f), b(35, 1.0f), out(1680, 0.0f);
  const sqdiff::ConstTensorView va{a.data(), DType::f32, {8, 1, 6, 1}};
  const sqdiff::ConstTensorView vb{b.data(), DType::f32, {7, 1, 5}};
  const sqdiff::TensorView vout{out.data(), DType::f32, {8, 7, 6, 5}};
  const sqdiff::Options options;
  const detail::KernelTable& table = detail::kernel_table();

  detail::CallMemo memo;
  EXPECT_FALSE(memo.try_run(table, detail::Op::squared_difference, va, vb, vout, options));
  remember_as_full_path(memo, va, vb, vout, options);

  EXPECT_TRUE(memo.try_run(table, detail::Op::squared_difference, va, vb, vout, options));
  for (const float value : out) ASSERT_EQ(value, 4.0f);

  const sqdiff::ConstTensorView strided_b{b.data(), DType::f32, {7, 1, 5}, {5, 5, 1}};
  EXPECT_FALSE(memo.try_run(table, detail::Op::squared_difference, va, strided_b, vout, options));
  sqdiff::Options other_axis;
  other_axis.broadcast = {sqdiff::BroadcastKind::numpy, 0};
  EXPECT_FALSE(memo.try_run(table, detail::Op::squared_difference, va, vb, vout, other_axis));
  sqdiff::Options negative_threads;
  negative_threads.threads = -1;
  EXPECT_FALSE(memo.try_run(table, detail::Op::squared_difference, va, vb, vout, negative_threads));
  const sqdiff::TensorView overlapping_out{a.data() + 1, DType::f32, {8, 7, 6, 5}};
  EXPECT_FALSE(memo.try_run(table, detail::Op::squared_difference, va, vb, overlapping_out, options));
  memo.forget();
  EXPECT_FALSE(memo.try_run(table, detail::Op::squared_difference, va, vb, vout, options));
}

}  // namespace
