# SPDX-License-Identifier: Apache-2.0
"""Compute capabilities: checking them, spelling them, and asking the device for one.

Every module that needs an architecture name (NVRTC, nvJitLink, cache keys,
messages) spells it with :func:`arch`; the host-side question "which device is
this?" is answered once, here, through the driver API (no Numba), so it works
the same under every front end.
"""

from __future__ import annotations

from typing import TypeAlias

__all__ = ["CC", "arch", "check_cc", "device_cc"]

#: A compute capability, e.g. ``(9, 0)``.
CC: TypeAlias = tuple[int, int]


def check_cc(cc: object, *, what: str = "cc") -> CC:
    """Return `cc` as a ``(major, minor)`` tuple of ints, or raise :class:`TypeError`."""
    if (
        isinstance(cc, tuple | list)
        and len(cc) == 2
        and all(isinstance(part, int) and not isinstance(part, bool) for part in cc)
    ):
        return (int(cc[0]), int(cc[1]))
    raise TypeError(
        f"{what} must be a (major, minor) tuple of ints such as (9, 0); got {cc!r}. "
        "Pass the target's compute capability explicitly."
    )


def arch(cc: tuple[int, ...], suffix: str = "") -> str:
    """The architecture name of `cc`: ``sm_90`` for ``(9, 0)`` (``sm_90a`` with ``suffix="a"``)."""
    return f"sm_{cc[0]}{cc[1]}{suffix}"


def device_cc() -> CC | None:
    """Compute capability of device 0 through the driver API, or None without a GPU."""
    try:
        from cuda.bindings import driver

        (err,) = driver.cuInit(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            return None
        err, dev = driver.cuDeviceGet(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            return None
        attr = driver.CUdevice_attribute
        err, major = driver.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev
        )
        err2, minor = driver.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev
        )
        if err != driver.CUresult.CUDA_SUCCESS or err2 != driver.CUresult.CUDA_SUCCESS:
            return None
        return int(major), int(minor)
    except Exception:  # no driver, no device, or an old binding: all mean "no GPU"
        return None
