// Randomized differential test: the library against the independent scalar
// oracle of tests/oracle.hpp, on random dtypes, ops, broadcast modes, shapes,
// strided / reversed / expanded / gapped views, in-place and overlapping
// outputs. Fixed seeds: case i uses seed kBaseSeed + i, so a failure is
// reproduced with SQDIFF_DIFF_CASE=i (runs just that case and prints it).
//
// Checks per case: every output element bit-exactly against the oracle (any
// NaN accepted where a NaN is expected, see oracle::bits_match), every element
// of the output's buffer outside the output view untouched, and input-only
// buffers untouched.
#include <gtest/gtest.h>

#include <hwy/targets.h>

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif
#if defined(__SANITIZE_ADDRESS__)
#include <dlfcn.h>
#include <sanitizer/common_interface_defs.h>
#endif

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/kernel_table.hpp"
#include "oracle.hpp"
#include "sqdiff/sqdiff.hpp"

namespace {

namespace oracle = sqdiff_test::oracle;
namespace values = sqdiff_test::values;
using sqdiff::BroadcastKind;
using sqdiff::DType;
using Shape = std::vector<int64_t>;
using Rng = std::mt19937_64;

constexpr uint64_t kBaseSeed = 0x5EEDD1FF00000000ull;
constexpr int kChunks = 10;
constexpr int kCasesPerChunk = 2000;  // 20,000 cases in all
constexpr int64_t kMaxElements = 4096;
// A few cases (about 1 in 25) are larger, with one long dim, so that rows
// longer than the library's packing blocks and thread splits are exercised.
constexpr int64_t kMaxLargeElements = 40000;

uint64_t rnd(Rng& rng, uint64_t n) { return values::rnd(rng, n); }
int64_t rnd_range(Rng& rng, int64_t lo, int64_t hi) {  // inclusive
  return lo + static_cast<int64_t>(rnd(rng, static_cast<uint64_t>(hi - lo + 1)));
}
bool chance(Rng& rng, int percent) { return static_cast<int>(rnd(rng, 100)) < percent; }

// One tensor's place: which arena (buffer) it lives in, the element index of
// its origin (index 0,...,0) in that arena, and its strides.
struct Placement {
  int arena = 0;
  int64_t origin = 0;
  Shape shape;
  Shape strides;             // effective strides, always explicit
  bool pass_strides = true;  // false: pass {} (dense) to the library
  int64_t min_off = 0, max_off = 0;  // element offsets reached, relative to origin
};

enum class OutKind { dense, strided, inplace_a, inplace_b, overlap_a, overlap_b };
const char* out_kind_name(OutKind k) {
  switch (k) {
    case OutKind::dense: return "fresh dense";
    case OutKind::strided: return "strided view";
    case OutKind::inplace_a: return "in-place on a";
    case OutKind::inplace_b: return "in-place on b";
    case OutKind::overlap_a: return "overlapping a (shifted)";
    case OutKind::overlap_b: return "overlapping b (shifted)";
  }
  return "?";
}

struct Case {
  int index = 0;
  DType dtype = DType::f32;
  oracle::Op op = oracle::Op::subtract;
  sqdiff::Broadcast mode;
  int threads = 0;
  int64_t target = 0;  // 0 = the library's own choice, else one hwy target bit
  OutKind out_kind = OutKind::dense;
  bool null_empty = false;
  Placement a, b, out;
  std::vector<std::vector<uint64_t>> arenas;  // element bits, one per entry
};

void compute_extent(Placement& p) {
  p.min_off = p.max_off = 0;
  for (std::size_t i = 0; i < p.shape.size(); ++i) {
    if (p.shape[i] == 0) {
      p.min_off = p.max_off = 0;
      return;
    }
    const int64_t reach = (p.shape[i] - 1) * p.strides[i];
    (reach < 0 ? p.min_off : p.max_off) += reach;
  }
}

// Random strides for `shape`. Outputs (and in-place inputs) get layouts with
// no two indices on one element: a (possibly permuted) nesting of the dims
// with gaps, each dim possibly reversed. Inputs may in addition have 0
// strides on any dim (expanded views).
Shape random_strides(Rng& rng, const Shape& shape, bool output_like, bool* pass_strides) {
  const std::size_t r = shape.size();
  *pass_strides = true;
  Shape strides = oracle::dense_strides(shape);
  if (!output_like && chance(rng, 5)) {
    // any strides at all: inputs may overlap themselves
    for (auto& st : strides) st = rnd_range(rng, -6, 6);
    return strides;
  }
  if (chance(rng, 35)) {  // plain dense row-major
    *pass_strides = chance(rng, 50);
    return strides;
  }
  std::vector<std::size_t> perm(r);
  for (std::size_t i = 0; i < r; ++i) perm[i] = i;
  if (chance(rng, 30)) std::shuffle(perm.begin(), perm.end(), rng);
  int64_t stride = chance(rng, 70) ? 1 : rnd_range(rng, 2, 3);
  for (std::size_t k = r; k-- > 0;) {
    const std::size_t d = perm[k];
    strides[d] = stride;
    const int64_t gap = chance(rng, 20) ? rnd_range(rng, 1, 3) : 0;
    stride = stride * std::max<int64_t>(shape[d], 1) + gap;
  }
  for (std::size_t d = 0; d < r; ++d) {
    if (chance(rng, 20)) strides[d] = -strides[d];
    if (!output_like && chance(rng, 12)) strides[d] = 0;
    if (shape[d] == 1 && chance(rng, 25)) strides[d] = rnd_range(rng, -40, 40);  // never used
    if (shape[d] == 1 && chance(rng, 3)) strides[d] = chance(rng, 50) ? (int64_t{1} << 60) : -(int64_t{1} << 60);
  }
  return strides;
}

Shape random_out_shape(Rng& rng) {
  if (chance(rng, 4)) {  // large: rank 1-3, one long dim
    Shape s(static_cast<std::size_t>(rnd_range(rng, 1, 3)));
    for (auto& d : s) d = chance(rng, 30) ? 1 : rnd_range(rng, 2, 9);
    s[rnd(rng, s.size())] = rnd_range(rng, 100, 5000);
    for (;;) {
      int64_t n = 1;
      for (int64_t d : s) n *= d;
      if (n <= kMaxLargeElements) return s;
      for (auto& d : s)
        if (d <= 9) d = 1;
    }
  }
  static const int rank_weights[9] = {5, 14, 20, 20, 15, 10, 7, 5, 4};
  int pick = static_cast<int>(rnd(rng, 100));
  int rank = 0;
  while (pick >= rank_weights[rank]) pick -= rank_weights[rank++];
  Shape s(static_cast<std::size_t>(rank));
  for (auto& d : s) {
    const int p = static_cast<int>(rnd(rng, 100));
    d = p < 30 ? 1 : p < 33 ? 0 : rnd_range(rng, 2, 9);
  }
  // keep the product of the non-zero dims small (inputs can be non-empty even
  // when the output is empty)
  for (;;) {
    int64_t n = 1;
    for (int64_t d : s) n *= std::max<int64_t>(d, 1);
    if (n <= kMaxElements) break;
    auto& d = s[rnd(rng, s.size())];
    if (d > 1) d = chance(rng, 50) ? 1 : d - 1;
  }
  return s;
}

// Shapes of a and b whose broadcast (in the case's mode) is `out`.
void random_input_shapes(Rng& rng, Case& c, const Shape& out) {
  const int64_t R = static_cast<int64_t>(out.size());
  Shape& as = c.a.shape;
  Shape& bs = c.b.shape;
  switch (c.mode.kind) {
    case BroadcastKind::none:
      as = bs = out;
      return;
    case BroadcastKind::numpy: {
      int64_t ra = R, rb = R;
      if (c.out_kind == OutKind::inplace_a) rb = rnd_range(rng, 0, R);
      else if (c.out_kind == OutKind::inplace_b) ra = rnd_range(rng, 0, R);
      else if (chance(rng, 50)) ra = rnd_range(rng, 0, R);
      else rb = rnd_range(rng, 0, R);
      as.assign(static_cast<std::size_t>(ra), 1);
      bs.assign(static_cast<std::size_t>(rb), 1);
      for (int64_t i = 0; i < R; ++i) {  // output dim i
        const int64_t ia = i - (R - ra), ib = i - (R - rb);
        const int64_t d = out[static_cast<std::size_t>(i)];
        bool has_a = ia >= 0, has_b = ib >= 0;
        bool a_full = has_a, b_full = has_b;
        if (has_a && has_b) {
          const int p = static_cast<int>(rnd(rng, 3));
          a_full = p != 2;
          b_full = p != 1;
        }
        if (c.out_kind == OutKind::inplace_a && has_a) a_full = true;
        if (c.out_kind == OutKind::inplace_b && has_b) b_full = true;
        if (has_a) as[static_cast<std::size_t>(ia)] = a_full ? d : 1;
        if (has_b) bs[static_cast<std::size_t>(ib)] = b_full ? d : 1;
      }
      return;
    }
    case BroadcastKind::pdpd: {
      as = out;
      int64_t rb = rnd_range(rng, 0, R);
      int64_t axis = rnd_range(rng, 0, R - rb);
      if (c.out_kind == OutKind::inplace_b) {
        rb = R;
        axis = 0;
      }
      bs.assign(static_cast<std::size_t>(rb), 1);
      for (int64_t j = 0; j < rb; ++j) {
        const bool full = c.out_kind == OutKind::inplace_b || chance(rng, 60);
        bs[static_cast<std::size_t>(j)] = full ? out[static_cast<std::size_t>(axis + j)] : 1;
      }
      c.mode.axis = (axis == R - rb && chance(rng, 50)) ? -1 : axis;
      return;
    }
  }
}

Case make_case(int index) {
  Rng rng(kBaseSeed + static_cast<uint64_t>(index));
  Case c;
  c.index = index;
  c.dtype = oracle::kAllDTypes[rnd(rng, 12)];
  c.op = oracle::kAllOps[rnd(rng, 2)];
  const int m = static_cast<int>(rnd(rng, 100));
  c.mode.kind = m < 20 ? BroadcastKind::none : m < 75 ? BroadcastKind::numpy : BroadcastKind::pdpd;
  c.mode.axis = c.mode.kind == BroadcastKind::pdpd ? -1 : rnd_range(rng, -3, 3);  // ignored unless pdpd
  static const int thread_choices[] = {0, 0, 1, 2, 3};
  c.threads = thread_choices[rnd(rng, 5)];
  const int k = static_cast<int>(rnd(rng, 100));
  c.out_kind = k < 35 ? OutKind::dense
             : k < 60 ? OutKind::strided
             : k < 72 ? OutKind::inplace_a
             : k < 84 ? OutKind::inplace_b
             : k < 92 ? OutKind::overlap_a
                      : OutKind::overlap_b;
  c.null_empty = chance(rng, 50);

  const Shape out = random_out_shape(rng);
  random_input_shapes(rng, c, out);
  c.out.shape = out;

  // Strides. An in-place input must itself be a valid output view.
  bool inplace_a = c.out_kind == OutKind::inplace_a, inplace_b = c.out_kind == OutKind::inplace_b;
  c.a.strides = random_strides(rng, c.a.shape, inplace_a, &c.a.pass_strides);
  c.b.strides = random_strides(rng, c.b.shape, inplace_b, &c.b.pass_strides);
  if (inplace_a) {
    c.out.strides = c.a.strides;
    c.out.pass_strides = c.a.pass_strides;
  } else if (inplace_b) {
    c.out.strides = c.b.strides;
    c.out.pass_strides = c.b.pass_strides;
  } else if (c.out_kind == OutKind::dense) {
    c.out.strides = oracle::dense_strides(out);
    c.out.pass_strides = chance(rng, 50);
  } else {
    c.out.strides = random_strides(rng, out, true, &c.out.pass_strides);
  }
  // Dense strides may be spelled out or left empty: the same view either way.
  if ((inplace_a || inplace_b) && c.out.strides == oracle::dense_strides(out)) c.out.pass_strides = chance(rng, 50);
  // Sometimes a and b are the very same view (and then possibly also out).
  const bool same_ab = c.a.shape == c.b.shape && c.out_kind != OutKind::inplace_b && chance(rng, 5);
  if (same_ab) {
    c.b.strides = c.a.strides;
    c.b.pass_strides = c.a.pass_strides;
  }
  compute_extent(c.a);
  compute_extent(c.b);
  compute_extent(c.out);

  // Arenas: a in 0; b in 1, or (10%) a shifted view in a's arena; out in 2,
  // or in place, or a shifted view overlapping an input.
  c.a.arena = 0;
  c.a.origin = 0;
  if (same_ab) {
    c.b.arena = 0;
    c.b.origin = 0;
  } else if (chance(rng, 10)) {
    c.b.arena = 0;
    c.b.origin = rnd_range(rng, c.a.min_off - c.b.max_off, c.a.max_off - c.b.min_off);
  } else {
    c.b.arena = 1;
    c.b.origin = 0;
  }
  switch (c.out_kind) {
    case OutKind::inplace_a:
      c.out.arena = c.a.arena;
      c.out.origin = c.a.origin;
      break;
    case OutKind::inplace_b:
      c.out.arena = c.b.arena;
      c.out.origin = c.b.origin;
      break;
    case OutKind::overlap_a:
    case OutKind::overlap_b: {
      const Placement& in = c.out_kind == OutKind::overlap_a ? c.a : c.b;
      c.out.arena = in.arena;
      // any origin whose range intersects the input's range
      c.out.origin = in.origin + rnd_range(rng, in.min_off - c.out.max_off, in.max_off - c.out.min_off);
      break;
    }
    default:
      c.out.arena = 2;
      c.out.origin = 0;
  }
  // Normalize origins: each arena starts with a small random pad before the
  // lowest element any view reaches, and ends with a pad after the highest.
  c.arenas.resize(3);
  for (int ar = 0; ar < 3; ++ar) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    Placement* ps[3] = {&c.a, &c.b, &c.out};
    for (Placement* p : ps) {
      if (p->arena != ar) continue;
      lo = std::min(lo, p->origin + p->min_off);
      hi = std::max(hi, p->origin + p->max_off);
    }
    if (lo > hi) continue;  // unused arena
    // no padding at all in 30% of the arenas, so that AddressSanitizer sees
    // any read or write just outside the views
    const bool tight = chance(rng, 30);
    const int64_t front = tight ? 0 : rnd_range(rng, 0, 4), back = tight ? 0 : rnd_range(rng, 0, 4);
    for (Placement* p : ps)
      if (p->arena == ar) p->origin += front - lo;
    c.arenas[static_cast<std::size_t>(ar)].resize(static_cast<std::size_t>(front + (hi - lo + 1) + back));
  }
  // Values: per case, sometimes draw from a small pool so that equal values
  // meet (x - x) and the specials meet each other often.
  std::vector<uint64_t> pool;
  if (chance(rng, 30))
    for (int i = 0; i < 6; ++i) pool.push_back(values::random_value(rng, c.dtype));
  for (auto& arena : c.arenas)
    for (auto& v : arena)
      v = pool.empty() || chance(rng, 20) ? values::random_value(rng, c.dtype) : pool[rnd(rng, pool.size())];

