#include "shape_command.hpp"

#include <iostream>
#include <memory>
#include <string>

#include "cli_checks.hpp"
#include "partial_shape.hpp"

namespace sqdiff::tools {

void register_shape_command(CLI::App& app) {
  struct Args {
    std::string a;
    std::string b;
    std::string mode = "numpy";
    int64_t axis = -1;
  };
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand("shape", "Print the broadcast shape of two (partial) shapes");
  sub->add_option("a", args->a, "Shape of a: 8,1,6,1 or [8,1,6,1]; ? for any size, 2..7 or 1.. for a range, "
                                "[] for a scalar, ... for a dynamic rank")
      ->required();
  sub->add_option("b", args->b, "Shape of b, written the same way")->required();
  sub->add_option("--broadcast", args->mode, "Broadcast mode: none, numpy or pdpd")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "numpy", "pdpd"}, CLI::ignore_case));
  sub->add_option("--axis", args->axis,
                  "pdpd only: the dim of a where b starts; -1 aligns b right. Write negative values as --axis=-1")
      ->capture_default_str()
      ->check(fits_in<int64_t>());
  sub->footer(
      "Examples:\n"
      "  $ sqdiff shape 8,1,6,1 7,1,5\n"
      "  [8,7,6,5]\n"
      "  $ sqdiff shape 256,56 256,56 --broadcast none\n"
      "  [256,56]\n"
      "  $ sqdiff shape 2,3,4,5 3,1 --broadcast pdpd --axis=1\n"
      "  [2,3,4,5]\n"
      "  $ sqdiff shape '?,3' 2..7,1\n"
      "  [2..7,3]\n"
      "  $ sqdiff shape 1..3,8..16 1..5,4..12\n"
      "  [1..5,8..12]\n"
      "  $ sqdiff shape '[...]' 3\n"
      "  [...]\n"
      "\n"
      "Dims are intervals: ? is any size, 2..7 a range, 1.. (or 1..?) at least 1. The rules for\n"
      "partial shapes are those of SPEC section 5 (see docs/cli.md). Quote ? and [ ] in the shell.");
  sub->callback([args] {
    Broadcast mode;
    mode.kind = parse_broadcast_kind(args->mode);
    mode.axis = args->axis;
    const PartialShape a = parse_partial_shape(args->a);
    const PartialShape b = parse_partial_shape(args->b);
    std::cout << format_partial_shape(broadcast_partial_shape("shape", a, b, mode)) << '\n';
  });
}

}  // namespace sqdiff::tools
