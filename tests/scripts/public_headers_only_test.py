"""scripts/check_public_headers.py on made-up trees: it passes a client that
includes public headers only, fails one that includes a header from src/
(directly or through src/ on the include path) unless the exception list names
it, and fails a line of the list that no longer matches an include."""

import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check_public_headers.py"


class PublicHeadersOnlyTest(unittest.TestCase):
    def run_check(self, files, exceptions=""):
        with tempfile.TemporaryDirectory() as directory:
            root = pathlib.Path(directory)
            for name, text in {"src/kernels/table.hpp": "", "include/sqdiff/ops.hpp": "", "python/x.py": "",
                               **files}.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text)
            (root / "list.txt").write_text(exceptions)
            return subprocess.run([sys.executable, SCRIPT, root, "--exceptions", root / "list.txt"],
                                  capture_output=True, text=True)

    def test_public_headers_pass(self):
        result = self.run_check({"tools/a.cpp": '#include "sqdiff/ops.hpp"\n#include "b.hpp"\n', "tools/b.hpp": ""})
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_a_header_through_src_on_the_include_path_fails(self):
        result = self.run_check({"tools/a.cpp": '#include "kernels/table.hpp"\n'})
        self.assertEqual(result.returncode, 1)
        self.assertIn("tools/a.cpp: includes the library's internal header kernels/table.hpp", result.stderr)

    def test_a_relative_path_into_src_fails(self):
        result = self.run_check({"python/src/a.cpp": '#include "../../src/kernels/table.hpp"\n'})
        self.assertEqual(result.returncode, 1)
        self.assertIn("python/src/a.cpp", result.stderr)

    def test_a_listed_exception_passes_and_a_stale_one_fails(self):
        files = {"tools/a.cpp": '#include "kernels/table.hpp"\n'}
        self.assertEqual(self.run_check(files, "tools/a.cpp kernels/table.hpp\n").returncode, 0)
        stale = self.run_check(files, "tools/a.cpp kernels/table.hpp\ntools/gone.cpp kernels/table.hpp\n")
        self.assertEqual(stale.returncode, 1)
        self.assertIn("'tools/gone.cpp kernels/table.hpp' no longer matches", stale.stderr)


if __name__ == "__main__":
    unittest.main()
