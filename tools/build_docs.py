# SPDX-License-Identifier: Apache-2.0
"""Build the documentation site with every warning treated as an error.

Usage::

    python tools/build_docs.py [--out DIR] [--keep]

Runs ``python -m sphinx -W --keep-going -b html docs DIR/html`` (doctrees in
``DIR/doctrees``) and exits with Sphinx's status: nonzero when any warning was
emitted. Without ``--out`` the site goes to a temporary folder that is deleted
afterwards unless ``--keep`` is given (its path is printed).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build(out: Path, *, quiet: bool = False) -> subprocess.CompletedProcess[str]:
    """Run Sphinx on ``docs/`` into ``out/html``; return the finished process."""
    argv = [
        sys.executable,
        "-m",
        "sphinx",
        "-W",
        "--keep-going",
        "-b",
        "html",
        "-d",
        str(out / "doctrees"),
        *(["-q"] if quiet else []),
        str(ROOT / "docs"),
        str(out / "html"),
    ]
    return subprocess.run(argv, cwd=ROOT, text=True, capture_output=True, check=False)


def main(argv: list[str] | None = None) -> int:
    """Build the site; returns Sphinx's exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: temp)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary output folder")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="statefn-scan-docs-"))
    t0 = time.perf_counter()
    try:
        proc = build(out)
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
        took = time.perf_counter() - t0
        status = "ok" if proc.returncode == 0 else f"FAILED (rc={proc.returncode})"
        print(f"docs build {status} in {took:.1f}s: {out / 'html' / 'index.html'}")
        return proc.returncode
    finally:
        if args.out is None and not args.keep:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
