"""Fuzzing (fuzz/, docs/testing.md "Fuzzing"): the regressions the fuzzers found, and short runs
of the atheris harnesses (codec, command handlers, link) and of random and mutated frames
against the real firmware on a virtual shoe. Every invariant counter must be 0."""

import os
import sys

import pytest

import fuzzlib  # fuzz/fuzzlib.py (tests/conftest.py puts fuzz/ on the path)
import wire as W
from conftest import ROOT
from hal.flashdev import PowerCut

FUZZ = os.path.join(ROOT, "fuzz")


def command(dev, seq, name, *args):
    reply = dev.run(seq, W.encode_command(name, list(args)))
    return W.decode_reply(reply, W.COMMAND_REPLY[W.command_id(name)])


def cut_mid_deal():
    """A device whose power went while the deal fed a card (its flash and tray are what a
    reboot finds)."""
    dev = fuzzlib.new_device()
    assert command(dev, 1, "config", "holdem", 0b1110, 3, "tda2024", "")[0] == W.OK
    assert command(dev, 2, "hand", 0)[0] == W.OK
    assert command(dev, 3, "sim_fault", "power_cut", 3, 0, 0)[0] == W.OK
    with pytest.raises(PowerCut):
        command(dev, 4, "deal", 0)
    return dev


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


@pytest.mark.parametrize("doc", [b"", b"\x01\x00", bytes(71), bytes(72) + b"x",
                                 bytes(71) + b"\x08" + bytes(6) + b"[1, 2]",
                                 bytes(71) + b"\x0a" + bytes(6) + b'"holdem"',
                                 bytes(71) + b"\x08" + bytes(6) + b"\xff\xfe"])
def test_a_malformed_history_document_is_one_clear_error(doc):
    """Found by fuzz_codec: facedown.history.parse raised struct.error, IndexError, TypeError
    or UnicodeDecodeError (a traceback from `facedown history`) on a document a shoe sent."""
    from facedown import history
    from facedown.errors import UserError

    with pytest.raises(UserError, match="malformed hand history"):
        history.to_record(history.parse(doc))


def test_a_history_document_naming_an_unknown_game_is_one_clear_error():
    from facedown import history
    from facedown.errors import UserError

    head = bytes(6) + b'["canasta", [1, 2], 2, "tda2024", {}]'
    doc = bytes(71) + bytes([len(head)]) + head
    with pytest.raises(UserError, match="malformed hand history"):
        history.to_record(history.parse(doc))


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


@pytest.mark.parametrize("entry", [b"\x08\x07\x00\x00", b"\x05\x01\x09\x00", b"\x07\x09\x03\x00",
                                   b"\x04\xf0\x00\x00", b"\x06\x3c\x00\x00", b"\x0a\x00\x00\x00",
                                   b"\x01\x00\xff\x03", b"\x01\x05\x00\x07",
                                   b"\x01\x10\x00\x80"])
def test_an_event_the_shoe_cannot_send_is_a_stream_error(entry):
    """Found by fuzz_codec: the host's mirror of the event stream (watch, replay, history) took
    entries no shoe sends (status 7, action 9, a pick from zone 9, procedure 240, object 60, op 9,
    moves from or to no zone, a stub card turned up in the stub), then raised IndexError or
    KeyError."""
    from facedown.mirror import Mirror, StreamError

    m = Mirror("shortdeck", [1, 2, 3], 3, "tda2024")
    with pytest.raises(StreamError):
        m.apply(entry)
    m.record()


def test_a_hand_ending_with_no_procedure_seen_has_no_reason():
    """Found by fuzz_codec: a misdeal status event with no procedure before it (a stream taken
    up mid-hand, or a forged one) made the mirror look up procedure None (TypeError)."""
    from facedown.mirror import Mirror

    m = Mirror("holdem", [1, 2, 3], 3, "tda2024")
    m.apply(b"\x08\x02\x00\x00")
    assert m.record()["status"] == "misdeal" and m.reason is None


