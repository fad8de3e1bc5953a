#include "reduce/fast_squares.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <optional>
#include <vector>

#include "kernels/kernel_table.hpp"
#include "kernels/reduce_table.hpp"
#include "reduce/bounded_sum.hpp"
#include "reduce/element_access.hpp"
#include "reduce/exact_reduce.hpp"
#include "reduce/rounding.hpp"
#include "reduce/square_bounds.hpp"
#include "runtime/cache_info.hpp"
#include "runtime/fp_environment.hpp"
#include "runtime/thread_pool.hpp"
#include "runtime/thread_scratch.hpp"

namespace sqdiff::detail {
namespace {

std::atomic<bool> g_fast_enabled{true};
// Outputs of the fast paths, and those of them that went down the exact path.
// Counted per call and per fallback, not per rounded output: a shared counter
// bumped by every output of a pairwise sum cost more than its rounding.
std::atomic<int64_t> g_outputs{0};
std::atomic<int64_t> g_exact{0};
std::atomic<int64_t> g_redone{0};

// Strided rows and columns are packed this many elements at a time.
constexpr std::size_t kPackElements = 2048;
// Columns are summed at least this many at a time (column_tile).
constexpr int64_t kMinColumnTile = 1024;
// A piece of one output's terms, when few outputs share the threads.
constexpr int64_t kMinPieceTerms = int64_t{1} << 15;

using Offsets = std::array<int64_t, kMaxOperands>;

// Everything a task needs: the call, its plan split into the parts each mode
// walks, the kernels.
struct Reduction {
  const ReduceCall& call;
  const ReducePlan& plan;
  uint64_t* results;
  BoundedSum* bounded;  // not null: each output's sum and bound, not its rounding
  const SquareKernels& kernels;
  GatherKernel gather;
  std::size_t element_size;
  bool double_precision;  // f64 outputs need the double-double kernels
  std::vector<ReduceDim> kept;
  std::vector<ReduceDim> summed;
  std::vector<ReduceDim> outer_summed;  // rows mode: the reduced dims above the innermost

  Reduction(const ReduceCall& c, const ReducePlan& p, uint64_t* r, BoundedSum* b)
      : call(c),
        plan(p),
        results(r),
        bounded(b),
        kernels(reduce_kernel_table().for_input(c.input)),
        gather(kernel_table().gather.for_size(dtype_size(c.input))),
        element_size(dtype_size(c.input)),
        double_precision(c.output == DType::f64),
        kept(p.kept()),
        summed(p.summed()),
        outer_summed(summed.empty() ? summed : std::vector<ReduceDim>(summed.begin(), summed.end() - 1)) {}

  const std::byte* at(int operand, int64_t offset) const {
    return call.data[static_cast<std::size_t>(operand)] + offset * static_cast<int64_t>(element_size);
  }

  // Rounds one output's sum (or sends it down the exact path) and writes it.
  void finish(int64_t ordinal, const Offsets& base, int64_t out_offset, const SquareSums& sums, int64_t chain) const {
    if (bounded != nullptr) {
      bounded[ordinal] = bounded_of(sums, double_precision, chain);
      return;
    }
    const uint64_t bits = round_sums(base, sums, chain);
    if (results != nullptr) {
      results[ordinal] = bits;
    } else {
      store_bits(call.out + out_offset * static_cast<int64_t>(dtype_size(call.output)), call.output, bits);
    }
  }

