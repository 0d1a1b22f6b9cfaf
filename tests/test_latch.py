"""A fault that latches safe (issue 15, SPEC.md 6.6; Klipper's shutdown, 25 CFR 547.10): an
unexpected exception in a handler that changes the hand, a journal write that fails, or the
engine's conservation invariant violated. The shoe commits what the table saw, latches (in its
store: a power cycle does not clear it), refuses every dealing command, still answers identify,
status, history, audit, telemetry, end and misdeal, and only the floor clears it by ending the
hand (audited). Each kind injected in-process and through the virtual shoe."""

import json

import pytest

from test_device_faults import Shoe, table  # (puts protocol/ on the path, as its tests do)

import wire
from device import Device
from shoe.zones import OP_FAULT, OP_MOVE
from shoe import faults as F
from sessions import InProcess

# (kind, the latch's cause, the cards the deal put out before it latched: a journal write that
# fails before a card moves stops the card, no card leaves that the flash does not know)
KINDS = (("internal", "internal fault: RuntimeError", 6),
         ("journal_fail", "journal write failed: OSError", 0),
         ("invariant", "engine invariant: 51 cards tracked of the deck's 52 after deal", 6))
IDS = [k[0] for k in KINDS]


class _Calls:
    """read_chunks' client over the in-process shoe."""

    def __init__(self, s):
        self.call = s.ok


def chunks(s, name, *head):
    from facedown.commands import read_chunks

    return read_chunks(_Calls(s), name, *head).decode()


def arm(s, kind):
    s.ok("sim_fault", kind, 1, 0, 0)


def table_session(s):
    """The dealer's console: a table session on the same device."""
    s.host = InProcess(s.dev, wire, s.hal.key, "table")


def floor_session(s):
    s.host = InProcess(s.dev, wire, s.hal.key, "maintenance")


def power_cycle(s):
    """The same flash and store, a new Device (as after the power came back)."""
    s.dev = Device(s.hal)
    floor_session(s)


@pytest.mark.parametrize("kind,why,dealt", KINDS, ids=IDS)
def test_each_kind_latches_and_only_the_floor_clears_it(kind, why, dealt):
    s = Shoe()
    table(s)
    arm(s, kind)
    table_session(s)
    code, message = s.call("deal", 0)
    assert code == wire.FAULT, message
    assert message.startswith("fault latched (" + why), message
    assert s.dev.latched.startswith(why)
    st = s.status()
    assert st["latched"].startswith(why)
    # what the table saw stays: the deal's cards are at the seats, and a latch event follows
    assert sum(len(v) for v in st["table"]["seats"].values()) == dealt
    assert st["table"]["faults"][-1] == F.LATCHED
    ev = s.events()
    assert ev[-1][0] == OP_FAULT and ev[-1][1] == F.LATCHED_CODE
    assert s.dev.indication() == "attention"
    # every dealing command refused, and the hand unchanged by the refusals
    log = bytes(s.dev.hand.z.log)
    for name, args in (("street", ()), ("action", (1, 1)), ("report", (1, 1, 0)),
                       ("report", (2, 0, 0)), ("hand", (0,)), ("deal", (0,))):
        code, message = s.call(name, *args)
        assert code == wire.FAULT and message.startswith("fault latched"), (name, message)
    assert bytes(s.dev.hand.z.log) == log
    # still answered: status (above), ping, telemetry, history (and, below, audit); identify
    # is the link's own (tests/test_latch.py's virtual-shoe test goes through it)
    assert s.call("ping", 7) == (wire.OK, [7])
    assert json.loads(chunks(s, "telemetry"))["latched"].startswith(why)
    # the dealer cannot end it; the floor can
    code, message = s.call("end")
    assert code == wire.DENIED and "only the floor ends this hand" in message
    # a power cycle does not clear it
    power_cycle(s)
    assert s.dev.latched.startswith(why)
    assert s.call("history", 0, 0)[0] == wire.OK
    assert s.call("street")[0] == wire.FAULT
    code, message = s.call("config", "holdem", 0b1110, 3, "tda2024", "")
    assert code == wire.FAULT and message.startswith("fault latched"), message
    s.ok("end")
    assert s.dev.latched is None and s.status()["latched"] is None
    doc = chunks(s, "audit", 1)
    assert "fault latched" in doc and "fault cleared" in doc
    # dealing goes on with the next hand
    s.ok("hand", 0)
    s.ok("deal", 0)


