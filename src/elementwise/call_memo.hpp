// The plans of a thread's last few calls through the general path, kept so
// that a call repeating one's shapes (as a model's inner loop does) skips
// validation and planning: the specs' [8,1,6,1] with [7,1,5] spent about half
// of each call there (perf).
//
// The key holds everything validation and the plan depend on except the data
// pointers: dtype, broadcast mode, the shapes and strides exactly as passed,
// and the kernel table (its target decides which short rows become block
// rows). What depends on the pointers is checked on every call; a call that
// needs anything the full path does differently (a snapshot of an
// overlapping input, an error to report) is left to the full path. A small
// call's kernel calls are recorded too (RecordedRun), and a repeat replays
// them without walking the plan again.
#pragma once

#include <array>
#include <cstdint>

#include "elementwise/execute.hpp"
#include "elementwise/plan.hpp"
#include "elementwise/short_rows.hpp"
#include "kernels/kernel_table.hpp"
#include "shape/dim_vector.hpp"
#include "shape/memory_extent.hpp"
#include "shape/validate.hpp"
#include "sqdiff/ops.hpp"

namespace sqdiff::detail {

class CallMemo {
 public:
  // Runs the call if it repeats the remembered one; otherwise returns false
  // having read and written nothing.
  bool try_run(const KernelTable& table, Op op, const ConstTensorView& a, const ConstTensorView& b,
               const TensorView& out, const Options& options) const;

  // The scratch that full-path plans point into. A full-path call forgets the
  // remembered plan before it rebuilds the scratch.
  ShortRowScratch& scratch() { return scratch_; }
  void forget() { remembered_ = false; }

  // A repeat of the remembered call would replay its recorded kernel calls.
  bool replays() const { return remembered_ && replayable_; }

  // Keeps a validated call's plan, which must have been built without reading
  // the inputs' data (no snapshot, no copied blocks) into scratch().
  void remember(const KernelTable& table, const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                const Options& options, const CheckedCall& call, const Plan& plan);

 private:
  bool matches(const KernelTable& table, const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
               const Options& options) const;

  bool remembered_ = false;
  // Key.
  const KernelTable* table_ = nullptr;
  DType dtype_ = DType::f32;
  Broadcast mode_ = {};
  DimVector a_shape_;
  DimVector a_strides_;
  DimVector b_shape_;
  DimVector b_strides_;
  DimVector out_shape_;
  DimVector out_strides_;
  // What the full path worked out from the key.
  RelativeExtent extent_a_ = {};
  RelativeExtent extent_b_ = {};
  RelativeExtent extent_out_ = {};
  bool a_walks_like_out_ = false;
  bool b_walks_like_out_ = false;
  std::size_t input_bytes_ = 0;
  bool replayable_ = false;  // recorded_ holds the run; plan_ is not used
  RecordedRun recorded_;
  Plan plan_;
  ShortRowScratch scratch_;
};

// The memos of a thread's last few keys, so that a loop that cycles through a
// few shapes (a model's layers) reuses each plan: with one memo, the specs'
// example alternating with a b of [7,1,6] missed on every call (486-567 ns a
// call against 184-285 with four memos; scratch loops side by side).
class RecentCalls {
 public:
  static constexpr std::size_t kEntries = 4;

  // Runs the call if one of the memos holds its key, trying the last one used
  // first; otherwise returns false having read and written nothing.
  bool try_run(const KernelTable& table, Op op, const ConstTensorView& a, const ConstTensorView& b,
               const TensorView& out, const Options& options) {
    return memos_[last_].try_run(table, op, a, b, out, options) || try_others(table, op, a, b, out, options);
  }

  // The memo a full-path call builds its plan in (forgetting it first, once
  // the call is valid) and may remember it by: the least recently used one.
  CallMemo& claim();

 private:
  bool try_others(const KernelTable& table, Op op, const ConstTensorView& a, const ConstTensorView& b,
                  const TensorView& out, const Options& options);
  void touch(std::size_t entry) {
    last_ = entry;
    used_[entry] = ++clock_;
  }

  std::array<CallMemo, kEntries> memos_;
  std::array<uint64_t, kEntries> used_ = {};  // clock_ at each memo's last use
  uint64_t clock_ = 0;
  std::size_t last_ = 0;
};

}  // namespace sqdiff::detail