  uint64_t round_sums(const Offsets& base, const SquareSums& sums, int64_t chain) const {
    const BoundedSum sum = bounded_of(sums, double_precision, chain);
    if (const std::optional<uint64_t> bits =
            round_bounded(sum, call.mean, static_cast<uint64_t>(call.count), call.output)) {
      return *bits;
    }
    g_exact.fetch_add(1, std::memory_order_relaxed);
    const ExactSum exact = exact_output_sum(call, summed, base);
    return *round_exact(exact, call.mean, static_cast<uint64_t>(call.count), call.output);
  }
};

// ---- Rows: the innermost dim is reduced ------------------------------------

// Sums the terms of `n` elements of the innermost dim starting at the
// operands' offsets, packing strided operands first.
void add_row(const Reduction& r, const Offsets& start, int64_t n, SquareSums& sums) {
  const ReduceDim& inner = r.plan.dims.back();
  const int64_t sa = inner.stride[0];
  const int64_t sb = inner.stride[1];
  const auto kernels = r.double_precision ? r.kernels.row_double : r.kernels.row;
  const std::byte* a = r.at(0, start[0]);
  const std::byte* b = r.at(1, start[1]);
  if ((sa == 1 || sa == 0) && (sb == 1 || sb == 0) && !(sa == 0 && sb == 0)) {
    const int kind = sa == 0 ? static_cast<int>(Operands::sv) : sb == 0 ? static_cast<int>(Operands::vs) : 0;
    kernels[kind](a, b, static_cast<std::size_t>(n), &sums);
    return;
  }
  // Packed a chunk at a time (a stride-0 operand stays one element).
  alignas(64) std::byte packed_a[kPackElements * 8];
  alignas(64) std::byte packed_b[kPackElements * 8];
  const int kind = sa == 0 ? static_cast<int>(Operands::sv) : sb == 0 ? static_cast<int>(Operands::vs) : 0;
  for (int64_t done = 0; done < n;) {
    const auto count = static_cast<std::size_t>(std::min<int64_t>(n - done, kPackElements));
    const std::byte* pa = a;
    const std::byte* pb = b;
    if (sa != 0) {
      r.gather(a + done * sa * static_cast<int64_t>(r.element_size), sa, packed_a, count);
      pa = packed_a;
    }
    if (sb != 0) {
      r.gather(b + done * sb * static_cast<int64_t>(r.element_size), sb, packed_b, count);
      pb = packed_b;
    }
    if (sa == 0 && sb == 0) {
      // Both operands one element for the whole row: pack a as a row.
      r.gather(a, 0, packed_a, count);
      kernels[static_cast<int>(Operands::vs)](packed_a, pb, count, &sums);
    } else {
      kernels[kind](pa, pb, count, &sums);
    }
    done += static_cast<int64_t>(count);
  }
}

// The terms of one output in the flat range [first, last) of its (outer
// reduced rows x innermost elements); `rows` walks r.outer_summed (made once
// per task: a walker allocates).
void add_output_range(const Reduction& r, const Offsets& base, int64_t first, int64_t last, DimWalker& rows,
                      SquareSums& sums) {
  const ReduceDim& inner = r.plan.dims.back();
  const int64_t n = inner.size;
  if (r.outer_summed.empty()) {  // one row per output
    const Offsets start = {base[0] + first * inner.stride[0], base[1] + first * inner.stride[1], 0};
    add_row(r, start, last - first, sums);
    return;
  }
  rows.seek(first / n);
  int64_t position = first;
  while (position < last) {
    const int64_t within = position % n;
    const int64_t take = std::min(n - within, last - position);
    const Offsets start = {base[0] + rows.offset(0) + within * inner.stride[0],
                           base[1] + rows.offset(1) + within * inner.stride[1], 0};
    add_row(r, start, take, sums);
    position += take;
    if (within + take == n) rows.next();
  }
}

struct RowTask {
  const Reduction* r;
  int64_t terms;  // per output
};

void row_outputs(void* context, std::size_t begin, std::size_t count) {
  const RowTask& task = *static_cast<const RowTask*>(context);
  const Reduction& r = *task.r;
  const ScopedIeeeDefaults ieee(r.call.input);
  DimWalker outputs(r.kept);
  DimWalker rows(r.outer_summed);
  outputs.seek(static_cast<int64_t>(begin));
  for (std::size_t k = 0; k < count; ++k) {
    const Offsets base = {outputs.offset(0), outputs.offset(1), 0};
    SquareSums sums;
    add_output_range(r, base, 0, task.terms, rows, sums);
    r.finish(static_cast<int64_t>(begin + k), base, outputs.out_offset(), sums, kChain);
    outputs.next();
  }
}

// Few outputs: each one's terms split into pieces across the threads.
struct PieceTask {
  const Reduction* r;
  Offsets base;
  int64_t piece;
  int64_t terms;
  std::vector<SquareSums>* partial;
};

void output_pieces(void* context, std::size_t begin, std::size_t count) {
  const PieceTask& task = *static_cast<const PieceTask*>(context);
  const ScopedIeeeDefaults ieee(task.r->call.input);
  DimWalker rows(task.r->outer_summed);
  for (std::size_t p = begin; p < begin + count; ++p) {
    const int64_t first = static_cast<int64_t>(p) * task.piece;
    add_output_range(*task.r, task.base, first, std::min(task.terms, first + task.piece), rows, (*task.partial)[p]);
  }
}

void run_rows(const Reduction& r, int threads) {
  const int64_t terms = r.call.count;
  const int64_t outputs = r.call.outputs;
  if (threads <= 1 || outputs >= 2 * threads) {
    RowTask task{&r, terms};
    const auto tile = static_cast<std::size_t>(std::max<int64_t>(1, outputs / (threads * 8)));
    parallel_for(threads, static_cast<std::size_t>(outputs), tile, &row_outputs, &task);
    return;
  }
  DimWalker walk(r.kept);
  for (int64_t o = 0; o < outputs; ++o) {
    const Offsets base = {walk.offset(0), walk.offset(1), 0};
    const int64_t piece = std::max(kMinPieceTerms, (terms + 4 * threads - 1) / (4 * threads));
    std::vector<SquareSums> partial(static_cast<std::size_t>((terms + piece - 1) / piece));
    PieceTask task{&r, base, piece, terms, &partial};
    parallel_for(threads, partial.size(), 1, &output_pieces, &task);
    SquareSums sums;
    for (const SquareSums& p : partial) add_sums(sums, p);
    const ScopedIeeeDefaults ieee(r.call.input);
    r.finish(o, base, walk.out_offset(), sums, kChain);
    walk.next();
  }
}

// ---- Columns: the innermost dim is kept ------------------------------------

// The running sums of a tile of columns.
struct ColumnSums {
  std::vector<double> acc, hi, lo;
  int64_t rows = 0;       // rows added
  int64_t additions = 0;  // folds of acc into (hi, lo) (single precision)
  bool needs_exact = false;

  explicit ColumnSums(std::size_t n) : acc(n, 0.0), hi(n, 0.0), lo(n, 0.0) {}

  void fold() {
    for (std::size_t c = 0; c < acc.size(); ++c) {
      const double s = hi[c] + acc[c];
      const double bv = s - hi[c];
      lo[c] += (hi[c] - (s - bv)) + (acc[c] - bv);
      hi[c] = s;
      acc[c] = 0;
    }
    ++additions;
  }

