// Registration of the reduction and gradient cases of issue 13 (see reduce_cases.cpp).
#pragma once

namespace sqdiff_bench {

void register_reduce_cases();

}  // namespace sqdiff_bench
