"""``python -m sqdiff.verify MODEL [--input NAME=FILE.npy ...] [--random SEED] [--runtime R]
[--device D] [--resolver R] [--property KEY=VALUE ...] [--json]``: :func:`sqdiff.verify` as a
command (docs/verify.md). Exit status 0 when every checked operator is identical, 3 when any
differs, 1 for an error, 2 for a command-line mistake.

``sqdiff.verify`` is the function; this module only runs it from the command line. Should it be
imported as a module all the same (``import sqdiff.verify`` makes the package's attribute this
module), calling it calls the function.
"""

import sys
import types

from ._verify import main, verify

if __name__ == "__main__":
    sys.exit(main())


class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return verify(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
