"""The examples in the docstrings, docs/python.md and README.md run as written."""

import doctest

import sqdiff
from doc_examples import run_examples, split_dask_examples
from support import source_dir

FLAGS = doctest.NORMALIZE_WHITESPACE


def test_docstring_examples():
    result = doctest.testmod(sqdiff, optionflags=FLAGS, verbose=False)
    assert result.attempted >= 40, result  # every public function has examples
    assert result.failed == 0, result


def test_docs_python_md_examples():
    path = source_dir() / "docs" / "python.md"
    assert path.is_file(), path
    result = run_examples(split_dask_examples(path.read_text(encoding="utf-8"))[0], path)  # Dask's: test_dask_docs.py
    assert result.attempted >= 20, result
    assert result.failed == 0, result


def test_readme_python_examples():
    path = source_dir() / "README.md"
    result = run_examples(split_dask_examples(path.read_text(encoding="utf-8"))[0], path)  # Dask's: test_dask_docs.py
    assert result.attempted >= 4, result
    assert result.failed == 0, result


def test_every_public_function_has_a_docstring_with_examples():
    for name in sqdiff.__all__:
        obj = getattr(sqdiff, name)
        if callable(obj) and name != "Error":
            assert obj.__doc__ and ">>> " in obj.__doc__, name
    assert ">>> " in sqdiff.__doc__
