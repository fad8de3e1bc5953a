// Registration of every benchmark case (see cases.cpp).
#pragma once

namespace sqdiff_bench {

void register_cases();

}  // namespace sqdiff_bench
