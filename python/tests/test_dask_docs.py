"""The examples that need Dask run as written: sqdiff.dask's docstrings, and the Dask
examples of docs/python.md and README.md (between doc_examples.py's markers;
test_docs.py runs the others). Skipped only where Dask is not installed."""

import doctest

import pytest

from optional_modules import require  # noqa: E402

require("dask")
import sqdiff.dask  # noqa: E402
from doc_examples import FLAGS, run_examples, split_dask_examples  # noqa: E402
from support import source_dir  # noqa: E402


def test_sqdiff_dask_docstring_examples():
    result = doctest.testmod(sqdiff.dask, optionflags=FLAGS, verbose=False)
    assert result.attempted >= 30, result  # the module and each of its four functions
    assert result.failed == 0, result
    for name in sqdiff.dask.__all__:
        assert ">>> " in getattr(sqdiff.dask, name).__doc__, name


@pytest.mark.parametrize("relative, least", [("docs/python.md", 10), ("README.md", 3)])
def test_dask_examples_in_the_docs(relative, least):
    path = source_dir() / relative
    _, dask_only, regions = split_dask_examples(path.read_text(encoding="utf-8"))
    assert regions >= 1, f"{relative} has no Dask examples"
    result = run_examples(dask_only, path)
    assert result.attempted >= least, result
    assert result.failed == 0, result
