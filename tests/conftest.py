"""Shared test set-up: the firmware's pure-logic core is importable as on the device."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRMWARE = os.path.join(ROOT, "firmware")
SCENARIOS = os.path.join(ROOT, "tests", "scenarios")

if FIRMWARE not in sys.path:
    sys.path.insert(0, FIRMWARE)
