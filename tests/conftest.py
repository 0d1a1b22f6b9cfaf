"""Shared test set-up: the firmware's pure-logic core is importable as on the device."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRMWARE = os.path.join(ROOT, "firmware")
SCENARIOS = os.path.join(ROOT, "tests", "scenarios")

if FIRMWARE not in sys.path:
    sys.path.insert(0, FIRMWARE)


@pytest.fixture(scope="module")
def virtual_shoe():
    """A virtual shoe (the firmware under the MicroPython unix port) for a test module."""
    from facedown.virtualshoe import VirtualShoe

    with VirtualShoe() as s:
        s.start(ready_line="ready", timeout=20)
        yield s
