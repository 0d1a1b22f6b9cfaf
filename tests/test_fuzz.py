"""Fuzzing (fuzz/, docs/testing.md "Fuzzing"): the regressions the fuzzers found, and short runs
of the atheris harnesses (codec, command handlers, link) and of random and mutated frames
against the real firmware on a virtual shoe. Every invariant counter must be 0."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUZZ = os.path.join(ROOT, "fuzz")
if FUZZ not in sys.path:
    sys.path.insert(0, FUZZ)

import fuzzlib  # noqa: E402
import wire as W  # noqa: E402
from hal.flashdev import PowerCut  # noqa: E402


def command(dev, seq, name, *args):
    reply = dev.run(seq, W.encode_command(name, list(args)))
    return W.decode_reply(reply, W.COMMAND_REPLY[W.command_id(name)])


# --- regressions --------------------------------------------------------------------------------
def test_power_cut_between_a_hands_record_and_its_first_commit():
    """Found by fuzz_device: the power went after the HAND record of a new hand and before its
    first COMMIT; every boot after it raised TypeError in Device() (no counter image yet), so
    the shoe never came back."""
    dev = fuzzlib.new_device()
    assert command(dev, 1, "config", "holdem", 0b1110, 3, "tda2024", "")[0] == W.OK
    assert command(dev, 2, "sim_fault", "power_cut", 2, 0, 0)[0] == W.OK
    with pytest.raises(PowerCut):
        command(dev, 3, "hand", 0)
    assert dev.journal.hand is not None and dev.journal.hand.image is None
    after = fuzzlib.new_device(dev.journal.dev)  # power back on
    assert after.hand is not None and after.hand_no == 1
    assert command(after, 4, "deal", 0)[0] == W.OK
    assert command(after, 5, "street")[0] == W.OK
    assert fuzzlib.new_device(after.journal.dev).journal.verify() == []
