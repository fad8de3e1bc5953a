"""docs/PERFORMANCE.md from sqdiff_bench's JSON output, one module a concept; scripts/perf_table.py
is the command that puts the sections on the page."""
