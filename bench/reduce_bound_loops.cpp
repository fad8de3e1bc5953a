#include "reduce_bound_loops.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "native_vector.hpp"
#include "pair_runner.hpp"

namespace sqdiff_bench {
namespace {

using native::add;
using native::load;
using native::splat;
using native::store;
using native::stream;
using native::sub;
using native::Vec;
using native::zero;

// The FMA peak's vectors, as wide as native::Vec.
#if defined(__AVX512F__)
using VecF = __m512;
using VecD = __m512d;
inline VecF fma(VecF a, VecF b, VecF c) { return _mm512_fmadd_ps(a, b, c); }
inline VecD fma(VecD a, VecD b, VecD c) { return _mm512_fmadd_pd(a, b, c); }
inline VecF splat(float x) { return _mm512_set1_ps(x); }
inline VecD splat(double x) { return _mm512_set1_pd(x); }
#elif defined(__AVX2__) && defined(__FMA__)
using VecF = __m256;
using VecD = __m256d;
inline VecF fma(VecF a, VecF b, VecF c) { return _mm256_fmadd_ps(a, b, c); }
inline VecD fma(VecD a, VecD b, VecD c) { return _mm256_fmadd_pd(a, b, c); }
inline VecF splat(float x) { return _mm256_set1_ps(x); }
inline VecD splat(double x) { return _mm256_set1_pd(x); }
#else
#error "the reduction bound loops need AVX2 and FMA or AVX-512 (the bench is built with -march=native)"
#endif

constexpr std::size_t kLane = sizeof(Vec);
constexpr std::size_t kUnroll = 4;
constexpr std::size_t kLineAlign = 64;

int32_t word(const std::byte* p) {
  int32_t x;
  std::memcpy(&x, p, 4);
  return x;
}

int64_t horizontal_sum(Vec v) {
  alignas(64) int32_t lanes[kLane / 4];
  std::memcpy(lanes, &v, kLane);
  int64_t s = 0;
  for (const int32_t x : lanes) s += x;
  return s;
}

// Four accumulators, so that the adds of one step do not wait for each other
// (the loop is bound by loads, not by add latency).
int64_t read_sum_range(const std::byte* a, const std::byte* b, std::size_t n) {
  Vec s0 = zero(), s1 = zero(), s2 = zero(), s3 = zero();
  std::size_t i = 0;
  if (b != nullptr) {
    for (; i + kUnroll * kLane <= n; i += kUnroll * kLane) {
      s0 = add(s0, add(load(a + i), load(b + i)));
      s1 = add(s1, add(load(a + i + kLane), load(b + i + kLane)));
      s2 = add(s2, add(load(a + i + 2 * kLane), load(b + i + 2 * kLane)));
      s3 = add(s3, add(load(a + i + 3 * kLane), load(b + i + 3 * kLane)));
    }
  } else {
    for (; i + kUnroll * kLane <= n; i += kUnroll * kLane) {
      s0 = add(s0, load(a + i));
      s1 = add(s1, load(a + i + kLane));
      s2 = add(s2, load(a + i + 2 * kLane));
      s3 = add(s3, load(a + i + 3 * kLane));
    }
  }
  int64_t s = horizontal_sum(add(add(s0, s1), add(s2, s3)));
  for (; i + 4 <= n; i += 4) s += word(a + i) + (b != nullptr ? word(b + i) : 0);
  return s;
}

std::size_t bytes_to_aligned_line(const std::byte* c, std::size_t n) {
  const auto misalign = reinterpret_cast<std::uintptr_t>(c) % kLineAlign;
  return misalign == 0 ? 0 : std::min(n, kLineAlign - misalign);
}

template <bool kStream>
void put(std::byte* p, Vec v) {
  if constexpr (kStream) {
    stream(p, v);
  } else {
    store(p, v);
  }
}

void gradient_words(const std::byte* a, const std::byte* b, const std::byte* g, std::byte* ga, std::byte* gb,
                    std::size_t n) {
  for (std::size_t i = 0; i + 4 <= n; i += 4) {
    const uint32_t x = static_cast<uint32_t>(word(a + i)), y = static_cast<uint32_t>(word(b + i)),
                   z = static_cast<uint32_t>(word(g + i));
    const uint32_t u = x + y + z, v = x - y + z;
    std::memcpy(ga + i, &u, 4);
    std::memcpy(gb + i, &v, 4);
  }
}

// The two outputs are written at the same offsets, so one head (from ga's
// alignment) serves both when they are aligned alike, as the bench's
// huge-page-aligned buffers are; otherwise the streaming stores of gb are
// unaligned, which the bench never asks for.
template <bool kStream>
void gradient_range(const std::byte* a, const std::byte* b, const std::byte* g, std::byte* ga, std::byte* gb,
                    std::size_t n) {
  std::size_t i = 0;
  if constexpr (kStream) {
    i = bytes_to_aligned_line(ga, n);
    gradient_words(a, b, g, ga, gb, i);
  }
  for (; i + 2 * kLane <= n; i += 2 * kLane) {
    const Vec a0 = load(a + i), b0 = load(b + i), g0 = load(g + i);
    const Vec a1 = load(a + i + kLane), b1 = load(b + i + kLane), g1 = load(g + i + kLane);
    put<kStream>(ga + i, add(add(a0, b0), g0));
    put<kStream>(ga + i + kLane, add(add(a1, b1), g1));
    put<kStream>(gb + i, add(sub(a0, b0), g0));
    put<kStream>(gb + i + kLane, add(sub(a1, b1), g1));
  }
  gradient_words(a + i, b + i, g + i, ga + i, gb + i, n - i);
  if constexpr (kStream) _mm_sfence();
}

struct ReadSumJob {
  const std::byte* a;
  const std::byte* b;
  std::size_t bytes;
  std::size_t split;
  int64_t sums[2];  // one per thread
};

void read_sum_half(void* context, int part) {
  auto& job = *static_cast<ReadSumJob*>(context);
  const std::size_t begin = part == 0 ? 0 : job.split;
  const std::size_t end = part == 0 ? job.split : job.bytes;
  job.sums[part] = read_sum_range(job.a + begin, job.b != nullptr ? job.b + begin : nullptr, end - begin);
}

struct GradientJob {
  bool streaming;
  const std::byte* a;
  const std::byte* b;
  const std::byte* g;
  std::byte* ga;
  std::byte* gb;
  std::size_t bytes;
  std::size_t split;
};

void gradient_part(const GradientJob& job, std::size_t begin, std::size_t end) {
  const std::size_t n = end - begin;
  if (job.streaming) {
    gradient_range<true>(job.a + begin, job.b + begin, job.g + begin, job.ga + begin, job.gb + begin, n);
  } else {
    gradient_range<false>(job.a + begin, job.b + begin, job.g + begin, job.ga + begin, job.gb + begin, n);
  }
}

void gradient_half(void* context, int part) {
  const auto& job = *static_cast<const GradientJob*>(context);
  gradient_part(job, part == 0 ? 0 : job.split, part == 0 ? job.split : job.bytes);
}

// acc = acc * x + y in kFmaChains independent chains: enough to cover the FMA
// latency times the FMA ports. x and y keep every chain near y / (1 - x), far
// from overflow and denormals.
template <class V, class T>
double fma_chains() {
  V acc[kFmaChains];
  for (std::size_t c = 0; c < kFmaChains; ++c) acc[c] = splat(static_cast<T>(c));
  const V x = splat(static_cast<T>(0.999));
  const V y = splat(static_cast<T>(0.001));
  for (std::size_t i = 0; i < kFmaIterations; ++i) {
    for (std::size_t c = 0; c < kFmaChains; ++c) acc[c] = fma(acc[c], x, y);
    // Keep the compiler from reassociating or shortening the chains.
    asm volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]));
  }
  V total = acc[0];
  for (std::size_t c = 1; c < kFmaChains; ++c) total = fma(total, x, acc[c]);
  T lanes[sizeof(V) / sizeof(T)];
  std::memcpy(lanes, &total, sizeof(V));
  double s = 0;
  for (const T v : lanes) s += static_cast<double>(v);
  return s;
}