def test_a_failed_journal_write_is_written_by_the_next_commit():
    """The write that failed held a card's move the table saw; the next commit that succeeds
    writes it, so after the power comes back the journal holds the hand as the table saw it."""
    s = Shoe()
    table(s)
    s.ok("sim_fault", "journal_fail", 3, 0, 0)  # the third record: after some cards moved
    assert s.call("deal", 0)[0] == wire.FAULT
    seen = sum(len(v) for v in s.status()["table"]["seats"].values())
    assert 0 < seen < 6
    # the command's own commit (after its FAULT) wrote what the failed write held
    assert bytes(s.dev.journal.hand.entries) == bytes(s.dev.hand.z.log)
    s.ok("end")
    log = bytes(s.dev.hand.z.log)
    power_cycle(s)
    entries = bytes(s.dev.journal.last.entries)
    assert entries == log
    moves = [entries[i:i + 4] for i in range(0, len(entries), 4)]
    assert sum(1 for e in moves if e[0] == OP_MOVE) == seen
    assert any(e[0] == OP_FAULT and e[1] == F.LATCHED_CODE for e in moves)


def test_misdeal_by_the_floor_clears_it_and_a_table_misdeal_does_not():
    s = Shoe()
    table(s)
    arm(s, "internal")
    assert s.call("deal", 0)[0] == wire.FAULT
    table_session(s)
    assert s.call("report", 3, 0, 0)[0] == wire.DENIED
    floor_session(s)
    s.ok("report", 3, 0, 0)
    assert s.dev.latched is None and s.status()["table"]["status"] == "misdeal"


def test_the_panel_refuses_while_latched_and_its_floor_key_misdeal_clears_it():
    import panel

    s = Shoe()
    table(s)
    arm(s, "internal")
    assert s.call("deal", 0)[0] == wire.FAULT
    code, message = panel.press(s.dev, "burn")
    assert code == wire.FAULT and message.startswith("fault latched")
    assert panel.press(s.dev, "misdeal", floor_key=False)[0] == wire.DENIED
    assert panel.press(s.dev, "misdeal", floor_key=True) == (wire.OK, "")
    assert s.dev.latched is None
    assert "panel+floor" in chunks(s, "audit", 1)


def test_with_no_hand_in_progress_end_clears_it():
    s = Shoe()
    table(s)
    s.ok("deal", 0)
    s.ok("end")
    s.dev._latch("engine invariant: test")
    assert s.call("hand", 0)[0] == wire.FAULT
    s.ok("end")
    assert s.dev.latched is None
    s.ok("hand", 0)


def test_a_read_only_command_s_fault_does_not_latch():
    s = Shoe()
    table(s)

    def broken(offset):
        raise ValueError("a bug in telemetry")

    s.dev.cmd_telemetry = broken  # (the device finds a handler as cmd_<name> first)
    code, message = s.call("telemetry", 0)
    assert code == wire.FAULT and message == "internal fault: ValueError('a bug in telemetry')"
    assert s.dev.latched is None
    s.ok("deal", 0)


def test_sim_fault_latching_kinds_are_checked():
    s = Shoe()
    table(s)
    for kind in ("internal", "journal_fail"):
        code, message = s.call("sim_fault", kind, 0, 0, 0)
        assert code == wire.BAD_ARGUMENT and "at must be 1 or more" in message
    assert s.dev.latched is None


