#include "buffers.hpp"

#include <sqdiff/bfloat16.hpp>
#include <sqdiff/float16.hpp>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

namespace sqdiff_bench {
namespace {

constexpr std::size_t kBufferBytes = std::size_t{256} << 20;
constexpr std::size_t kAlign = std::size_t{2} << 20;  // a huge-page boundary

std::byte* allocate() {
  void* p = std::aligned_alloc(kAlign, kBufferBytes);
  if (p == nullptr) throw std::bad_alloc();
  // Ask for transparent huge pages (the machine's THP mode is "madvise"), as
  // NumPy does for large arrays: fewer TLB misses for the cases and the bound
  // loops alike. Pages are touched by fill_a/fill_b and by each benchmark's
  // untimed warm-up calls, so no timed sample pays for page faults.
  madvise(p, kBufferBytes, MADV_HUGEPAGE);
  // Bound loops read as many bytes as the case moves, often beyond what the
  // case filled (a broadcast input is small). Untouched pages all map the
  // kernel's one zero page, which reads from cache and made a copy bound look
  // twice as fast as DRAM allows: write every page once.
  std::memset(p, 0, kBufferBytes);
  return static_cast<std::byte*>(p);
}

template <class T, class F>
void fill(std::byte* dst, std::size_t count, F value) {
  T* out = reinterpret_cast<T*>(dst);
  for (std::size_t i = 0; i < count; ++i) out[i] = value(i);
}

float a_value(std::size_t i) { return 1.0f + static_cast<float>(i % 997) / 997.0f; }
float b_value(std::size_t i) { return -0.25f - static_cast<float>(i % 991) / 3964.0f; }

void fill_values(std::byte* dst, sqdiff::DType dtype, std::size_t count, float (*value)(std::size_t),
                 int32_t (*int_value)(std::size_t)) {
  if (count * sqdiff::dtype_size(dtype) > kBufferBytes) throw std::length_error("benchmark buffer too small");
  switch (dtype) {
    case sqdiff::DType::f32: fill<float>(dst, count, value); break;
    case sqdiff::DType::f64:
      fill<double>(dst, count, [value](std::size_t i) { return static_cast<double>(value(i)); });
      break;
    case sqdiff::DType::f16:
      fill<uint16_t>(dst, count, [value](std::size_t i) { return sqdiff::float16(value(i)).bits(); });
      break;
    case sqdiff::DType::bf16:
      fill<uint16_t>(dst, count, [value](std::size_t i) { return sqdiff::bfloat16(value(i)).bits(); });
      break;
    case sqdiff::DType::i32: fill<int32_t>(dst, count, int_value); break;
    // The quantized cases': the same integers modulo 2^8 (every stored value
    // of the type within a period of 1000), or times 37 modulo 2^16 (spread
    // over the type's range).
    case sqdiff::DType::i8:
      fill<int8_t>(dst, count, [int_value](std::size_t i) { return static_cast<int8_t>(int_value(i)); });
      break;
    case sqdiff::DType::u8:
      fill<uint8_t>(dst, count, [int_value](std::size_t i) { return static_cast<uint8_t>(int_value(i)); });
      break;
    case sqdiff::DType::i16:
      fill<int16_t>(dst, count, [int_value](std::size_t i) { return static_cast<int16_t>(int_value(i) * 37); });
      break;
    default: throw std::invalid_argument("fill: unsupported dtype");
  }
}

// What a and b hold, so that consecutive benchmarks on the same data skip
// refilling hundreds of MiB.
struct Contents {
  sqdiff::DType dtype = sqdiff::DType::f32;
  std::size_t count = 0;  // 0: unknown
};
Contents a_contents;
Contents b_contents;

}  // namespace

Buffers& buffers() {
  static Buffers instance{allocate(), allocate(), allocate(), allocate(), kBufferBytes};
  return instance;
}

void fill_a(sqdiff::DType dtype, std::size_t count) {
  if (a_contents.dtype == dtype && a_contents.count >= count) return;
  a_contents = {dtype, count};
  fill_values(buffers().a, dtype, count, a_value, [](std::size_t i) { return static_cast<int32_t>(i % 1000); });
}

void fill_b(sqdiff::DType dtype, std::size_t count) {
  if (b_contents.dtype == dtype && b_contents.count >= count) return;
  b_contents = {dtype, count};
  fill_values(buffers().b, dtype, count, b_value,
              [](std::size_t i) { return -1 - static_cast<int32_t>(i % 1000); });
}

}  // namespace sqdiff_bench

namespace sqdiff_bench {

void a_was_overwritten() { a_contents = {}; }

std::byte* gradient_buffer(sqdiff::DType dtype, std::size_t count) {
  static std::byte* const buffer = allocate();
  static Contents contents;
  if (contents.dtype != dtype || contents.count < count) {
    contents = {dtype, count};
    fill_values(buffer, dtype, count, b_value, [](std::size_t i) { return -1 - static_cast<int32_t>(i % 1000); });
  }
  return buffer;
}

}  // namespace sqdiff_bench
