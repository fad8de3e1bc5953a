#pragma once

namespace sqdiff_bench {

// quant/<op>/<type>/<size>/t<threads>: the quantized ops (issue 25, item 5).
void register_quantized_cases();

}  // namespace sqdiff_bench
