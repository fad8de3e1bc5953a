#include "execute.hpp"

#include <algorithm>
#include <array>

#include "strided_copy.hpp"

namespace sqdiff::detail {
namespace {

// Elements per packed block of a strided row: small enough that the three
// blocks stay in L1, large enough to amortise the kernel call.
constexpr std::size_t kBlockElements = 512;

struct Row {
  const std::byte* a;
  const std::byte* b;
  std::byte* out;
};

// A row whose operands are not all unit-stride: operands with a stride other
// than 0 or 1 are packed into blocks, the output is unpacked after.
void run_strided_row(const RowKernels& kernels, const Row& row, std::size_t n, int64_t stride_a,
                     int64_t stride_b, int64_t stride_out, std::size_t element_size) {
  alignas(64) std::array<std::byte, kBlockElements * 8> block_a;
  alignas(64) std::array<std::byte, kBlockElements * 8> block_b;
  alignas(64) std::array<std::byte, kBlockElements * 8> block_out;
  const auto size = static_cast<int64_t>(element_size);
  // Both inputs scalar along the row: widen one of them so the vs kernel applies.
  const bool both_scalar = stride_a == 0 && stride_b == 0;
  for (std::size_t done = 0; done < n; done += kBlockElements) {
    const std::size_t count = std::min(kBlockElements, n - done);
    const auto offset = static_cast<int64_t>(done);
    const std::byte* a = row.a + offset * stride_a * size;
    const std::byte* b = row.b + offset * stride_b * size;
    std::byte* out = row.out + offset * stride_out * size;
    int64_t packed_a = stride_a;
    int64_t packed_b = stride_b;
    if ((stride_a != 0 && stride_a != 1) || both_scalar) {
      gather(a, stride_a, block_a.data(), count, element_size);
      a = block_a.data();
      packed_a = 1;
    }
    if (stride_b != 0 && stride_b != 1) {
      gather(b, stride_b, block_b.data(), count, element_size);
      b = block_b.data();
      packed_b = 1;
    }
    std::byte* target = stride_out == 1 ? out : block_out.data();
    if (packed_a == 1 && packed_b == 1) {
      kernels.vv(a, b, target, count);
    } else if (packed_a == 1) {
      kernels.vs(a, b, target, count);
    } else {
      kernels.sv(a, b, target, count);
    }
    if (stride_out != 1) scatter(block_out.data(), out, stride_out, count, element_size);
  }
}

}  // namespace

void execute(const Plan& plan, Op op, DType dtype, const std::byte* a, const std::byte* b, std::byte* out) {
  if (plan.element_count == 0) return;
  const RowKernels& kernels = kernel_table().at(op, dtype);
  const auto element_size = static_cast<int64_t>(dtype_size(dtype));
  const int inner = plan.rank - 1;
  const auto n = static_cast<std::size_t>(plan.size[static_cast<std::size_t>(inner)]);
  const int64_t row_stride_a = plan.stride_a[static_cast<std::size_t>(inner)];
  const int64_t row_stride_b = plan.stride_b[static_cast<std::size_t>(inner)];
  const int64_t row_stride_out = plan.stride_out[static_cast<std::size_t>(inner)];

  std::array<int64_t, kMaxPlanRank> index{};
  int64_t offset_a = plan.offset_a;
  int64_t offset_b = plan.offset_b;
  int64_t offset_out = plan.offset_out;
  const int64_t rows = plan.element_count / static_cast<int64_t>(n);
  for (int64_t r = 0; r < rows; ++r) {
    const Row row{a + offset_a * element_size, b + offset_b * element_size, out + offset_out * element_size};
    switch (plan.row_kind) {
      case RowKind::vv: kernels.vv(row.a, row.b, row.out, n); break;
      case RowKind::vs: kernels.vs(row.a, row.b, row.out, n); break;
      case RowKind::sv: kernels.sv(row.a, row.b, row.out, n); break;
      case RowKind::strided:
        run_strided_row(kernels, row, n, row_stride_a, row_stride_b, row_stride_out,
                        static_cast<std::size_t>(element_size));
        break;
    }
    // Advance the odometer over the outer dims, innermost first.
    for (int d = inner - 1; d >= 0; --d) {
      const auto k = static_cast<std::size_t>(d);
      if (++index[k] < plan.size[k]) {
        offset_a += plan.stride_a[k];
        offset_b += plan.stride_b[k];
        offset_out += plan.stride_out[k];
        break;
      }
      index[k] = 0;
      offset_a -= plan.stride_a[k] * (plan.size[k] - 1);
      offset_b -= plan.stride_b[k] * (plan.size[k] - 1);
      offset_out -= plan.stride_out[k] * (plan.size[k] - 1);
    }
  }
}

}  // namespace sqdiff::detail