def test_decode_events_refuses_numbers_past_u32_as_encode_does():
    """Found by fuzz_codec: an EVENT body whose entries ran past event number 4294967295
    decoded (the host would have numbered events 2**32 and up), though encode_events refuses
    it and numbers never wrap (SPEC 6.2)."""
    body = (0xFFFFFFFF).to_bytes(4, "little") + b"\x01\x00" + bytes(8)
    with pytest.raises(W.WireError) as e:
        W.decode_events(body)
    assert e.value.code == W.BAD_FRAME
    assert W.decode_events(body[:10])[0] == 0xFFFFFFFF  # the last number alone is fine



def test_resume_from_the_first_event_holds_a_bounded_number_of_hands():
    """Found by shoe_frames on the real firmware: resume(1) (SPEC 6.2: "every held event")
    after 150 hands reloaded every hand the journal keeps into RAM, and the unix port's 256 KB
    heap ran out (FAULT internal fault: MemoryError); a Pico's is smaller. The device now
    reloads at most HELD_HANDS hands and says where it starts (first), as for events it no
    longer holds."""
    from device import HELD_HANDS

    dev = fuzzlib.new_device()
    seq = 1
    assert command(dev, seq, "config", "holdem", 0b1110, 3, "tda2024", "")[0] == W.OK
    for _ in range(3 * HELD_HANDS):
        for name, args in (("hand", [0]), ("deal", [0]), ("end", [])):
            seq += 1
            assert command(dev, seq, name, *args)[0] == W.OK
        seq += 1
        command(dev, seq, "resume", dev.event_next)  # the host has every event so far
    assert len(dev.held) <= 1
    seq += 1
    code, (first, nxt) = command(dev, seq, "resume", 1)
    assert code == W.OK and nxt == dev.event_next
    assert len(dev.held) == HELD_HANDS and first == dev.held[0][0] > 1
    hands = [h for h in dev.journal.hands()[0]]
    for first_event, number, entries in dev.held:  # the events as the journal keeps them
        stored = [h for h in hands if h["hand"] == number][0]
        assert stored["first_event"] <= first_event
        assert bytes(stored["entries"]).endswith(bytes(entries))


@pytest.mark.parametrize("pick", ["top", "other"])
def test_a_card_recovered_after_a_power_cut_never_shows_its_place_in_the_stub(pick):
    """Found by fuzz_device's twins: after a power cut caught a card in flight (sensors blind),
    the card the operator named with recover was compared with the top of the stub reshuffled at
    boot: "out-of-sequence" was logged or not by where that card lay in the undealt stub. The
    delivered card now comes as the stub's top card, whatever the order."""
    from shoe import procedures as P

    dev = cut_mid_deal()
    dev = fuzzlib.new_device(dev.journal.dev, blind=True)
    assert dev.recovery is not None
    stub = dev.hand.z.stub
    card = stub[-1] if pick == "top" else stub[0]
    assert command(dev, 5, "recover", card)[0] == W.OK
    assert command(dev, 6, "deal", 0)[0] == W.OK
    log = dev.hand.z.log
    procs = [P.pid(log[i + 1]) for i in range(0, len(log), 4) if log[i] == 4]
    assert "out-of-sequence" not in procs
    moved = [log[i + 1] for i in range(0, len(log), 4) if log[i] == 1 and log[i + 2] == 0]
    assert card in moved  # the recovered card was dealt, as the next card out


def test_a_refused_hand_leaves_a_card_caught_in_flight_waiting():
    """Found by the third 1,000,000-input run (fuzz_link): after a power cut caught a card in
    flight, a hand command refused for its stacked deck ("deck must hold each of the game's 52
    cards once") had already dropped the card the reader was to read first and the recovery
    state: a rejected command changed the shoe."""
    dev = cut_mid_deal()
    after = fuzzlib.new_device(dev.journal.dev, dev.mech.tray)  # the sensors see the card
    assert after.mech.delivered
    assert command(after, 5, "end")[0] == W.OK
    assert command(after, 6, "sim_deck", bytes(range(51)), 0, 0)[0] == W.OK  # 51 cards
    before = fuzzlib.observe(after)
    code, message = command(after, 7, "hand", 0)
    assert (code, message) == (W.BAD_ARGUMENT, "deck must hold each of the game's 52 cards once")
    assert fuzzlib.observe(after) == before


