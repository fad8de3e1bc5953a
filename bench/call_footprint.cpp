#include "call_footprint.hpp"

#include <cstddef>
#include <cstdint>

#include "case_support.hpp"
#include "kernels/kernel_table.hpp"

namespace sqdiff_bench {

std::vector<Contender> call_footprint_contenders(bool squared, const sqdiff::ConstTensorView& a,
                                                 const sqdiff::ConstTensorView& b, const sqdiff::TensorView& out) {
  namespace detail = sqdiff::detail;
  const detail::Op op = squared ? detail::Op::squared_difference : detail::Op::subtract;
  const detail::RowKernel kernel = detail::kernel_table().at(op, a.dtype).plain.vv;
  const auto n = static_cast<std::size_t>(element_count(out.shape));
  static constexpr detail::RowBatch kOneRow{};

  Contender bare;
  bare.name = "kernel";
  bare.role = Role::reference;
  bare.call = [=] { kernel(a.data, b.data, out.data, n, kOneRow); };

  Contender after_args;
  after_args.name = "kernel_after_args";
  after_args.role = Role::reference;
  after_args.call = [=] {
    // The reads the public call makes before its kernel; volatile, so that
    // they are made although nothing here needs their values.
    volatile int64_t dims = a.shape[0] + b.shape[0] + out.shape[0];
    (void)dims;
    detail::kernel_table().at(op, a.dtype).plain.vv(a.data, b.data, out.data, n, kOneRow);
  };
  return {bare, after_args};
}

}  // namespace sqdiff_bench
