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


@pytest.mark.parametrize("code", [53, 63, 64 + 53, 255])
def test_a_discard_that_is_no_card_code_is_a_bad_argument(code):
    """Found by fuzz_device: draw with a discard code 53..63 (modulo 64) was answered FAULT
    "internal fault: IndexError" (the card's name was looked up for the error message)."""
    dev = fuzzlib.new_device()
    assert command(dev, 1, "config", "draw5", 0b110, 2, "tda2024", "")[0] == W.OK
    assert command(dev, 2, "hand", 0)[0] == W.OK
    assert command(dev, 3, "deal", 0)[0] == W.OK
    before = fuzzlib.observe(dev)
    code_, message = command(dev, 4, "draw", W.pack_discards([(1, [code])]))
    assert (code_, message) == (W.BAD_ARGUMENT, "unknown card code %d" % code)
    assert fuzzlib.observe(dev) == before
