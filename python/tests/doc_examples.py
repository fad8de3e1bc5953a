"""The doctest examples of a Markdown file, split into those that need Dask and the others.

Examples that need Dask sit between the two HTML comments below (invisible on
the rendered page). test_docs.py runs the others everywhere; test_dask_docs.py
runs these where Dask is installed (Debian's system Python has no Dask). Lines
of the part left out become blank, so that a failure's line number is the
file's.
"""

import doctest
import re

DASK_BEGIN = "<!-- examples that need Dask: python/tests/test_dask_docs.py -->"
DASK_END = "<!-- end of the examples that need Dask -->"
FLAGS = doctest.NORMALIZE_WHITESPACE

_DASK_REGION = re.compile(re.escape(DASK_BEGIN) + r".*?" + re.escape(DASK_END), re.DOTALL)


def _blank(text):
    return "\n" * text.count("\n")


def split_dask_examples(text):
    """(text without the Dask regions, text of the Dask regions only)."""
    assert text.count(DASK_BEGIN) == text.count(DASK_END), "unbalanced Dask example markers"
    without = _DASK_REGION.sub(lambda m: _blank(m.group(0)), text)
    regions = list(_DASK_REGION.finditer(text))
    only = []
    position = 0
    for region in regions:
        only.append(_blank(text[position:region.start()]))
        only.append(region.group(0))
        position = region.end()
    only.append(_blank(text[position:]))
    return without, "".join(only), len(regions)


def run_examples(text, path):
    """Runs the doctest examples in `text` (from the file `path`) as doctest.testfile would."""
    test = doctest.DocTestParser().get_doctest(text, {"__name__": "__main__"}, path.name, str(path), 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS, verbose=False)
    runner.run(test)
    return runner.summarize(verbose=False)