  // Sometimes force one SIMD target (every compiled one the CPU has).
  if (chance(rng, 50)) {
    const int64_t mask = sqdiff::detail::compiled_targets() & hwy::SupportedTargets();
    std::vector<int64_t> bits;
    for (int64_t t = mask; t != 0; t &= t - 1) bits.push_back(t & -t);
    if (!bits.empty()) c.target = bits[rnd(rng, bits.size())];
  }
  return c;
}

std::string describe(const Case& c) {
  std::ostringstream s;
  s << "case " << c.index << " (seed 0x" << std::hex << kBaseSeed + static_cast<uint64_t>(c.index) << std::dec
    << ", rerun with SQDIFF_DIFF_CASE=" << c.index << "): " << oracle::name_of(c.op) << " "
    << oracle::name_of(c.dtype) << ", broadcast " << oracle::name_of(c.mode.kind);
  if (c.mode.kind == BroadcastKind::pdpd) s << " axis " << c.mode.axis;
  s << ", threads " << c.threads << ", target " << (c.target ? hwy::TargetName(c.target) : "default")
    << ", output " << out_kind_name(c.out_kind) << (c.null_empty ? ", null data for empty tensors" : "")
    << "\n";
  const char* names[3] = {"a", "b", "out"};
  const Placement* ps[3] = {&c.a, &c.b, &c.out};
  for (int i = 0; i < 3; ++i) {
    s << "  " << names[i] << ": shape " << oracle::shape_str(ps[i]->shape) << " strides "
      << oracle::shape_str(ps[i]->strides) << (ps[i]->pass_strides ? "" : " (passed as {})") << ", arena "
      << ps[i]->arena << " of " << c.arenas[static_cast<std::size_t>(ps[i]->arena)].size()
      << " elements, origin at element " << ps[i]->origin << "\n";
  }
  return s.str();
}

