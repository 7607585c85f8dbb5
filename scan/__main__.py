# SPDX-License-Identifier: Apache-2.0
"""``python -m scan``: see :mod:`scan._cli`."""

from scan._cli import main

raise SystemExit(main())
