// libFuzzer target for the comparison API (sqdiff/compare.hpp), through its
// public header only: the dtype, two small shapes, the broadcast mode, the
// options (tolerances, equal_nan, peak, MSE gate, threads, chunk size), each
// input's layout (dense, gapped, reversed innermost dim, a stride of 0) and the
// chunks of a streamed comparison come from the input's first bytes, the
// elements from the rest. A call returns or throws sqdiff::Error; a valid one
// equals compare() on dense copies of the broadcast inputs, with two threads,
// and a Comparison fed those copies in the fuzzer's chunks, bit for bit; its
// NaN/inf counts, first positions and differing pairs equal a scalar loop's.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_check.hpp"
#include "sqdiff/bfloat16.hpp"
#include "sqdiff/compare.hpp"
#include "sqdiff/error.hpp"
#include "sqdiff/float16.hpp"

namespace {

using sqdiff::CompareOptions;
using sqdiff::CompareStats;
using sqdiff::DType;
using sqdiff::Shape;
using sqdiff_fuzz::check;

class Bytes {
 public:
  Bytes(const uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  uint8_t next() { return at_ < size_ ? data_[at_++] : 0; }
  const uint8_t* rest() const { return data_ + at_; }
  std::size_t rest_size() const { return size_ - at_; }

 private:
  const uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

Shape shape_from(Bytes& in) {
  Shape shape(in.next() % 4);
  for (int64_t& dim : shape) dim = in.next() % 6;
  return shape;
}

int64_t count(const Shape& shape) {
  int64_t n = 1;
  for (int64_t dim : shape) n *= dim;
  return n;
}

// A view of `shape` in `arena`: its strides (dense, gapped, reversed innermost,
// or 0 on the outermost dim) and its first element's offset.
struct Layout {
  Shape strides;
  int64_t offset = 0;
  int64_t span = 1;  // elements of the arena it needs
};

Layout layout_from(uint8_t choice, const Shape& shape) {
  Layout l;
  l.strides.assign(shape.size(), 0);
  int64_t stride = choice % 4 == 1 ? 2 : 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    l.strides[i] = stride;
    stride *= std::max<int64_t>(shape[i], 1);
  }
  l.span = stride;
  if (choice % 4 == 2 && !shape.empty()) {  // the innermost dim reversed
    l.offset = std::max<int64_t>(shape.back(), 1) - 1;
    l.strides.back() = -l.strides.back();
  }
  if (choice % 4 == 3 && !shape.empty()) l.strides.front() = 0;  // every outer index reads the same slice
  return l;
}

std::size_t item(DType dtype) { return sqdiff::dtype_size(dtype); }

bool is_float(DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64; }

double as_double(DType t, const std::byte* p) {
  switch (t) {
    case DType::f16: { uint16_t b; std::memcpy(&b, p, 2); return static_cast<float>(sqdiff::float16::from_bits(b)); }
    case DType::bf16: { uint16_t b; std::memcpy(&b, p, 2); return static_cast<float>(sqdiff::bfloat16::from_bits(b)); }
    case DType::f32: { float v; std::memcpy(&v, p, 4); return v; }
    case DType::f64: { double v; std::memcpy(&v, p, 8); return v; }
    default: return 0;
  }
}

// The element of `shape` at row-major `position`, read through a view's
// strides aligned right to the broadcast shape (numpy mode; 0 on size-1 dims).
const std::byte* element_at(const std::byte* base, DType dtype, const Shape& own, const Shape& strides,
                            const Shape& shape, int64_t position) {
  int64_t offset = 0;
  for (std::size_t i = shape.size(); i-- > 0;) {
    const int64_t index = position % shape[i];
    position /= shape[i];
    const std::size_t back = shape.size() - 1 - i;
    if (back < own.size()) {
      const std::size_t j = own.size() - 1 - back;
      if (own[j] != 1) offset += index * strides[j];
    }
  }
  return base + offset * static_cast<int64_t>(item(dtype));
}

void expect_same(const CompareStats& x, const CompareStats& y, const char* what) {
  const auto same = [](double p, double q) { return std::bit_cast<uint64_t>(p) == std::bit_cast<uint64_t>(q); };
  const bool ok = x.elements == y.elements && x.nan_a == y.nan_a && x.nan_b == y.nan_b && x.inf_a == y.inf_a &&
                  x.inf_b == y.inf_b && x.first_nan_a == y.first_nan_a && x.first_nan_b == y.first_nan_b &&
                  x.first_inf_a == y.first_inf_a && x.first_inf_b == y.first_inf_b && x.differing == y.differing &&
                  same(x.sum_squares, y.sum_squares) && same(x.mse, y.mse) &&
                  x.largest.position == y.largest.position && same(x.largest.value, y.largest.value) &&
                  x.largest.exact == y.largest.exact && x.finite_elements == y.finite_elements &&
                  same(x.finite_sum_squares, y.finite_sum_squares) &&
                  x.finite_largest.position == y.finite_largest.position &&
                  x.out_of_tolerance == y.out_of_tolerance && x.worst.position == y.worst.position &&
                  same(x.worst.value, y.worst.value) && same(x.worst_rel_error, y.worst_rel_error) &&
                  x.passed == y.passed;
  check(ok, what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  const DType dtype = static_cast<DType>(in.next() % 13);  // 12: an invalid dtype now and then
  const Shape a_shape = shape_from(in);
  const Shape b_shape = shape_from(in);
  CompareOptions options;
  const uint8_t mode = in.next();
  options.broadcast = {mode % 3 == 0 ? sqdiff::BroadcastKind::none : sqdiff::BroadcastKind::numpy, -1};
  const uint8_t gates = in.next();
  const double tolerances[] = {0, 1e-8, 1e-5, 0.5, 3, -1, NAN, INFINITY};
  if (gates & 1) options.atol = tolerances[in.next() % 8];
  if (gates & 2) options.rtol = tolerances[in.next() % 8];
  options.equal_nan = (gates & 4) != 0;
  if (gates & 8) options.peak = tolerances[in.next() % 8];
  if (gates & 16) options.fail_above = tolerances[in.next() % 8];
  options.threads = in.next() % 3;
  options.chunk_elements = 1 + in.next() % 40;
  const Layout la = layout_from(in.next(), a_shape), lb = layout_from(in.next(), b_shape);
  const uint8_t chunk_seed = in.next();

  const std::size_t item_size = sqdiff::is_valid_dtype(dtype) ? item(dtype) : 1;
  std::vector<std::byte> arena_a(static_cast<std::size_t>(la.span) * item_size), arena_b(static_cast<std::size_t>(lb.span) * item_size);
  for (std::size_t i = 0; i < arena_a.size() + arena_b.size(); ++i) {
    const std::byte value = in.rest_size() > 0 ? std::byte{in.rest()[i % in.rest_size()]} : std::byte{0};
    (i < arena_a.size() ? arena_a[i] : arena_b[i - arena_a.size()]) = value;
  }
  const sqdiff::ConstTensorView a{arena_a.data() + la.offset * static_cast<int64_t>(item_size), dtype, a_shape, la.strides};
  const sqdiff::ConstTensorView b{arena_b.data() + lb.offset * static_cast<int64_t>(item_size), dtype, b_shape, lb.strides};

  CompareStats stats;
  try {
    stats = sqdiff::compare(a, b, options);
  } catch (const sqdiff::Error&) {
    return 0;  // refused: options, dtype or shapes
  }
  check(sqdiff::is_valid_dtype(dtype), "an invalid dtype was accepted");

  // Dense copies of the broadcast inputs, walked by this file's own loop.
  const Shape& shape = stats.shape;
  const int64_t n = count(shape);
  check(n == stats.elements, "elements is not the broadcast shape's count");
  std::vector<std::byte> dense_a(static_cast<std::size_t>(n) * item_size), dense_b(dense_a.size());
  int64_t nan_a = 0, nan_b = 0, inf_a = 0, inf_b = 0, first_nan_a = -1, first_inf_b = -1, differing = 0;
  for (int64_t p = 0; p < n; ++p) {
    const std::byte* x = element_at(static_cast<const std::byte*>(a.data), dtype, a_shape, la.strides, shape, p);
    const std::byte* y = element_at(static_cast<const std::byte*>(b.data), dtype, b_shape, lb.strides, shape, p);
    std::memcpy(&dense_a[static_cast<std::size_t>(p) * item_size], x, item_size);
    std::memcpy(&dense_b[static_cast<std::size_t>(p) * item_size], y, item_size);
    if (is_float(dtype)) {
      const double u = as_double(dtype, x), v = as_double(dtype, y);
      nan_a += std::isnan(u);
      nan_b += std::isnan(v);
      inf_a += std::isinf(u);
      inf_b += std::isinf(v);
      if (std::isnan(u) && first_nan_a < 0) first_nan_a = p;
      if (std::isinf(v) && first_inf_b < 0) first_inf_b = p;
      differing += !(u == v || (std::isnan(u) && std::isnan(v)));
    } else {
      differing += std::memcmp(x, y, item_size) != 0;
    }
  }
  check(stats.nan_a == nan_a && stats.nan_b == nan_b && stats.inf_a == inf_a && stats.inf_b == inf_b,
        "NaN/inf counts differ from the scalar loop's");
  check(stats.first_nan_a == first_nan_a && stats.first_inf_b == first_inf_b, "first positions differ");
  check(stats.differing == differing, "differing pairs differ from the scalar loop's");

  CompareOptions dense_options = options;
  dense_options.broadcast = {sqdiff::BroadcastKind::none, -1};
  dense_options.threads = 2;
  const CompareStats dense =
      sqdiff::compare({dense_a.data(), dtype, shape}, {dense_b.data(), dtype, shape}, dense_options);
  expect_same(stats, dense, "compare on the views differs from compare on dense copies with 2 threads");

  sqdiff::Comparison streamed(dtype, shape, dense_options);
  for (int64_t at = 0, k = 0; at < n; ++k) {
    const int64_t step = std::min<int64_t>(n - at, 1 + (chunk_seed + k * 7) % 9);
    const std::size_t offset = static_cast<std::size_t>(at) * item_size;
    streamed.add({&dense_a[offset], dtype, {step}}, {&dense_b[offset], dtype, {step}});
    at += step;
  }
  expect_same(stats, streamed.finish(), "a streamed Comparison differs from compare");
  return 0;
}