std::string index_str(const Shape& shape, int64_t flat) {
  Shape idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return oracle::shape_str(idx);
}

struct TargetGuard {
  explicit TargetGuard(int64_t bits) : active(bits != 0) {
    if (active) hwy::SetSupportedTargetsForTest(bits);
  }
  ~TargetGuard() {
    if (active) hwy::SetSupportedTargetsForTest(0);
  }
  TargetGuard(const TargetGuard&) = delete;
  TargetGuard& operator=(const TargetGuard&) = delete;
  bool active;
};

// The caller-visible floating-point controls (x86: MXCSR without the sticky
// exception flags, which arithmetic may legitimately set).
unsigned fp_controls() {
#if defined(__SSE__) || defined(__x86_64__)
  return _mm_getcsr() & ~0x3Fu;
#else
  return 0;
#endif
}

// The arenas as exactly sized heap blocks (ASan sees any access outside them).
struct Arenas {
  std::vector<std::unique_ptr<unsigned char[]>> blocks;
  std::vector<std::size_t> bytes;
  unsigned char* base(int ar) const { return blocks[static_cast<std::size_t>(ar)].get(); }
  std::vector<unsigned char> copy(int ar) const {
    const unsigned char* p = base(ar);
    return std::vector<unsigned char>(p, p + bytes[static_cast<std::size_t>(ar)]);
  }
};