def test_through_the_virtual_shoe_and_the_cli(tmp_path):
    """Each kind through the real protocol on the virtual shoe (the firmware on MicroPython):
    the dealer's console gets one line naming the fault and what to do; the latch survives a
    power cycle; the floor's end clears it."""
    from facedown.client import ShoeError
    from facedown.virtualshoe import VirtualShoe

    with VirtualShoe() as shoe:
        shoe.start(ready_line="ready", timeout=20)
        for kind, why, _dealt in KINDS:
            c = shoe.connect(timeout=30)
            try:
                c.call("config", "holdem", 0b1110, 3, "tda2024", "")
                c.call("hand", 0)
                c.call("sim_fault", kind, 1, 0, 0)
                with pytest.raises(ShoeError) as info:
                    c.call("deal", 0)
                err = info.value
                assert err.code == wire.FAULT and why in err.message, err.message
                assert "login --role maintenance" in err.hint and "end" in err.hint
                assert c.status()["latched"].startswith(why)
            finally:
                c.close()
            shoe.restart(ready_line="ready", timeout=20)
            c = shoe.connect(timeout=30)
            try:
                st = c.status()
                assert st["latched"].startswith(why), st
                with pytest.raises(ShoeError) as info:
                    c.call("street")
                assert info.value.code == wire.FAULT
                c.call("end")
                assert c.status()["latched"] is None
                from facedown.commands import read_chunks

                assert json.loads(read_chunks(c, "telemetry").decode())["latched"] is None
            finally:
                c.close()


def _records(mem, block, start=0):
    """(offset, type) of each record in a block of a RamFlash's memory, from start."""
    from hal.flashdev import BLOCK

    out, off = [], start
    base = block * BLOCK
    while off + 4 <= BLOCK and mem[base + off] != 0xFF:
        out.append((off, mem[base + off]))
        off += 4 + mem[base + off + 1]
    return out


def test_a_damaged_record_in_the_open_hand_is_stepped_over_and_latches_at_boot():
    """One damaged record of the open hand (a bit flipped in the flash): the boot rebuilds the
    hand from the records that verify, the ones after the damaged record included (not the
    rest of its block dropped), and latches with a line naming the record; the floor's end
    clears it."""
    from hal.flashdev import BLOCK
    from journal import R_COMMIT

    s = Shoe()
    table(s, seats=(1, 2, 3), button=3)
    for _ in range(6):
        s.ok("deal", 1)
    seats = {k: list(v) for k, v in s.status()["table"]["seats"].items()}
    j = s.dev.journal
    block = j.block
    hand_seq, hand_off = j.hand_loc
    assert hand_seq == j.seq, "the open hand begins in the head block"
    mem = s.hal.flash.mem
    # the commits that moved a card (a commit before each feed moves none)
    moving = [off for off, t in _records(mem, block, hand_off)
              if t == R_COMMIT and mem[block * BLOCK + off + 2]]
    assert len(moving) == 6, moving
    victim = moving[1]  # an early one: four more follow it in its block
    mem[block * BLOCK + victim + 3] ^= 0x24  # a payload byte: its CRC fails
    power_cycle(s)
    j = s.dev.journal
    assert j.hand is not None and j.hand.damaged == (block, victim)
    e = j.hand.entries
    moves = sum(1 for i in range(0, len(e), 4) if e[i] == OP_MOVE)
    assert moves == 5, "the damaged record's move alone is gone, not the four after it"
    why = "journal: a damaged record in block %d at offset %d of hand 1" % (block, victim)
    assert s.dev.latched.startswith(why), s.dev.latched
    st = s.status()
    assert st["latched"].startswith(why) and st["table"]["faults"][-1] == F.LATCHED
    # the cards the later records moved are where the table saw them: all but one
    after = {k: list(v) for k, v in st["table"]["seats"].items()}
    assert sum(map(len, after.values())) == 5 and \
        sum(c in seats[k] for k in after for c in after[k]) == 5, (seats, after)
    table_session(s)
    assert s.call("deal", 0)[0] == wire.FAULT
    assert s.call("end")[0] == wire.DENIED
    floor_session(s)
    s.ok("end")
    assert s.dev.latched is None
    s.ok("hand", 0)
    s.ok("deal", 0)
    power_cycle(s)  # the damage belongs to a closed hand now: no latch at the next boot
    assert s.dev.latched is None
