# SPDX-License-Identifier: Apache-2.0
"""The compiled half of the parity corpus (tests/helpers/callback_corpus.py), for cc 9.0.

Accepted callbacks compile and link-ready LTO-IR comes out; refused ones are
refused with the exception and words the simulator uses
(tests/sim/test_sim_contract.py runs the same corpus there).
"""

from __future__ import annotations

import pytest
from helpers import callback_corpus as corpus
from helpers.kernels import CC
from numba import cuda
from numba.cuda import types

SIGNATURE = types.void(types.int32[::1], types.int64[::1])


def _compile(kernel):
    return cuda.compile_all(kernel, SIGNATURE, device=False, abi="numba", output="ltoir", cc=CC)


@pytest.mark.parametrize("name", sorted(corpus.ACCEPTED))
def test_accepted_callbacks_compile(name):
    codes, _ = _compile(corpus.ACCEPTED[name][0])
    assert len(codes) >= 2  # the kernel and the provider (and the callback's LTO-IR)


@pytest.mark.parametrize("name", sorted(corpus.REFUSED))
def test_refused_callbacks_are_refused_compiled(name):
    kernel, kind, text = corpus.REFUSED[name]
    with pytest.raises(Exception) as info:
        _compile(kernel)
    assert kind in {cls.__name__ for cls in type(info.value).__mro__}
    assert text in str(info.value)
    if name == "python_object_callback":
        assert corpus.PYTHON_OBJECT_REASON in str(info.value)