Arenas make_arenas(const Case& c) {
  const std::size_t es = oracle::elem_size(c.dtype);
  Arenas r;
  for (const auto& arena : c.arenas) {
    const std::size_t n = arena.size() * es;
    r.blocks.emplace_back(new unsigned char[std::max<std::size_t>(n, 1)]);
    r.bytes.push_back(n);
    for (std::size_t i = 0; i < arena.size(); ++i) oracle::store_bits(r.blocks.back().get() + i * es, c.dtype, arena[i]);
  }
  return r;
}

// Calls the library on the case's views into `arenas`; "" or what it threw.
std::string call_library(const Case& c, const Arenas& arenas, int threads) {
  const std::size_t es = oracle::elem_size(c.dtype);
  auto ptr = [&](const Placement& p) -> unsigned char* {
    if (c.null_empty && oracle::element_count(p.shape) == 0) return nullptr;
    return arenas.base(p.arena) + p.origin * static_cast<int64_t>(es);
  };
  const DType t = c.dtype;
  const sqdiff::ConstTensorView va{ptr(c.a), t, c.a.shape, c.a.pass_strides ? c.a.strides : Shape{}};
  const sqdiff::ConstTensorView vb{ptr(c.b), t, c.b.shape, c.b.pass_strides ? c.b.strides : Shape{}};
  const sqdiff::TensorView vo{ptr(c.out), t, c.out.shape, c.out.pass_strides ? c.out.strides : Shape{}};
  sqdiff::Options opts;
  opts.broadcast = c.mode;
  opts.threads = threads;
  try {
    TargetGuard guard(c.target);
    if (c.op == oracle::Op::subtract) sqdiff::subtract(va, vb, vo, opts);
    else sqdiff::squared_difference(va, vb, vo, opts);
  } catch (const std::exception& e) {
    return std::string("library threw on a valid call: ") + e.what();
  }
  return {};
}

