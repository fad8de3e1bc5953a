#include "reduce/reduce_plan.hpp"

namespace sqdiff::detail {

std::vector<ReduceDim> ReducePlan::kept() const {
  std::vector<ReduceDim> out;
  for (const ReduceDim& d : dims) {
    if (!d.reduced) out.push_back(d);
  }
  return out;
}

std::vector<ReduceDim> ReducePlan::summed() const {
  std::vector<ReduceDim> out;
  for (const ReduceDim& d : dims) {
    if (d.reduced) out.push_back(d);
  }
  return out;
}

ReducePlan make_reduce_plan(const ReduceCall& call) {
  ReducePlan plan;
  for (std::size_t i = 0; i < call.shape.size(); ++i) {
    if (call.shape[i] == 1) continue;  // never moves
    ReduceDim dim;
    dim.size = call.shape[i];
    dim.reduced = call.reduced[i] != 0;
    for (int k = 0; k < call.operands; ++k) dim.stride[static_cast<std::size_t>(k)] = call.strides[static_cast<std::size_t>(k)][i];
    dim.out_stride = dim.reduced ? 0 : call.out_strides[i];
    if (!plan.dims.empty()) {
      // Merge into the dim above when every operand, and the output, steps
      // through both as through one longer dim.
      ReduceDim& outer = plan.dims.back();
      bool merges = outer.reduced == dim.reduced && outer.out_stride == dim.out_stride * dim.size;
      for (int k = 0; k < kMaxOperands; ++k) {
        const auto s = static_cast<std::size_t>(k);
        merges = merges && outer.stride[s] == dim.stride[s] * dim.size;
      }
      if (merges) {
        outer.size *= dim.size;
        outer.stride = dim.stride;
        outer.out_stride = dim.out_stride;
        continue;
      }
    }
    plan.dims.push_back(dim);
  }
  return plan;
}

}  // namespace sqdiff::detail
