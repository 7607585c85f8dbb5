# SPDX-License-Identifier: Apache-2.0
"""Write the small offline intersphinx inventories the docs build uses.

The build machines reach no documentation site, and an intersphinx inventory
that cannot be fetched is a warning (an error under ``-W``). So the few foreign
names the pages and docstrings link to are listed here, with their pages on
the real sites, and written as Sphinx inventory files (``objects.inv`` format
version 2: four header lines, then zlib-compressed ``name domain:role
priority uri display`` lines).

Run ``python docs/_inventories/make_inventories.py`` after adding a name;
``tests/doc_examples/test_build_docs.py`` checks the files are up to date.
With ``STATEFN_DOCS_ONLINE=1`` ``docs/conf.py`` fetches the real inventories
instead.
"""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: project name -> (version, [(name, domain:role, uri relative to the site root)])
INVENTORIES: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "numpy": (
        "stable",
        [
            ("numpy.dtype", "py:class", "reference/generated/numpy.dtype.html#numpy.dtype"),
            ("numpy.ndarray", "py:class", "reference/generated/numpy.ndarray.html#numpy.ndarray"),
            ("numpy.generic", "py:class", "reference/arrays.scalars.html#numpy.generic"),
            ("numpy.ufunc", "py:class", "reference/generated/numpy.ufunc.html#numpy.ufunc"),
            ("numpy.cumsum", "py:function", "reference/generated/numpy.cumsum.html#numpy.cumsum"),
            ("numpy.add", "py:data", "reference/generated/numpy.add.html#numpy.add"),
            (
                "numpy.typing.NDArray",
                "py:data",
                "reference/typing.html#numpy.typing.NDArray",
            ),
            (
                "numpy.typing.DTypeLike",
                "py:data",
                "reference/typing.html#numpy.typing.DTypeLike",
            ),
        ],
    ),
    "numba": (
        "stable",
        [
            ("numba.jit", "py:function", "reference/jit-compilation.html#numba.jit"),
        ],
    ),
    "numba-cuda": (
        "stable",
        [
            ("numba.cuda.jit", "py:function", "reference/kernel.html#numba.cuda.jit"),
            (
                "numba.cuda.syncthreads",
                "py:function",
                "reference/kernel.html#numba.cuda.syncthreads",
            ),
            (
                "numba.cuda.local.array",
                "py:function",
                "reference/kernel.html#numba.cuda.local.array",
            ),
            (
                "numba.cuda.shared.array",
                "py:function",
                "reference/kernel.html#numba.cuda.shared.array",
            ),
            ("numba.cuda.threadIdx", "py:attribute", "reference/kernel.html#numba.cuda.threadIdx"),
            ("numba.cuda.blockIdx", "py:attribute", "reference/kernel.html#numba.cuda.blockIdx"),
        ],
    ),
}


def render(project: str) -> bytes:
    """The bytes of *project*'s inventory file."""
    version, entries = INVENTORIES[project]
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {project}\n"
        f"# Version: {version}\n"
        "# The remainder of this file is compressed using zlib.\n"
    ).encode()
    body = "".join(f"{name} {role} 1 {uri} -\n" for name, role, uri in sorted(entries)).encode()
    return header + zlib.compress(body, 9)


def path_for(project: str) -> Path:
    """Where *project*'s inventory file lives."""
    return HERE / f"{project}.inv"


def main() -> int:
    for project in INVENTORIES:
        path_for(project).write_bytes(render(project))
        print(path_for(project))
    return 0


if __name__ == "__main__":
    sys.exit(main())