  void add(const ColumnSums& other) {
    for (std::size_t c = 0; c < hi.size(); ++c) {
      const double s = hi[c] + other.hi[c];
      const double bv = s - hi[c];
      lo[c] += other.lo[c] + ((hi[c] - (s - bv)) + (other.hi[c] - bv));
      hi[c] = s;
    }
    rows += other.rows;
    additions += other.additions + 1;
    needs_exact = needs_exact || other.needs_exact;
  }
};

// Adds reduced rows [first, last) of the tile's columns [c0, c0 + n) of the
// outer kept position at `base`.
void add_columns(const Reduction& r, const Offsets& base, int64_t c0, std::size_t n, int64_t first, int64_t last,
                 ColumnSums& sums) {
  const ReduceDim& inner = r.plan.dims.back();
  const int64_t ca = inner.stride[0];
  const int64_t cb = inner.stride[1];
  const bool direct = (ca == 0 || ca == 1) && (cb == 0 || cb == 1) && !(ca == 0 && cb == 0);
  const int kind = ca == 0 ? static_cast<int>(Operands::sv) : cb == 0 ? static_cast<int>(Operands::vs) : 0;
  std::vector<std::byte> packed_a(direct ? 0 : n * r.element_size);
  std::vector<std::byte> packed_b(direct ? 0 : n * r.element_size);
  DimWalker rows(r.summed);
  rows.seek(first);
  for (int64_t row = first; row < last; ++row) {
    const std::byte* a = r.at(0, base[0] + rows.offset(0) + c0 * ca);
    const std::byte* b = r.at(1, base[1] + rows.offset(1) + c0 * cb);
    int use = kind;
    if (!direct) {
      r.gather(a, ca, packed_a.data(), n);
      r.gather(b, cb, packed_b.data(), n);
      a = packed_a.data();
      b = packed_b.data();
      use = 0;
    }
    if (r.double_precision) {
      r.kernels.column_double[use](a, b, n, sums.hi.data(), sums.lo.data(), &sums.needs_exact);
    } else {
      if ((row - first + 1) % kChain == 0) {
        r.kernels.column_fold[use](a, b, n, sums.acc.data(), sums.hi.data(), sums.lo.data(), &sums.needs_exact);
        ++sums.additions;
      } else {
        r.kernels.column[use](a, b, n, sums.acc.data(), &sums.needs_exact);
      }
    }
    ++sums.rows;
    rows.next();
  }
  if (!r.double_precision) sums.fold();
}

struct ColumnTask {
  const Reduction* r;
  std::vector<ReduceDim> outer_kept;
  int64_t columns;
  int64_t tile;   // columns summed at a time
  int64_t tiles;  // per outer kept position
};

// How many columns are summed at a time: whole rows when their running sums
// (three doubles a column) fit in half of L2. Each operand is then read front
// to back, which the hardware prefetchers follow from page to page; a tile of
// 1024 f32 columns reads one 4 KiB page of each row and jumps to the next row,
// and the prefetchers stop at every page (4096x4096 f32, sqdiff_bench, three
// alternating runs: 0.37-0.39 of the read bound on 1 thread with 1024-column
// tiles, 0.58-0.60 with whole rows; 0.58-0.62 and 0.66-0.71 on 2 threads).
// Every column adds its rows in the same order whatever the tile, and each
// output is rounded correctly from its sums: the results do not change.
int64_t column_tile(int64_t columns) {
  const auto fitting = static_cast<int64_t>(level2_cache_bytes() / 2 / (3 * sizeof(double)));
  return std::max(kMinColumnTile, std::min(columns, fitting));
}

void finish_columns(const Reduction& r, const Offsets& base, int64_t out_base, int64_t ordinal_base, int64_t c0,
                    const ColumnSums& sums) {
  const ReduceDim& inner = r.plan.dims.back();
  for (std::size_t c = 0; c < sums.hi.size(); ++c) {
    const auto column = c0 + static_cast<int64_t>(c);
    const SquareSums one{sums.hi[c], sums.lo[c], sums.additions, sums.needs_exact};
    const Offsets at = {base[0] + column * inner.stride[0], base[1] + column * inner.stride[1], 0};
    r.finish(ordinal_base + column, at, out_base + column * inner.out_stride, one, sums.rows);
  }
}

void column_tiles(void* context, std::size_t begin, std::size_t count) {
  const ColumnTask& task = *static_cast<const ColumnTask*>(context);
  const Reduction& r = *task.r;
  const ScopedIeeeDefaults ieee(r.call.input);
  DimWalker outer(task.outer_kept);
  for (std::size_t t = begin; t < begin + count; ++t) {
    const auto position = static_cast<int64_t>(t) / task.tiles;
    const int64_t c0 = static_cast<int64_t>(t) % task.tiles * task.tile;
    const auto n = static_cast<std::size_t>(std::min<int64_t>(task.tile, task.columns - c0));
    outer.seek(position);
    const Offsets base = {outer.offset(0), outer.offset(1), 0};
    ColumnSums sums(n);
    add_columns(r, base, c0, n, 0, r.call.count, sums);
    finish_columns(r, base, outer.out_offset(), position * task.columns, c0, sums);
  }
}

struct ColumnPieceTask {
  const Reduction* r;
  Offsets base;
  int64_t c0;
  std::size_t n;
  int64_t piece;
  std::vector<ColumnSums>* partial;
};

void column_pieces(void* context, std::size_t begin, std::size_t count) {
  const ColumnPieceTask& task = *static_cast<const ColumnPieceTask*>(context);
  const ScopedIeeeDefaults ieee(task.r->call.input);
  for (std::size_t p = begin; p < begin + count; ++p) {
    const int64_t first = static_cast<int64_t>(p) * task.piece;
    add_columns(*task.r, task.base, task.c0, task.n, first, std::min(task.r->call.count, first + task.piece),
                (*task.partial)[p]);
  }
}

void run_columns(const Reduction& r, int threads) {
  ColumnTask task{&r, std::vector<ReduceDim>(r.kept.begin(), r.kept.end() - 1), r.kept.back().size, 0, 0};
  task.tile = column_tile(task.columns);
  task.tiles = (task.columns + task.tile - 1) / task.tile;
  int64_t positions = 1;
  for (const ReduceDim& d : task.outer_kept) positions *= d.size;
  const int64_t work = positions * task.tiles;
  if (threads <= 1 || work >= 2 * threads) {
    parallel_for(threads, static_cast<std::size_t>(work), 1, &column_tiles, &task);
    return;
  }
  // Few tiles: each tile's reduced rows split across the threads.
  DimWalker outer(task.outer_kept);
  for (int64_t position = 0; position < positions; ++position) {
    const Offsets base = {outer.offset(0), outer.offset(1), 0};
    for (int64_t c0 = 0; c0 < task.columns; c0 += task.tile) {
      const auto n = static_cast<std::size_t>(std::min<int64_t>(task.tile, task.columns - c0));
      const int64_t piece = std::max<int64_t>(kChain, (r.call.count + 4 * threads - 1) / (4 * threads));
      std::vector<ColumnSums> partial(static_cast<std::size_t>((r.call.count + piece - 1) / piece), ColumnSums(n));
      ColumnPieceTask pieces{&r, base, c0, n, piece, &partial};
      parallel_for(threads, partial.size(), 1, &column_pieces, &pieces);
      ColumnSums sums(n);
      for (const ColumnSums& p : partial) sums.add(p);
      const ScopedIeeeDefaults ieee(r.call.input);
      finish_columns(r, base, outer.out_offset(), position * task.columns, c0, sums);
    }
    outer.next();
  }
}

// ---- Pairwise: [M,1,K] with [1,N,K] over K ----------------------------------

// The plan [M, N, K] with K reduced and contiguous for both operands, one
// operand constant along N and the other along M: which operand is x (the one
// that moves with M), and which kernel sums it.
enum class PairwiseKind : uint8_t {
  blocked,       // single precision, K above kChain (up to kChain vectors of f64 lanes): K across the lanes
  lanes,         // single precision, K up to kChain: one output per lane
  lanes_double,  // f64 outputs (double-double sums), any K up to kMaxLanesDoubleTerms: one output per lane
};

struct PairwiseShape {
  int x = 0;  // operand index of x; y is 1 - x
  PairwiseKind kind = PairwiseKind::blocked;
};

// Most terms per output of the double-double lanes: the bound's chain term
// 4 (K + 3)^2 2^-106 stays near 2^-70 of the sum, far below an f64 rounding
// interval, so that the exact path stays rare.
constexpr int64_t kMaxLanesDoubleTerms = int64_t{1} << 16;
// The most outputs per row of x (N, rounded up to whole panels) and packed
// doubles of y (N x K) the lanes kernels take: 8 MiB of sums per task of
// f64 outputs, 128 MiB of panels.
constexpr int64_t kMaxLanesOutputs = int64_t{1} << 16;
constexpr int64_t kMaxPanelDoubles = int64_t{1} << 24;

std::optional<PairwiseShape> pairwise_shape(const Reduction& r) {
  const auto& dims = r.plan.dims;
  if (dims.size() != 3 || dims[0].reduced || dims[1].reduced || !dims[2].reduced) return {};
  if (dims[2].stride[0] != 1 || dims[2].stride[1] != 1) return {};
  const int64_t k = dims[2].size;
  const auto lanes = static_cast<int64_t>(r.kernels.lanes);
  // The lanes kernels copy y as doubles and hold a task's rows of sums
  // (kPairwiseRows x N, two doubles each for f64): bounded, as the tasks
  // are not split along N.
  const int64_t panel_width = static_cast<int64_t>(kPanelVectors) * lanes;
  const int64_t n_stride = (dims[1].size + panel_width - 1) / panel_width * panel_width;
  const bool lanes_fit = n_stride <= kMaxLanesOutputs && n_stride * k <= kMaxPanelDoubles;
  PairwiseKind kind;
  if (k < 1) return {};
  if (r.double_precision) {
    if (k > kMaxLanesDoubleTerms || !lanes_fit) return {};
    kind = PairwiseKind::lanes_double;
  } else if (k <= kChain && lanes_fit) {
    // One FMA chain of K terms per lane, within the blocked kernel's bound.
    // Faster than the blocked kernel wherever it applies (no horizontal sums,
    // no tails): f32 1024 x 1024 on 1 thread, K = 16: 0.90 ms against 1.99;
    // K = 64: 2.06 ms against 3.54 (sqdiff_bench, same session).
    kind = PairwiseKind::lanes;
  } else if (k >= lanes && k <= kChain * lanes) {
    kind = PairwiseKind::blocked;
  } else {
    return {};
  }
  for (int x = 0; x < 2; ++x) {
    const int y = 1 - x;
    if (dims[0].stride[static_cast<std::size_t>(y)] == 0 && dims[1].stride[static_cast<std::size_t>(x)] == 0 &&
        dims[0].stride[static_cast<std::size_t>(x)] != 0 && dims[1].stride[static_cast<std::size_t>(y)] != 0) {
      return PairwiseShape{x, kind};
    }
  }
  return {};
}

// Whether every f64 element of `rows` rows of k (row_stride apart) is zero or
// within [2^-428, 2^498) in magnitude: then every difference of two of them is
// zero or within [2^-480, 2^499), the range where the double-double terms are
// exact to 2^-102 (what SquareRowDouble's OutOfRange checks term by term;
// the lanes kernels check their inputs once instead). Not finite: false.
bool within_double_term_range(const double* p, int64_t row_stride, int64_t rows, int64_t k) {
  for (int64_t row = 0; row < rows; ++row) {
    const double* v = p + row * row_stride;
    bool ok = true;
    for (int64_t i = 0; i < k; ++i) {
      const double a = std::fabs(v[i]);
      ok &= a == 0 || (a >= 0x1p-428 && a < 0x1p498);
    }
    if (!ok) return false;
  }
  return true;
}

// Rows of x per task. Their sums are written and read back for rounding, a
// row of N at a time: 8 rows of 1024 sums (64 KiB) came back faster than 16
// (f32 [1024,1,3] x [1,1024,3], sqdiff_bench, two alternating runs: 1 thread
// 224-230 us against 300-303 us, 2 threads 124-138 against 170-176 us; K = 16
// and 64 and f64 the same within noise).
constexpr std::size_t kPairwiseRows = 8;

struct PairwiseTask {
  const Reduction* r;
  PairwiseShape shape;
  // The lanes kernels' y, packed transposed (reduce_table.hpp's panels).
  const double* panels = nullptr;
  std::size_t panel_count = 0;
};

// Writes the rounded outputs of x's row `mm`: `round_row(out)` rounds the
// row's sums into `out` (dense, element size `size`) and returns how many it
// left undecided (their indices in `undecided`), which `finish(n)` decides.
template <class RoundRow, class Finish>
void write_rounded_row(const Reduction& r, int64_t mm, std::size_t size, std::vector<std::byte>& row,
                       std::vector<uint32_t>& undecided, const RoundRow& round_row, const Finish& finish) {
  const auto& dims = r.plan.dims;
  const auto n_count = static_cast<std::size_t>(dims[1].size);
  const int64_t row_offset = mm * dims[0].out_stride;
  const bool dense = dims[1].out_stride == 1;
  std::byte* out = dense ? r.call.out + row_offset * static_cast<int64_t>(size) : row.data();
  const std::size_t left = round_row(out);
  if (!dense) {
    for (std::size_t n = 0; n < n_count; ++n) {
      std::memcpy(r.call.out + (row_offset + static_cast<int64_t>(n) * dims[1].out_stride) * static_cast<int64_t>(size),
                  row.data() + n * size, size);
    }
  }
  for (std::size_t u = 0; u < left; ++u) finish(undecided[u]);
}

// Whether rows of sums may be rounded in vectors straight into the output.
bool rounds_rows_directly(const Reduction& r, DType output) {
  return r.call.output == output && !r.call.mean && r.results == nullptr && r.bounded == nullptr;
}

void pairwise_rows(void* context, std::size_t begin, std::size_t count) {
  const PairwiseTask& task = *static_cast<const PairwiseTask*>(context);
  const Reduction& r = *task.r;
  const ScopedIeeeDefaults ieee(r.call.input);
  const auto& dims = r.plan.dims;
  const auto x = static_cast<std::size_t>(task.shape.x);
  const auto y = 1 - x;
  const int64_t xs = dims[0].stride[x];
  const int64_t ys = dims[1].stride[y];
  const auto n_count = static_cast<std::size_t>(dims[1].size);
  const auto k_count = static_cast<std::size_t>(dims[2].size);
  const std::byte* x_rows = r.at(static_cast<int>(x), static_cast<int64_t>(begin) * xs);
  const auto finish = [&](std::size_t m, std::size_t n, const SquareSums& sums, int64_t chain) {
    const auto mm = static_cast<int64_t>(begin + m);
    const auto nn = static_cast<int64_t>(n);
    Offsets base = {};
    base[x] = mm * xs;
    base[y] = nn * ys;
    r.finish(mm * dims[1].size + nn, base, mm * dims[0].out_stride + nn * dims[1].out_stride, sums, chain);
  };
  std::vector<uint32_t> undecided(n_count);
  std::vector<std::byte> row(dims[1].out_stride == 1 ? 0 : n_count * dtype_size(r.call.output));

  if (task.shape.kind == PairwiseKind::lanes_double) {
    const std::size_t n_stride = task.panel_count * kPanelVectors * r.kernels.lanes;
    ThreadScratch hi_scratch(ThreadScratch::first, count * n_stride * sizeof(double));
    ThreadScratch lo_scratch(ThreadScratch::second, count * n_stride * sizeof(double));
    double* hi = hi_scratch.as<double>();
    double* lo = lo_scratch.as<double>();
    r.kernels.pairwise_lanes_double(x_rows, xs, count, task.panels, task.panel_count, k_count, hi, lo);
    const auto chain = static_cast<int64_t>(k_count);
    const auto finish_double = [&](std::size_t m, std::size_t n) {
      finish(m, n, SquareSums{hi[m * n_stride + n], lo[m * n_stride + n], 1, false}, chain);
    };
    if (!rounds_rows_directly(r, DType::f64)) {
      for (std::size_t m = 0; m < count; ++m) {
        for (std::size_t n = 0; n < n_count; ++n) finish_double(m, n);
      }
      return;
    }
    const double relative = double_lanes_relative_bound(chain);
    for (std::size_t m = 0; m < count; ++m) {
      write_rounded_row(
          r, static_cast<int64_t>(begin + m), 8, row, undecided,
          [&](std::byte* out) {
            return reduce_kernel_table().round_to_f64(hi + m * n_stride, lo + m * n_stride, n_count,
                                                      relative, reinterpret_cast<double*>(out), undecided.data());
          },
          [&](std::size_t n) { finish_double(m, n); });
    }
    return;
  }

  // Single precision: a double per output, from the blocked kernel (rows of
  // n_count) or the lanes kernel (rows of whole panels).
  const std::size_t n_stride =
      task.shape.kind == PairwiseKind::lanes ? task.panel_count * kPanelVectors * r.kernels.lanes : n_count;
  ThreadScratch sums_scratch(ThreadScratch::first, count * n_stride * sizeof(double));
  double* sums = sums_scratch.as<double>();
  if (task.shape.kind == PairwiseKind::lanes) {
    r.kernels.pairwise_lanes(x_rows, xs, count, task.panels, task.panel_count, k_count, sums);
  } else {
    r.kernels.pairwise(x_rows, xs, count, r.at(static_cast<int>(y), 0), ys, n_count, k_count, sums);
  }
  const auto finish_single = [&](std::size_t m, std::size_t n) {
    finish(m, n, SquareSums{sums[m * n_stride + n], 0.0, 1, false}, kChain);
  };
  // f32 sums written straight to the output are rounded a row at a time in
  // vectors (reduce_kernel_table().round_to_f32): through Reduction::finish,
  // its calls and the structs they pass in memory, a million outputs took
  // about 25 ns each, 4-10 times the kernel's time (1024 x 1024, K = 16 and
  // 64). What it leaves undecided, and other outputs, go through finish,
  // which decides with the same bound.
  if (!rounds_rows_directly(r, DType::f32)) {
    for (std::size_t m = 0; m < count; ++m) {
      for (std::size_t n = 0; n < n_count; ++n) finish_single(m, n);
    }
    return;
  }
  const double relative = single_block_relative_bound();
  for (std::size_t m = 0; m < count; ++m) {
    write_rounded_row(
        r, static_cast<int64_t>(begin + m), 4, row, undecided,
        [&](std::byte* out) {
          return reduce_kernel_table().round_to_f32(sums + m * n_stride, n_count, relative,
                                                    reinterpret_cast<float*>(out), undecided.data());
        },
        [&](std::size_t n) { finish_single(m, n); });
  }
}

// y of the lanes kernels, packed once per call into `scratch` (slot third:
// the tasks that read it, on this thread too, use first and second): panels
// of kPanelVectors vectors of outputs, K rows each, as doubles (exact), zeros
// past N.
const double* pack_panels(const Reduction& r, const PairwiseShape& shape, std::optional<ThreadScratch>& scratch,
                          std::size_t& panel_count) {
  const auto& dims = r.plan.dims;
  const auto y = static_cast<std::size_t>(1 - shape.x);
  const int64_t ys = dims[1].stride[y];
  const int64_t n_count = dims[1].size;
  const int64_t k_count = dims[2].size;
  const auto width = static_cast<int64_t>(kPanelVectors * r.kernels.lanes);
  panel_count = static_cast<std::size_t>((n_count + width - 1) / width);
  const auto padded = static_cast<int64_t>(panel_count) * width;
  scratch.emplace(ThreadScratch::third, static_cast<std::size_t>(padded * k_count) * sizeof(double));
  double* panels = scratch->as<double>();
  for (int64_t n = 0; n < padded; ++n) {
    const int64_t p = n / width;
    const int64_t w = n % width;
    for (int64_t k = 0; k < k_count; ++k) {
      panels[static_cast<std::size_t>((p * k_count + k) * width + w)] =
          n < n_count ? load_float(r.at(static_cast<int>(y), n * ys + k), r.call.input) : 0.0;
    }
  }
  return panels;
}

// Whether the double-double lanes can take the call's inputs (f64 ones must
// lie in the range their terms are exact in; narrower types always do).
bool lanes_double_take(const Reduction& r, const PairwiseShape& shape) {
  if (r.call.input != DType::f64) return true;
  const auto& dims = r.plan.dims;
  const auto x = static_cast<std::size_t>(shape.x);
  const auto y = 1 - x;
  return within_double_term_range(reinterpret_cast<const double*>(r.at(static_cast<int>(x), 0)), dims[0].stride[x],
                                  dims[0].size, dims[2].size) &&
         within_double_term_range(reinterpret_cast<const double*>(r.at(static_cast<int>(y), 0)), dims[1].stride[y],
                                  dims[1].size, dims[2].size);
}

// ---- Pairwise f64 outputs by the expansion ----------------------------------

// The f64 outputs of the double-double lanes, rounded straight into the
// output, by the expansion |x|^2 + |y|^2 - 2 x.y (reduce-inl.h, its bound
// beside it): y split and packed once per call, x per task.
struct ExpansionTask {
  const Reduction* r;
  PairwiseShape shape;
  const double* y_panels;
  const double* y_consts;
  std::size_t panel_count;
};

void expansion_rows(void* context, std::size_t begin, std::size_t count) {
  const ExpansionTask& task = *static_cast<const ExpansionTask*>(context);
  const Reduction& r = *task.r;
  const ScopedIeeeDefaults ieee(r.call.input);
  const auto& dims = r.plan.dims;
  const auto x = static_cast<std::size_t>(task.shape.x);
  const auto y = 1 - x;
  const int64_t xs = dims[0].stride[x];
  const int64_t ys = dims[1].stride[y];
  const auto n_count = static_cast<std::size_t>(dims[1].size);
  const auto k_count = static_cast<std::size_t>(dims[2].size);
  const std::size_t width = kPanelVectors * r.kernels.lanes;
  const std::size_t n_stride = task.panel_count * width;
  ThreadScratch x_scratch(ThreadScratch::second, count * (2 * k_count + 8) * sizeof(double));
  double* x_split = x_scratch.as<double>();
  double* x_consts = x_split + count * 2 * k_count;
  r.kernels.expansion_pack(r.at(static_cast<int>(x), static_cast<int64_t>(begin) * xs), xs, count, k_count, x_split,
                           2, 1, 2 * k_count, 2, 1, x_consts, 8, 1);
  ThreadScratch out_scratch(ThreadScratch::first, count * n_stride * sizeof(double));
  double* out = out_scratch.as<double>();
  std::vector<uint32_t> undecided(std::max(n_count, count));
  reduce_kernel_table().pairwise_expansion(x_split, x_consts, count, task.y_panels, task.y_consts, task.panel_count,
                                           k_count, out, undecided.data());
  // Rows with an undecided output (counted by the kernel, the columns past N too).
  std::vector<uint32_t> rows_left;
  for (std::size_t m = 0; m < count; ++m) {
    if (undecided[m] != 0) rows_left.push_back(static_cast<uint32_t>(m));
  }
  const int64_t out_n = dims[1].out_stride;
  int64_t redone = 0;
  for (std::size_t m = 0; m < count; ++m) {
    const auto mm = static_cast<int64_t>(begin + m);
    const double* row = out + m * n_stride;
    std::byte* dst = r.call.out + mm * dims[0].out_stride * 8;
    if (out_n == 1) {
      std::memcpy(dst, row, n_count * 8);
    } else {
      for (std::size_t n = 0; n < n_count; ++n) std::memcpy(dst + static_cast<int64_t>(n) * out_n * 8, row + n, 8);
    }
  }
  for (const uint32_t m : rows_left) {
    const auto mm = static_cast<int64_t>(begin + m);
    const double* row = out + m * n_stride;
    // The undecided (NaN) outputs' indices, without a branch per output.
    std::size_t left = 0;
    for (std::size_t n = 0; n < n_count; ++n) {
      undecided[left] = static_cast<uint32_t>(n);
      left += row[n] != row[n] ? 1 : 0;
    }
    redone += static_cast<int64_t>(left);
    for (std::size_t u = 0; u < left; ++u) {
      const std::size_t n = undecided[u];
      const auto nn = static_cast<int64_t>(n);
      Offsets base = {};
      base[x] = mm * xs;
      base[y] = nn * ys;
      // The output's row of terms in double-double lanes, vectorized along
      // K, as the rows mode sums it (both operands contiguous along K):
      // clustered data (points within 0.01 of 16 centres) leaves the
      // bound a sixteenth of the outputs at K = 256.
      SquareSums sums;
      r.kernels.row_double[0](r.at(static_cast<int>(x), mm * xs), r.at(static_cast<int>(y), nn * ys), k_count, &sums);
      r.finish(mm * dims[1].size + nn, base, mm * dims[0].out_stride + nn * out_n, sums, kChain);
    }
  }
  if (redone != 0) g_redone.fetch_add(redone, std::memory_order_relaxed);
}

// Rows of x per task: up to 64 (each group of y, read from L2, serves them
// all), at least 8, a quarter of each thread's share when there are few, and
// no more than keep a task's split rows of x (2 K doubles each) within 2 MiB
// and its outputs (n_stride doubles each) within 4 MiB.
std::size_t expansion_task_rows(std::size_t m_count, std::size_t n_stride, std::size_t k_count, int threads) {
  const std::size_t share = m_count / (4 * static_cast<std::size_t>(std::max(threads, 1)));
  const std::size_t fitting = std::min((std::size_t{1} << 17) / k_count, (std::size_t{1} << 19) / n_stride);
  return std::clamp<std::size_t>(std::min(share, fitting), 8, 64);
}

// y's rows [begin, begin + count) split and packed (begin a multiple of a group).
struct ExpansionPackTask {
  const Reduction* r;
  PairwiseShape shape;
  double* y_panels;
  double* y_consts;
  std::size_t padded;
};

void pack_expansion_y(void* context, std::size_t begin, std::size_t count) {
  const ExpansionPackTask& task = *static_cast<const ExpansionPackTask*>(context);
  const Reduction& r = *task.r;
  const ScopedIeeeDefaults ieee(r.call.input);
  const auto& dims = r.plan.dims;
  const auto y = static_cast<std::size_t>(1 - task.shape.x);
  const auto k_count = static_cast<std::size_t>(dims[2].size);
  const std::size_t group = kExpansionVectors * r.kernels.lanes;
  r.kernels.expansion_pack(r.at(static_cast<int>(y), static_cast<int64_t>(begin) * dims[1].stride[y]),
                           dims[1].stride[y], count, k_count, task.y_panels + begin / group * 3 * k_count * group, 3,
                           group, 3 * k_count * group, 3 * group, group, task.y_consts + begin, 1, task.padded);
}

// Rows of y per packing task: whole groups, about four tasks a thread.
std::size_t expansion_pack_rows(std::size_t n_count, std::size_t group, int threads) {
  const std::size_t share = n_count / (4 * static_cast<std::size_t>(std::max(threads, 1)));
  return std::max<std::size_t>(1, share / group) * group;
}

void run_expansion(const Reduction& r, const PairwiseShape& shape, int threads) {
  const auto& dims = r.plan.dims;
  const auto n_count = static_cast<std::size_t>(dims[1].size);
  const auto k_count = static_cast<std::size_t>(dims[2].size);
  const std::size_t width = kPanelVectors * r.kernels.lanes;
  const std::size_t group = kExpansionVectors * r.kernels.lanes;
  const std::size_t panel_count = (n_count + width - 1) / width;
  const std::size_t padded = panel_count * width;
  ThreadScratch scratch(ThreadScratch::third, (3 * k_count + 6) * padded * sizeof(double));
  double* y_panels = scratch.as<double>();
  double* y_consts = y_panels + 3 * k_count * padded;
  ExpansionPackTask pack{&r, shape, y_panels, y_consts, padded};
  parallel_for(threads, n_count, expansion_pack_rows(n_count, group, threads), &pack_expansion_y, &pack);
  // The columns past N: zero rows (their outputs are never read).
  for (std::size_t n = n_count; n < padded; ++n) {
    double* at = y_panels + n / group * 3 * k_count * group + n % group;
    for (std::size_t k = 0; k < 3 * k_count; ++k) at[k * group] = 0;
    for (std::size_t j = 0; j < 6; ++j) y_consts[j * padded + n] = 0;
  }
  ExpansionTask task{&r, shape, y_panels, y_consts, panel_count};
  const auto m_count = static_cast<std::size_t>(dims[0].size);
  parallel_for(threads, m_count, expansion_task_rows(m_count, padded, k_count, threads), &expansion_rows, &task);
}

// The fewest terms per output the expansion takes: its cost per output
// (packing, the bound, the copy out) is about that of 3 terms of the
// double-double lanes (f64 [1024,K] x [1024,K], 1 thread, sqdiff_bench,
// medians of 3 alternating runs: K = 3 1.51 ms against 1.37, K = 16 2.43
// against 5.27).
constexpr int64_t kMinExpansionTerms = 4;

// Whether the expansion takes the call: K from kMinExpansionTerms, and its
// copy of y (three doubles an element, in run_expansion) within the lanes
// kernels' limit on packed doubles.
bool expansion_fits(const Reduction& r) {
  const auto& dims = r.plan.dims;
  if (dims[2].size < kMinExpansionTerms) return false;
  const auto width = static_cast<int64_t>(kPanelVectors * r.kernels.lanes);
  const int64_t padded = (dims[1].size + width - 1) / width * width;
  return 3 * padded * dims[2].size <= kMaxPanelDoubles;
}

}  // namespace

void set_fast_square_reductions(bool enabled) { g_fast_enabled.store(enabled); }
bool fast_square_reductions_enabled() { return g_fast_enabled.load(); }

FastSquareCounts fast_square_counts() {
  const int64_t exact = g_exact.load();
  return {g_outputs.load() - exact, exact, g_redone.load()};
}

namespace {

void run(const Reduction& r, int threads) {
  if (r.bounded == nullptr) g_outputs.fetch_add(r.call.outputs, std::memory_order_relaxed);
  if (const auto shape = pairwise_shape(r);
      shape && (shape->kind != PairwiseKind::lanes_double || lanes_double_take(r, *shape))) {
    if (shape->kind == PairwiseKind::lanes_double && rounds_rows_directly(r, DType::f64) && expansion_fits(r)) {
      run_expansion(r, *shape, threads);
      return;
    }
    PairwiseTask task{&r, *shape};
    std::optional<ThreadScratch> panels;
    if (shape->kind != PairwiseKind::blocked) task.panels = pack_panels(r, *shape, panels, task.panel_count);
    parallel_for(threads, static_cast<std::size_t>(r.plan.dims[0].size), kPairwiseRows, &pairwise_rows, &task);
    return;
  }
  if (r.plan.innermost_reduced()) {
    run_rows(r, threads);
  } else {
    run_columns(r, threads);
  }
}

}  // namespace

void fast_square_reduction(const ReduceCall& call, const ReducePlan& plan, int threads, uint64_t* results) {
  run(Reduction(call, plan, results, nullptr), threads);
}

void fast_square_bounds(const ReduceCall& call, const ReducePlan& plan, int threads, BoundedSum* sums) {
  run(Reduction(call, plan, nullptr, sums), threads);
}

}  // namespace sqdiff::detail
