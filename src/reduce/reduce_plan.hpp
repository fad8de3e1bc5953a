// The plan of a reduction: the broadcast shape's dims simplified (size-1 dims
// dropped, neighbours merged where every operand and the output step through
// them as one), each marked reduced or kept. A small value tests inspect.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "reduce/reduce_call.hpp"

namespace sqdiff::detail {

struct ReduceDim {
  int64_t size = 1;
  bool reduced = false;
  std::array<int64_t, kMaxOperands> stride = {};  // elements, per operand
  int64_t out_stride = 0;                          // elements; 0 on reduced dims
};

struct ReducePlan {
  std::vector<ReduceDim> dims;  // outermost first

  // The kept dims alone (the output's own order) and the reduced ones alone.
  std::vector<ReduceDim> kept() const;
  std::vector<ReduceDim> summed() const;
  bool innermost_reduced() const { return !dims.empty() && dims.back().reduced; }
};

ReducePlan make_reduce_plan(const ReduceCall& call);

// Walks a list of dims in row-major order, keeping every operand's (and the
// output's) element offset: the odometer the executors share.
class DimWalker {
 public:
  explicit DimWalker(const std::vector<ReduceDim>& dims) : dims_(dims), index_(dims.size(), 0) {}
  // It keeps a reference to the dims: a temporary would dangle.
  explicit DimWalker(std::vector<ReduceDim>&&) = delete;
  // Moves to the next position; false after the last one (offsets back at 0).
  bool next() {
    for (std::size_t d = dims_.size(); d-- > 0;) {
      const ReduceDim& dim = dims_[d];
      if (++index_[d] < dim.size) {
        for (int k = 0; k < kMaxOperands; ++k) offset_[k] += dim.stride[k];
        out_offset_ += dim.out_stride;
        return true;
      }
      index_[d] = 0;
      for (int k = 0; k < kMaxOperands; ++k) offset_[k] -= dim.stride[k] * (dim.size - 1);
      out_offset_ -= dim.out_stride * (dim.size - 1);
    }
    return false;
  }
  // Jumps to the position of row-major ordinal `ordinal`.
  void seek(int64_t ordinal) {
    offset_ = {};
    out_offset_ = 0;
    for (std::size_t d = dims_.size(); d-- > 0;) {
      const ReduceDim& dim = dims_[d];
      index_[d] = ordinal % dim.size;
      ordinal /= dim.size;
      for (int k = 0; k < kMaxOperands; ++k) offset_[k] += dim.stride[k] * index_[d];
      out_offset_ += dim.out_stride * index_[d];
    }
  }
  int64_t offset(int operand) const { return offset_[static_cast<std::size_t>(operand)]; }
  int64_t out_offset() const { return out_offset_; }
  const std::vector<int64_t>& index() const { return index_; }

 private:
  const std::vector<ReduceDim>& dims_;
  std::vector<int64_t> index_;
  std::array<int64_t, kMaxOperands> offset_ = {};
  int64_t out_offset_ = 0;
};

}  // namespace sqdiff::detail
