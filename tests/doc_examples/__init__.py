# SPDX-License-Identifier: Apache-2.0
"""Tests that run every example the documentation shows (docs/ includes them from here)."""