struct FmaJob {
  FmaLanes lanes;
  double results[2];
};

void fma_part(void* context, int part) {
  auto& job = *static_cast<FmaJob*>(context);
  job.results[part] = job.lanes == FmaLanes::f32 ? fma_chains<VecF, float>() : fma_chains<VecD, double>();
}

}  // namespace

int64_t run_read_sum(const std::byte* a, const std::byte* b, std::size_t bytes, int threads, PairRunner& runner) {
  if (threads <= 1) return read_sum_range(a, b, bytes);
  ReadSumJob job{a, b, bytes, (bytes / 2) / kLineAlign * kLineAlign, {0, 0}};
  runner.run(read_sum_half, &job);
  return job.sums[0] + job.sums[1];
}

void run_gradient_loop(bool streaming, const std::byte* a, const std::byte* b, const std::byte* g, std::byte* ga,
                       std::byte* gb, std::size_t bytes, int threads, PairRunner& runner) {
  GradientJob job{streaming, a, b, g, ga, gb, bytes, (bytes / 2) / kLineAlign * kLineAlign};
  if (threads <= 1) {
    gradient_part(job, 0, bytes);
    return;
  }
  runner.run(gradient_half, &job);
}

std::size_t fma_lanes(FmaLanes lanes) { return lanes == FmaLanes::f32 ? sizeof(VecF) / 4 : sizeof(VecD) / 8; }

double run_fma_loop(FmaLanes lanes, int threads, PairRunner& runner) {
  FmaJob job{lanes, {0, 0}};
  if (threads <= 1) {
    fma_part(&job, 0);
    return job.results[0];
  }
  runner.run(fma_part, &job);
  return job.results[0] + job.results[1];
}

}  // namespace sqdiff_bench
