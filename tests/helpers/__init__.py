# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the test suites."""
