# SPDX-License-Identifier: Apache-2.0
"""Sphinx configuration for the statefn-scan documentation.

Build with ``python tools/build_docs.py`` (``sphinx -W --keep-going -b html``):
every warning is an error, so a broken cross-reference, a docstring that does
not parse or an example file that moved fails the build.

Pages are Markdown (MyST). The API reference is generated from the docstrings
(autodoc + napoleon, numpydoc style). Examples are not copied into the pages:
they are included from ``tests/doc_examples/`` between ``magictoken`` markers,
so every example shown is a test that CI runs.

Intersphinx and the network
---------------------------
CI and the build machines reach no documentation site, and an inventory that
cannot be fetched is a warning (an error under ``-W``). So by default the
inventories are read from small files in ``_inventories/``, written by
``_inventories/make_inventories.py`` from the list of foreign names these pages
link to (numpy, numba, numba-cuda); links still point to the real sites. Set
``STATEFN_DOCS_ONLINE=1`` to fetch the full inventories instead.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# autodoc imports the packages from the checkout (an installed copy works too)
sys.path.insert(0, str(ROOT))

project = "statefn-scan"
author = "statefn-scan contributors"
copyright = "statefn-scan contributors"
release = "0.1.0"
version = "0.1"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.intersphinx",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_inventories", "Thumbs.db", ".DS_Store"]
templates_path: list[str] = []
html_static_path = ["_static"]
html_theme = "alabaster"
html_theme_options = {
    "description": "Typed stateful prefix callbacks for CUB block scans in numba-cuda",
    "fixed_sidebar": True,
}
html_title = "statefn-scan"

# ---------------------------------------------------------------- MyST
myst_enable_extensions = ["colon_fence", "deflist"]
# `[text](page.md#a-heading)` links resolve to section anchors
myst_heading_anchors = 3

# ---------------------------------------------------------------- autodoc
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True
autodoc_class_signature = "separated"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False

# ---------------------------------------------------------------- intersphinx
_SITES = {
    "numpy": "https://numpy.org/doc/stable/",
    "numba": "https://numba.readthedocs.io/en/stable/",
    "numba-cuda": "https://nvidia.github.io/numba-cuda/",
}
_ONLINE = os.environ.get("STATEFN_DOCS_ONLINE", "") not in ("", "0")
intersphinx_mapping = {
    name: (url, None if _ONLINE else str(DOCS / "_inventories" / f"{name}.inv"))
    for name, url in _SITES.items()
}
intersphinx_timeout = 10
