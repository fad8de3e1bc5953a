// What a small dense call is made of, as reference contenders beside it: the
// library's kernel alone (all that an expression compiled into the caller,
// such as Eigen's, executes), and the same kernel after reading what the
// public call must read first: the three shapes and the kernel table. Where
// the buffers fill the L1 exactly (4K f32 out of place), those few extra lines
// are what separates a library call from an inlined loop; the two ratios
// (r_kernel, r_kernel_after_args) show it in the same rounds as the peers.
#pragma once

#include <sqdiff/tensor_view.hpp>

#include <vector>

#include "measure.hpp"

namespace sqdiff_bench {

// a, b and out dense and of one shape, as the dense fast path takes them.
std::vector<Contender> call_footprint_contenders(bool squared, const sqdiff::ConstTensorView& a,
                                                 const sqdiff::ConstTensorView& b, const sqdiff::TensorView& out);

}  // namespace sqdiff_bench
