// The `sqdiff` program: builds the command line, runs one subcommand, and turns
// every error into one line on stderr and a non-zero exit status.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <string>

#include "compare_command.hpp"
#include "fatal_signals.hpp"
#include "ir/ir_command.hpp"
#include "npy.hpp"
#include "path_text.hpp"
#include "run_command.hpp"
#include "shape_command.hpp"
#include "tflite/tflite_command.hpp"
#include "sqdiff/sqdiff.hpp"

namespace {

constexpr int kExitError = 1;  // the job failed
constexpr int kExitUsage = 2;  // a command-line mistake

std::string version_text() {
  return std::string("sqdiff ") + sqdiff::kVersion + " (SIMD target: " + sqdiff::active_simd_target() + ")";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sqdiff: squared difference and subtraction of .npy arrays, their comparison, broadcast shapes, "
               "OpenVINO IR and .tflite models",
               "sqdiff"};
  app.set_version_flag("--version", std::function<std::string()>(version_text),
                       "Print the version and the active SIMD target, then exit");
  app.require_subcommand(1);
  // One line per command-line mistake, like every other error.
  app.failure_message([](const CLI::App* top, const CLI::Error& e) {
    std::string help = "sqdiff";
    for (const CLI::App* sub : top->get_subcommands()) help += " " + sub->get_name();
    return sqdiff::tools::error_line(std::string(e.what()) + " (see " + help + " --help)");
  });
  app.footer(
      "Examples:\n"
      "  $ sqdiff shape 8,1,6,1 7,1,5\n"
      "  [8,7,6,5]\n"
      "  $ sqdiff run --op squared_difference a.npy b.npy -o squared.npy\n"
      "  $ sqdiff compare a.npy b.npy --broadcast numpy --json\n"
      "  $ sqdiff --version\n"
      "\n"
      "Run `sqdiff SUBCOMMAND --help` for each subcommand's options and examples.\n"
      "Negative option values are written --axis=-2. Errors go to stderr; the exit status is\n"
      "0 on success, 1 when the job fails, 2 for a command-line mistake (3: a failed compare gate).");
  sqdiff::tools::register_run_command(app);
  sqdiff::tools::register_compare_command(app);
  sqdiff::tools::register_shape_command(app);
  sqdiff::tools::register_ir_command(app);
  sqdiff::tools::register_tflite_command(app);
  sqdiff::tools::install_fatal_signal_handlers();

  // The top level takes only flags, so its first other argument names the
  // subcommand; say so plainly when it names none (CLI11 would only say that a
  // subcommand is required).
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "--version") continue;
    if (!arg.empty() && arg[0] == '-') {
      std::cerr << sqdiff::tools::error_line("unknown option \"" + arg + "\" (see sqdiff --help)") << std::flush;
      return kExitUsage;
    }
    bool known = false;
    const CLI::App& top = app;
    for (const CLI::App* sub : top.get_subcommands([](const CLI::App*) { return true; })) {
      known = known || sub->check_name(arg);
    }
    if (!known) {
      std::cerr << sqdiff::tools::error_line("unknown subcommand \"" + arg +
                                             "\" (expected run, compare, shape, ir or tflite; see sqdiff --help)")
                << std::flush;
      return kExitUsage;
    }
    break;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return app.exit(e);  // a subcommand's chosen exit status; it has printed its message
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);  // prints help, the version, or the one-line error
    return status == 0 ? 0 : kExitUsage;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << sqdiff::tools::error_line(e.what()) << std::flush;
    return kExitError;
  }
  return 0;
}
