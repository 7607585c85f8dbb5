# SPDX-License-Identifier: Apache-2.0
"""The host C++ compiler, and harness builds: cached by content hash, in parallel.

The compiler is the first of these that runs: ``$HOSTEXEC_CXX``, ``$CXX``,
``g++``, ``clang++``, ``c++`` (looked up on ``PATH``); it must compile C++17
with ``<ucontext.h>`` (Linux and other POSIX systems). :func:`find_compiler`
returns None, with the reason in :data:`MISSING`, where none does: the host
execution tests then skip with that reason.

Every harness is one translation unit (the generated providers, the
callbacks, the kernel driver) linked with the runtime (``src/runtime.cpp``,
compiled once). A build's key is the SHA-256 of the compiler's identity, its
flags, the shim headers and the harness source, so equal harnesses build once
per cache folder: ``$HOSTEXEC_CACHE`` when set (kept between runs), else a
temporary folder for the test session. Builds run in a thread pool of as
many workers as the machine has cores (each build is one compiler process).
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "CACHE_ENV",
    "COMPILER_ENV",
    "HERE",
    "INCLUDE",
    "Builder",
    "Compiler",
    "HostBuildError",
    "find_compiler",
    "missing_reason",
]

HERE = Path(__file__).resolve().parent
INCLUDE = HERE / "include"
RUNTIME = HERE / "src" / "runtime.cpp"
COMPILER_ENV = "HOSTEXEC_CXX"
CACHE_ENV = "HOSTEXEC_CACHE"


@functools.cache
def toolkit_include() -> Path:
    """The CUDA toolkit's include folder: ``__half`` and ``__nv_bfloat16`` (``cuda_fp16.h``,
    ``cuda_bf16.h``) compile on the host from there, with host arithmetic of their own.

    The folder the library hands NVRTC for them (:func:`scan._compile.include_dirs`);
    the shim's ``cub/`` stays first on the include path (the folder is searched
    after it, with ``-idirafter``).
    """
    from scan._compile import include_dirs

    for folder in include_dirs():
        if (Path(folder) / "cuda_fp16.h").is_file() and (Path(folder) / "cuda_bf16.h").is_file():
            return Path(folder)
    raise HostBuildError(
        f"no cuda_fp16.h and cuda_bf16.h in the include folders {include_dirs()}: "
        "install the toolkit's headers (numba-cuda[cu13] brings them)"
    )


#: -fwrapv: signed overflow wraps, as the GPU's integer arithmetic does;
#: -ftrivial-auto-var-init=pattern: an uninitialised local reads as a pattern,
#: not as whatever the stack held (added where the compiler has it).
BASE_FLAGS = ("-std=c++17", "-O1", "-fwrapv", "-g0", "-Wno-unknown-pragmas")
PATTERN_INIT = "-ftrivial-auto-var-init=pattern"


class HostBuildError(RuntimeError):
    """A harness did not compile or link (the compiler's output is the message)."""


@dataclass(frozen=True)
class Compiler:
    """A host C++ compiler that builds harnesses."""

    path: str
    version: str
    flags: tuple[str, ...]

    @property
    def identity(self) -> str:
        """What a build's key depends on."""
        return f"{self.path}\n{self.version}\n{' '.join(self.flags)}"


_found: list[Compiler | None] = []
_why: list[str] = []


def _candidates() -> list[str]:
    names = [os.environ.get(COMPILER_ENV, ""), os.environ.get("CXX", ""), "g++", "clang++", "c++"]
    out: list[str] = []
    for name in names:
        path = shutil.which(name) if name else None
        if path and path not in out:
            out.append(path)
    return out


def _probe(path: str) -> Compiler | str:
    """A working compiler at `path`, or why it is not one."""
    try:
        version = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=60, check=True
        ).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError) as exc:
        return f"{path}: --version failed ({type(exc).__name__})"
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.cpp"
        probe.write_text(
            "#include <ucontext.h>\n#include <type_traits>\n"
            "int main() { ucontext_t c; return getcontext(&c) + "
            "static_cast<int>(std::is_trivial_v<int> ? 0 : 1); }\n",
            encoding="utf-8",
        )
        flags = list(BASE_FLAGS)
        for extra in ([PATTERN_INIT], []):
            argv = [path, *flags, *extra, str(probe), "-o", str(Path(tmp) / "probe")]
            done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
            if done.returncode == 0:
                return Compiler(path, version, (*flags, *extra))
        return f"{path} ({version}) cannot build C++17 with <ucontext.h>: {done.stderr[-300:]}"