// Under the sanitizers, a report aborts the process before the test can say
// which case it was running: a death callback prints it.
char g_current_case[4096];
#if defined(__SANITIZE_ADDRESS__)
void print_current_case() { std::fprintf(stderr, "while running differential %s", g_current_case); }
const bool g_death_callback_set = [] {
  __sanitizer_set_death_callback(&print_current_case);
  // GCC links UBSan as its own runtime, with its own callback slot.
  if (void* ubsan = dlopen("libubsan.so.1", RTLD_NOW | RTLD_NOLOAD)) {
    using SetCallback = void (*)(void (*)());
    if (void* f = dlsym(ubsan, "__sanitizer_set_death_callback"))
      reinterpret_cast<SetCallback>(f)(&print_current_case);
  }
  return true;
}();
#endif

// Runs one case; returns an empty string on success, else the failure report.
std::string run_case(int index, bool verbose) {
  const Case c = make_case(index);
  const std::string description = describe(c);
  std::snprintf(g_current_case, sizeof g_current_case, "%s", description.c_str());
  if (verbose) std::cout << description << std::flush;
  const DType t = c.dtype;
  const std::size_t es = oracle::elem_size(t);
  const Arenas arenas = make_arenas(c);
  auto data_of = [&](const Placement& p) -> const unsigned char* {
    return arenas.base(p.arena) + p.origin * static_cast<int64_t>(es);
  };

  // Oracle first: it reads the inputs before the library writes anything,
  // which is exactly the as-if-copied semantics required for overlaps.
  const auto expected = oracle::compute(c.op, {data_of(c.a), t, c.a.shape, c.a.strides},
                                        {data_of(c.b), t, c.b.shape, c.b.strides}, c.mode.kind, c.mode.axis);
  if (!expected || expected->shape != c.out.shape)
    return "test generator bug: shapes do not broadcast to the output\n" + describe(c);

  const unsigned controls = fp_controls();
  const std::string err = call_library(c, arenas, c.threads);
  if (!err.empty()) return err + "\n" + describe(c);
  if (fp_controls() != controls) {
    std::ostringstream s;
    s << "floating-point controls changed: MXCSR 0x" << std::hex << controls << " -> 0x" << fp_controls() << "\n"
      << describe(c);
    return s.str();
  }

  // Output view: element position in its arena -> flat output index.
  const int64_t n_out = oracle::element_count(c.out.shape);
  const std::size_t oar = static_cast<std::size_t>(c.out.arena);
  std::vector<int64_t> pos_to_flat(c.arenas[oar].size(), -1);
  {
    Shape idx(c.out.shape.size(), 0);
    for (int64_t flat = 0; flat < n_out; ++flat) {
      int64_t pos = c.out.origin;
      for (std::size_t d = 0; d < idx.size(); ++d) pos += idx[d] * c.out.strides[d];
      pos_to_flat[static_cast<std::size_t>(pos)] = flat;
      for (std::size_t d = idx.size(); d-- > 0;) {
        if (++idx[d] < c.out.shape[d]) break;
        idx[d] = 0;
      }
    }
  }
  for (std::size_t ar = 0; ar < 3; ++ar) {
    const unsigned char* now = arenas.base(static_cast<int>(ar));
    for (std::size_t i = 0; i < c.arenas[ar].size(); ++i) {
      const uint64_t actual = oracle::load_bits(now + i * es, t);
      const uint64_t old = c.arenas[ar][i];
      if (ar == oar && pos_to_flat[i] >= 0) {
        const int64_t flat = pos_to_flat[i];
        const uint64_t exp = expected->bits[static_cast<std::size_t>(flat)];
        if (!oracle::bits_match(t, exp, actual)) {
          std::ostringstream s;
          s << "wrong output at out" << index_str(c.out.shape, flat) << " (flat " << flat << ", arena element " << i
            << "): expected " << oracle::hex_bits(t, exp) << ", actual " << oracle::hex_bits(t, actual)
            << "\n" << describe(c);
          return s.str();
        }
      } else if (actual != old) {
        std::ostringstream s;
        s << "element outside the output view was changed: arena " << ar << " element " << i << " was "
          << oracle::hex_bits(t, old) << ", now " << oracle::hex_bits(t, actual) << "\n" << describe(c);
        return s.str();
      }
    }
  }

  // Same call with one thread: the results must be bit-identical, NaN
  // payloads included (SPEC section 4), whatever the thread count.
  if (c.threads != 1 && n_out > 0) {
    const Arenas again = make_arenas(c);
    const std::string err1 = call_library(c, again, 1);
    if (!err1.empty()) return err1 + " (threads 1)\n" + describe(c);
    for (std::size_t ar = 0; ar < 3; ++ar)
      if (again.copy(static_cast<int>(ar)) != arenas.copy(static_cast<int>(ar)))
        return "results differ between threads " + std::to_string(c.threads) + " and threads 1 (NaN payloads?)\n" +
               describe(c);
  }
  return {};
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

class Differential : public ::testing::TestWithParam<int> {};

TEST_P(Differential, RandomCasesMatchOracle) {
  const int chunk = GetParam();
  const int per_chunk = env_int("SQDIFF_DIFF_CASES_PER_CHUNK", kCasesPerChunk);
  // SQDIFF_DIFF_TRACE=1 prints every case before running it (to find a case
  // that crashes the process).
  const bool trace = env_int("SQDIFF_DIFF_TRACE", 0) != 0;
  int failures = 0;
  for (int i = chunk * per_chunk; i < (chunk + 1) * per_chunk; ++i) {
    const std::string err = run_case(i, trace);
    if (!err.empty()) {
      ADD_FAILURE() << err;
      if (++failures >= 10) {
        ADD_FAILURE() << "stopping this chunk after 10 failing cases";
        break;
      }
    }
  }
  RecordProperty("cases", per_chunk);
}

INSTANTIATE_TEST_SUITE_P(Chunks, Differential, ::testing::Range(0, kChunks));

// SQDIFF_DIFF_CASE=i runs case i alone, verbosely (for reproducing a failure).
TEST(DifferentialSingle, ReproduceOneCase) {
  const int i = env_int("SQDIFF_DIFF_CASE", -1);
  if (i < 0) {
    // Without the variable: a fixed smoke case, so the test always runs.
    EXPECT_EQ(run_case(0, false), "");
    return;
  }
  const std::string err = run_case(i, true);
  EXPECT_EQ(err, "");
}

// The generator must actually produce the situations this test is about.
TEST(DifferentialCoverage, GeneratorHitsEveryKind) {
  std::map<std::string, int> seen;
  const int total = kChunks * kCasesPerChunk;
  for (int i = 0; i < total; ++i) {
    const Case c = make_case(i);
    seen[std::string("dtype ") + oracle::name_of(c.dtype)]++;
    seen[std::string("mode ") + oracle::name_of(c.mode.kind)]++;
    seen[std::string("out ") + out_kind_name(c.out_kind)]++;
    seen["rank " + std::to_string(c.out.shape.size())]++;
    if (c.mode.kind == BroadcastKind::pdpd && c.mode.axis == -1) seen["pdpd axis -1"]++;
    if (oracle::element_count(c.out.shape) == 0) seen["empty output"]++;
    if (c.a.shape != c.out.shape || c.b.shape != c.out.shape) seen["broadcasting"]++;
    if (c.b.arena == c.a.arena) seen["b overlaps a"]++;
    if (c.b.arena == c.a.arena && c.b.origin == c.a.origin && c.b.strides == c.a.strides) seen["a and b one view"]++;
    if (oracle::element_count(c.out.shape) > kMaxElements) seen["large output"]++;
    if (c.target) seen["forced target"]++;
    bool zero = false, neg = false;
    for (const Placement* p : {&c.a, &c.b})
      for (std::size_t d = 0; d < p->shape.size(); ++d) {
        if (p->shape[d] > 1 && p->strides[d] == 0) zero = true;
        if (p->shape[d] > 1 && p->strides[d] < 0) neg = true;
      }
    if (zero) seen["expanded input (stride 0)"]++;
    if (neg) seen["reversed input"]++;
    for (std::size_t d = 0; d < c.out.shape.size(); ++d)
      if (c.out.shape[d] > 1 && c.out.strides[d] < 0) {
        seen["reversed output"]++;
        break;
      }
  }
  std::ostringstream s;
  for (const auto& [k, v] : seen) s << k << ": " << v << "\n";
  std::cout << "differential cases: " << total << "\n" << s.str();
  for (DType t : oracle::kAllDTypes) EXPECT_GT(seen[std::string("dtype ") + oracle::name_of(t)], 100);
  for (const char* k : {"mode none", "mode numpy", "mode pdpd", "pdpd axis -1", "empty output", "broadcasting",
                        "b overlaps a", "forced target", "expanded input (stride 0)", "reversed input",
                        "reversed output", "rank 0", "rank 8", "a and b one view", "large output"})
    EXPECT_GT(seen[k], 20) << k;
  for (int k = 0; k < 6; ++k) EXPECT_GT(seen[std::string("out ") + out_kind_name(static_cast<OutKind>(k))], 200);
}

// The oracle itself, on the SPEC's own examples (so that a wrong oracle
// cannot agree with a wrong library).
TEST(Oracle, BroadcastMatchesSpecTables) {
  using K = BroadcastKind;
  struct Row {
    Shape a, b;
    K kind;
    int64_t axis;
    bool ok;
    Shape out;
  };
  const Row rows[] = {
      {{}, {}, K::numpy, -1, true, {}},
      {{2, 3}, {1}, K::numpy, -1, true, {2, 3}},
      {{3}, {2, 3}, K::numpy, -1, true, {2, 3}},
      {{2, 3, 5}, {}, K::numpy, -1, true, {2, 3, 5}},
      {{2, 1, 5}, {1, 4, 5}, K::numpy, -1, true, {2, 4, 5}},
      {{6, 5}, {2, 1, 5}, K::numpy, -1, true, {2, 6, 5}},
      {{2, 1, 5}, {4, 1}, K::numpy, -1, true, {2, 4, 5}},
      {{3, 2, 1, 4}, {5, 4}, K::numpy, -1, true, {3, 2, 5, 4}},
      {{1, 5, 3}, {5, 2, 1, 3}, K::numpy, -1, true, {5, 2, 5, 3}},
      {{8, 1, 6, 1}, {7, 1, 5}, K::numpy, -1, true, {8, 7, 6, 5}},
      {{1, 0, 3}, {3}, K::numpy, -1, true, {1, 0, 3}},
      {{3}, {2}, K::numpy, -1, false, {}},
      {{3, 1, 5}, {4, 4, 5}, K::numpy, -1, false, {}},
      {{2, 3}, {3, 2}, K::numpy, -1, false, {}},
      {{0}, {5}, K::numpy, -1, false, {}},
      {{2, 4}, {1, 2, 4}, K::none, -1, false, {}},
      {{3, 4}, {3, 1}, K::none, -1, false, {}},
      {{3, 4}, {3, 4}, K::none, 7, true, {3, 4}},
      {{2, 3, 4, 5}, {3, 4}, K::pdpd, 1, true, {2, 3, 4, 5}},
      {{2, 3, 4, 5}, {3, 1}, K::pdpd, 1, true, {2, 3, 4, 5}},
      {{2, 3, 4, 5}, {4, 5}, K::pdpd, -1, true, {2, 3, 4, 5}},
      {{2, 3, 4, 5}, {4, 5}, K::pdpd, 2, true, {2, 3, 4, 5}},
      {{2, 3, 4, 5}, {1, 3}, K::pdpd, 0, true, {2, 3, 4, 5}},
      {{2, 3, 4, 5}, {}, K::pdpd, -1, true, {2, 3, 4, 5}},
      {{2, 3, 4, 5}, {5}, K::pdpd, 3, true, {2, 3, 4, 5}},
      {{2, 3, 4, 5}, {3, 1, 5}, K::pdpd, 1, true, {2, 3, 4, 5}},
      {{8, 7, 6, 5}, {7, 1, 5}, K::pdpd, -1, true, {8, 7, 6, 5}},
      {{2, 3, 4, 5}, {3, 1}, K::pdpd, -1, false, {}},
      {{2, 3, 4, 5}, {3, 1}, K::pdpd, -2, false, {}},
      {{2, 3, 4, 1}, {2, 3, 4, 5}, K::pdpd, -1, false, {}},
      {{8, 1, 6, 1}, {7, 1, 5}, K::pdpd, 1, false, {}},
  };
  for (const Row& r : rows) {
    const auto got = oracle::broadcast(r.a, r.b, r.kind, r.axis);
    SCOPED_TRACE(oracle::shape_str(r.a) + " " + oracle::shape_str(r.b) + " " + oracle::name_of(r.kind));
    ASSERT_EQ(got.has_value(), r.ok);
    if (r.ok) {
      EXPECT_EQ(*got, r.out);
    }
  }
}

TEST(Oracle, ArithmeticMatchesSpecExamples) {
  using oracle::compute_bits;
  using oracle::Op;
  EXPECT_EQ(compute_bits(DType::u8, Op::subtract, 0, 1), 255u);
  EXPECT_EQ(compute_bits(DType::u8, Op::squared_difference, 0, 255), 1u);
  EXPECT_EQ(compute_bits(DType::u8, Op::squared_difference, 0, 16), 0u);
  EXPECT_EQ(compute_bits(DType::i8, Op::squared_difference, 0x80, 0x7F), 1u);
  EXPECT_EQ(compute_bits(DType::i32, Op::subtract, 0x80000000u, 1), 0x7FFFFFFFu);
  EXPECT_EQ(compute_bits(DType::u16, Op::squared_difference, 0, 0xFFFF), 1u);
  EXPECT_EQ(compute_bits(DType::i64, Op::squared_difference, 0, 0x100000000ull), 0u);
  // f16: (256 - 0)^2 = 65536 -> +inf; 65504 is the largest finite; 65519
  // rounds down, 65520 up to inf
  EXPECT_EQ(compute_bits(DType::f16, Op::squared_difference, 0x5C00, 0), 0x7C00u);
  EXPECT_EQ(oracle::float_to_f16(65504.0f), 0x7BFFu);
  EXPECT_EQ(oracle::float_to_f16(65519.0f), 0x7BFFu);
  EXPECT_EQ(oracle::float_to_f16(65520.0f), 0x7C00u);
  EXPECT_EQ(oracle::float_to_f16(-65520.0f), 0xFC00u);
  // smallest subnormal 2^-24; half of it ties to even (0), a bit more rounds up
  EXPECT_EQ(oracle::float_to_f16(std::ldexp(1.0f, -24)), 0x0001u);
  EXPECT_EQ(oracle::float_to_f16(std::ldexp(1.0f, -25)), 0x0000u);
  EXPECT_EQ(oracle::float_to_f16(std::ldexp(1.5f, -25)), 0x0001u);
  EXPECT_EQ(oracle::float_to_f16(std::ldexp(3.0f, -25)), 0x0002u);  // 1.5 units: tie to even 2
  EXPECT_EQ(oracle::float_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3C00u);  // tie to even
  EXPECT_EQ(oracle::float_to_f16(1.0f + std::ldexp(3.0f, -11)), 0x3C02u);  // tie to even (up)
  EXPECT_EQ(oracle::f16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(oracle::f16_to_float(0xFBFF), -65504.0f);
  // bf16
  EXPECT_EQ(oracle::float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80u);  // tie to even
  EXPECT_EQ(oracle::float_to_bf16(1.0f + std::ldexp(3.0f, -8)), 0x3F82u);
  EXPECT_EQ(oracle::float_to_bf16(std::numeric_limits<float>::max()), 0x7F80u);
  EXPECT_EQ(oracle::float_to_bf16(std::numeric_limits<float>::denorm_min()), 0x0000u);
  EXPECT_EQ(oracle::bf16_to_float(0x0001), std::ldexp(1.0f, -133));
  // (-0)^2 = +0; x - x = +0; inf - inf = NaN; (-inf)^2 = +inf
  EXPECT_EQ(compute_bits(DType::f32, Op::squared_difference, 0x80000000u, 0), 0u);
  EXPECT_EQ(compute_bits(DType::f32, Op::subtract, 0x3F800000u, 0x3F800000u), 0u);
  EXPECT_TRUE(oracle::is_nan_bits(DType::f32, compute_bits(DType::f32, Op::subtract, 0x7F800000u, 0x7F800000u)));
  EXPECT_EQ(compute_bits(DType::f32, Op::squared_difference, 0xFF800000u, 0), 0x7F800000u);
  EXPECT_TRUE(oracle::is_nan_bits(DType::f16, compute_bits(DType::f16, Op::subtract, 0x7C00, 0x7C00)));
  EXPECT_TRUE(oracle::is_nan_bits(DType::bf16, compute_bits(DType::bf16, Op::squared_difference, 0x7F81, 0)));
  // subnormals are kept: 2^-75 squared in f32 is 2^-150 -> ties to even 0;
  // 2^-74 squared is 2^-148, a subnormal
  EXPECT_EQ(compute_bits(DType::f32, Op::squared_difference, 0x1A000000u, 0), 0x00000000u);
  EXPECT_EQ(compute_bits(DType::f32, Op::squared_difference, 0x1A800000u, 0), 0x00000002u);
  EXPECT_EQ(compute_bits(DType::f64, Op::squared_difference, 0x1FF0000000000000ull, 0), 0x0004000000000000ull);  // 2^-1024, subnormal
}

// sqdiff::broadcast_shape against the oracle's rule on random shape pairs,
// valid and invalid (error <=> oracle says no).
TEST(DifferentialShapes, BroadcastShapeMatchesOracle) {
  Rng rng(kBaseSeed ^ 0xB0ADCA57u);
  int valid = 0;
  for (int i = 0; i < 20000; ++i) {
    Shape a(rnd(rng, 6)), b(rnd(rng, 6));
    for (auto& d : a) d = chance(rng, 40) ? 1 : rnd_range(rng, 0, 4);
    for (auto& d : b) d = chance(rng, 40) ? 1 : rnd_range(rng, 0, 4);
    if (chance(rng, 30)) b = a;
    if (chance(rng, 30) && !a.empty()) {  // b a window of a, some dims 1
      const std::size_t start = rnd(rng, a.size());
      b.assign(a.begin() + static_cast<std::ptrdiff_t>(start), a.begin() + static_cast<std::ptrdiff_t>(start + rnd(rng, a.size() - start + 1)));
      for (auto& d : b)
        if (chance(rng, 30)) d = 1;
    }
    const BroadcastKind kind = static_cast<BroadcastKind>(rnd(rng, 3));
    const int64_t axis = rnd_range(rng, -2, 6);
    const auto want = oracle::broadcast(a, b, kind, axis);
    SCOPED_TRACE(oracle::shape_str(a) + " " + oracle::shape_str(b) + " " + oracle::name_of(kind) + " axis " +
                 std::to_string(axis));
    try {
      const Shape got = sqdiff::broadcast_shape(a, b, sqdiff::Broadcast{kind, axis});
      ASSERT_TRUE(want.has_value()) << "accepted, expected an error; got " << oracle::shape_str(got);
      ASSERT_EQ(got, *want);
      ++valid;
    } catch (const sqdiff::Error& e) {
      ASSERT_FALSE(want.has_value()) << "threw " << e.what() << ", expected " << oracle::shape_str(*want);
    }
  }
  EXPECT_GT(valid, 5000);
}

}  // namespace
