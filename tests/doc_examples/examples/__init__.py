# SPDX-License-Identifier: Apache-2.0
"""The documentation's examples.

Each module holds code that ``docs/*.md`` includes between
``# magictoken.<name>.begin`` and ``# magictoken.<name>.end`` markers; the
``test_*`` modules beside this package run it (in the CUDA simulator, or
compiled and linked for ``cc=(9, 0)`` without a GPU).
"""