def test_history_0_serves_the_list_of_hands_without_a_copy_of_it():
    """Found by shoe_frames on the real firmware: past ~1,200 short hands and a power cut,
    history 0 answered FAULT MemoryError (2.4-3 KB, the size of the list) after every power
    cycle: it built the list in a growing bytearray beside the array of numbers. The document
    is the same, served from the array."""
    dev = fuzzlib.new_device()
    seq = 1
    assert command(dev, seq, "config", "holdem", 0b110, 2, "tda2024", "")[0] == W.OK
    for _ in range(5):
        for name, args in (("hand", [0]), ("deal", [0]), ("end", [])):
            seq += 1
            assert command(dev, seq, name, *args)[0] == W.OK
        seq += 1
        command(dev, seq, "resume", dev.event_next)  # the host has every event so far
    doc = b""
    while True:
        seq += 1
        code, (size, chunk) = command(dev, seq, "history", 0, len(doc))
        assert code == W.OK
        if not chunk:
            break
        doc += chunk
    assert size == len(doc) == 12 and doc == bytes([0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0])
    seq += 1
    assert command(dev, seq, "history", 0, 3) == (W.OK, [12, doc[3:]])


# --- short runs (the dedicated ones: make fuzz) -------------------------------------------------
def test_twins_resend_the_same_input_s_frame(tmp_path):
    """Found by the 1,000,000-input run after the panel (19 inputs, a harness false positive):
    the device harness resent an ACMD frame when (seq, body) repeated, and keyed twin B's on
    B's translated body, which names B's cards; the same input then named other cards (dealt
    since), so A got a resend (refused as a replay) and B a fresh frame (run). A resend is
    now one for both twins: keyed on the input."""
    import subprocess

    data = bytes.fromhex(
        "00010900180208747269706c6532375401080774646132303234027b7d000000022d08000303ffff0002"
        "040000100c0b646f75626c655f666565642c030000000e060c020300040804020a05080117000c0c0770"
        "656e64696e6700000000050603020118003b0d34000102030405060708090a0b0c0d0e0f141516171011"
        "121318191a1b1c2a1e1f2021222324282c3025292d31262a2e32272b2f01337100000000020a08000303"
        "ffff0002040000100c0b646f75626c655f666565642c030000000e060c020300040804020a0508011700"
        "0c0c0770656e64696e6700000000050603020118000109")
    path = os.path.join(str(tmp_path), "device-regression.bin")
    with open(path, "wb") as f:
        f.write(data)
    proc = subprocess.run([sys.executable, os.path.join(FUZZ, "run.py"), "--replay", path],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "no finding" in proc.stdout, proc.stdout + proc.stderr


# on one xdist worker, one after the other: tests that load both cores themselves (fuzz/run.py
# has a process per core; test_shoe_wire.py's lossy line three shoes whose clients wait out
# what the line lost) never overlap (docs/testing.md "Running the suite")
@pytest.mark.slow
@pytest.mark.xdist_group("both_cores")
def test_atheris_harnesses_short_run(tmp_path):
    """12,000 inputs over the codec, command-handler and link harnesses (atheris, seeded from
    valid frames): every invariant counter 0, every harness process ends normally."""
    import json
    import subprocess

    proc = subprocess.run([sys.executable, os.path.join(FUZZ, "run.py"), "--inputs", "12000",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    with open(tmp_path / "report.json") as f:
        rep = json.load(f)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert rep["inputs"] >= 12000 and rep["abnormal_exits"] == 0
    assert {k: v for k, v in rep["invariants"].items() if v} == {}, proc.stdout
    assert set(rep["targets"]) == {"codec", "device", "link"}
    device = rep["targets"]["device"]["extra"]
    for deep in ("ok:hand", "ok:deal", "ok:street", "ok:draw", "ok:report", "power_cuts",
                 "panel:deal", "panel:burn", "panel:refused"):
        assert device.get(deep), (deep, device)  # the state machine got past its first steps


@pytest.mark.slow
def test_frames_against_the_virtual_shoe_short_run():
    """1,500 random and mutated frames through the real firmware (MicroPython unix port)."""
    import shoe_frames

    rep = shoe_frames.run(1500, 60, seed=7)
    assert {k: v for k, v in rep["invariants"].items() if v} == {}, rep["findings"]
    assert rep["frames"] == 1500 and rep["extra"]["checked_batches"] >= 1
    assert rep["extra"]["rejected"] > 100 and rep["extra"]["accepted"] > 100


def test_a_fault_event_for_no_zone_is_a_stream_error():
    """Found by fuzz_codec once fault events existed: a fault entry whose destination is no
    zone of the table crashed the host's record (IndexError) instead of a StreamError."""
    from facedown.mirror import Mirror, StreamError

    m = Mirror("holdem", [1, 2, 3], 3, "tda2024")
    m.apply(bytes((9, 1, 255, 0)))  # a jam, no card in flight: fine
    with pytest.raises(StreamError):
        m.apply(bytes((9, 1, 7, 0)))


MP_FRAGMENTED_HISTORY = r'''
import gc
import sys
sys.path.insert(0, sys.argv[1])
sys.path.append(sys.argv[3])  # protocol/: crc.py, at the image's root on a shoe
from hal.flashdev import FileFlash
from journal import Journal, JOURNAL_BLOCKS

j = Journal(FileFlash(sys.argv[2], JOURNAL_BLOCKS))  # the virtual shoe's flash chip
n = 0
while j.hand_no < 1400:  # short hands, as the frames fuzzer made them: the ring wraps
    j.begin_hand(j.hand_no % 0xFFFF + 1, '["holdem", [1, 2], 2, "tda2024", {}]')
    j.commit(bytes(8), [])
    j.close_hand()
# the code that reads the journal back is loaded before the heap is cut up, as journal.py is:
# on a shoe it comes with the history command (history.py, then journalread.py, each imported
# for the call and needing its bytecode's blocks as any import does); what this checks is the
# walk's own allocations (journal._reading finds it imported and lets it go after the scan)
import journalread  # noqa: F401
gc.collect()
# the heap cut into 512-byte holes (a long session, a power cut): nothing bigger is free
keep = []
try:
    while True:
        keep.append(bytearray(480))
except MemoryError:
    keep.pop()  # (room for the loop below)
    keep.pop()
for i in range(0, len(keep), 2):
    keep[i] = None
gc.collect()
numbers, problems = j.scan(0)
first, last = numbers[0], numbers[len(numbers) - 1]
print("OK", len(numbers), first, last, len(problems))
'''


def test_history_0_needs_no_big_block_of_the_heap(tmp_path):
    """Found by the 100,000-frame run after the panel (13 checks): with ~1,400 short hands in
    the journal, history 0 answered FAULT MemoryError (4,096 and ~2,500 bytes: the journal
    walk's list of its 304 blocks and the growing array of hand numbers) once the heap was cut
    up. The walk now takes the blocks from the array it keeps, and the numbers are kept as runs:
    under MicroPython, with no free block above 512 bytes, it lists every stored hand."""
    import subprocess

    from conftest import FIRMWARE, PROTOCOL

    script = tmp_path / "mp_history.py"
    script.write_text(MP_FRAGMENTED_HISTORY)
    mp = os.path.join(os.path.dirname(sys.executable), "micropython")
    proc = subprocess.run([mp, "-X", "heapsize=320K", str(script), FIRMWARE,
                           str(tmp_path / "flash.bin"), PROTOCOL],
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout.split()
    assert proc.returncode == 0 and out[:1] == ["OK"], proc.stdout[-500:] + proc.stderr[-800:]
    count, first, last, problems = (int(x) for x in out[1:5])
    assert last == 1400 and count == last - first + 1 and count > 500 and problems == 0
