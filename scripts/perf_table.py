#!/usr/bin/python3
"""Turns sqdiff_bench's JSON output into docs/PERFORMANCE.md.

Usage: /usr/bin/python3 scripts/perf_table.py RESULTS.json [--output FILE]
       (or --reductions-into PAGE / --pairwise-into PAGE: one section of an existing page)

Standard library only. The machine, compiler and run settings come from the
JSON context that sqdiff_bench records, so the document can be regenerated
from a saved JSON file on any machine. scripts/bench.sh runs this after every
benchmark run.
"""

import argparse
import sys

from perf_page.common import load
from perf_page.elementwise import sort_key
from perf_page.page import full_page
from perf_page.pairwise import PAIRWISE_HEADING, pairwise_section
from perf_page.kernel_loops import KernelLoops
from perf_page.reductions import REDUCE_HEADING, reductions_section
from perf_page.splice import write_section_into


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", help="JSON written by sqdiff_bench --benchmark_out=FILE")
    parser.add_argument("--python", action="append", default=[],
                        help="JSON written by bench/python/bench_reductions.py --json FILE (repeatable)")
    parser.add_argument("--reductions-into", metavar="PAGE",
                        help="write only the 'Reductions and gradients' section, into this existing page "
                             "(for a run of the reduce/ and grad/ cases alone)")
    parser.add_argument("--pairwise-python", metavar="JSON",
                        help="JSON written by bench/python/bench_pairwise.py --json FILE")
    parser.add_argument("--pairwise-into", metavar="PAGE",
                        help="write only the 'Pairwise squared distances' section, into this existing page "
                             "(for a run of the reduce/pairwise/ cases alone, with --pairwise-python)")
    parser.add_argument("--binary", metavar="SQDIFF_BENCH",
                        help="the benchmark binary of the run: the reductions' rows get their kernel loops' "
                             "instructions per element (objdump)")
    parser.add_argument("--output", "-o", default="-", help="markdown file to write (default: stdout)")
    return parser.parse_args()


def main():
    args = parse_args()
    ctx, rows = load(args.results)
    rows.sort(key=sort_key)
    if args.reductions_into and args.pairwise_into:
        sys.exit("perf_table.py: --reductions-into and --pairwise-into do not go together")
    if args.reductions_into:
        loops = KernelLoops(args.binary, ctx.get("sqdiff_simd_target", "")) if args.binary else None
        write_section_into(args.reductions_into,
                           reductions_section(ctx, rows, args.python, separate_run=True, loops=loops), REDUCE_HEADING)
        return
    if args.pairwise_into:
        section = pairwise_section(ctx, rows, args.pairwise_python, separate_run=True)
        if not section:
            sys.exit(f"perf_table.py: no pairwise rows in {args.results} and no --pairwise-python")
        write_section_into(args.pairwise_into, section, PAIRWISE_HEADING)
        return
    text = full_page(ctx, rows, args.python, args.pairwise_python, args.output)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