def find_compiler() -> Compiler | None:
    """The host compiler harnesses build with (probed once), or None."""
    if not _found:
        reasons = []
        for path in _candidates():
            probed = _probe(path)
            if isinstance(probed, Compiler):
                _found.append(probed)
                break
            reasons.append(probed)
        else:
            _found.append(None)
            _why.append(
                "no host C++ compiler: set HOSTEXEC_CXX (or CXX) to one, or put g++ or "
                "clang++ on PATH" + (f" (tried: {'; '.join(reasons)})" if reasons else "")
            )
    return _found[0]


def missing_reason() -> str:
    """Why :func:`find_compiler` found none."""
    find_compiler()
    return _why[0] if _why else ""


def _headers_digest() -> str:
    h = hashlib.sha256()
    for path in sorted(INCLUDE.rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(INCLUDE)).encode())
            h.update(path.read_bytes())
    h.update(RUNTIME.read_bytes())
    return h.hexdigest()


@dataclass
class Builder:
    """Builds harness executables from their C++ source, each once (by content hash).

    Attributes
    ----------
    compiler : Compiler
    folder : Path
        The cache folder (one subfolder a build).
    temporary : bool
        Whether :meth:`close` removes the folder.
    """

    compiler: Compiler
    folder: Path
    temporary: bool = False
    _pool: concurrent.futures.ThreadPoolExecutor = field(init=False)
    _futures: dict[str, concurrent.futures.Future[Path]] = field(init=False, default_factory=dict)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    _headers: str = field(init=False, default="")
    _runtime: Path | None = field(init=False, default=None)
    _runtime_lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
        self._headers = _headers_digest() + str(toolkit_include())

    @classmethod
    def create(cls, compiler: Compiler) -> Builder:
        """A builder caching in ``$HOSTEXEC_CACHE``, or in a fresh temporary folder."""
        cache = os.environ.get(CACHE_ENV)
        if cache:
            return cls(compiler, Path(cache))
        return cls(compiler, Path(tempfile.mkdtemp(prefix="hostexec-")), temporary=True)

    def close(self) -> None:
        """Wait for the builds under way; remove the folder if it is a temporary one."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self.temporary:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _key(self, *parts: str) -> str:
        h = hashlib.sha256()
        for part in (self.compiler.identity, self._headers, *parts):
            h.update(part.encode())
            h.update(b"\0")
        return h.hexdigest()[:24]

    def _run(self, argv: list[str], what: str) -> None:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise HostBuildError(f"{what}: {' '.join(argv)}\n{done.stdout}{done.stderr}")

    def _build_runtime(self) -> Path:
        out = self.folder / f"runtime-{self._key('runtime')}.o"
        if not out.exists():
            tmp = out.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            self._run(
                [
                    self.compiler.path,
                    *self.compiler.flags,
                    f"-I{INCLUDE}",
                    f"-idirafter{toolkit_include()}",
                    "-c",
                    str(RUNTIME),
                    "-o",
                    str(tmp),
                ],
                "the host runtime",
            )
            tmp.replace(out)
        return out

    def runtime(self) -> Path:
        """The compiled runtime object (built once, by the first build that needs it).

        Built in the calling thread, under a lock of its own: the builds that
        wait for it hold every worker of the pool.
        """
        with self._runtime_lock:
            if self._runtime is None:
                self._runtime = self._build_runtime()
            return self._runtime

    def _build(self, key: str, source: str, name: str) -> Path:
        folder = self.folder / key
        exe = folder / "harness"
        if exe.exists():
            return exe
        folder.mkdir(parents=True, exist_ok=True)
        cpp = folder / "harness.cpp"
        cpp.write_text(source, encoding="utf-8")
        runtime = self.runtime()
        tmp = folder / f"harness.{os.getpid()}.{threading.get_ident()}.tmp"
        self._run(
            [
                self.compiler.path,
                *self.compiler.flags,
                f"-I{INCLUDE}",
                f"-idirafter{toolkit_include()}",
                "-include",
                "hostexec/cuda.h",
                str(cpp),
                str(runtime),
                "-o",
                str(tmp),
            ],
            f"harness {name} ({cpp})",
        )
        tmp.replace(exe)
        return exe

    def submit(self, source: str, name: str = "") -> concurrent.futures.Future[Path]:
        """Start building `source` (or find its build); the future gives the executable."""
        key = self._key(source)
        with self._lock:
            future = self._futures.get(key)
            if future is None:
                future = self._futures[key] = self._pool.submit(self._build, key, source, name)
        return future

    def build(self, source: str, name: str = "") -> Path:
        """The executable of `source`, built (or found) now."""
        return self.submit(source, name).result()
