"""The device (firmware/device.py) meets stopping faults, under CPython on the simulated mechanism
and a RAM journal: the command answers MECHANISM with the kind and the operator's instructions,
the fault is a numbered event in the hand (journalled with the reply), status shows it until a
card comes out, a retry of the same frame gets the cached reply, the repeated command finishes
the step; a failing random source (shoe.health.EntropyFault) stops dealing until a restart and
leaves the hand to be ended, across a restart too."""

import json
import tempfile

import wire
from device import Device
from hal.flashdev import RamFlash
from hal.simmech import UNTIL_CLEARED
from shoe import faults as F
from shoe.health import EntropyFault
from shoe.rng import SeededRandom
from shoe.zones import OP_FAULT, OP_MOVE
from pyhal import PyHal
from sessions import InProcess, provision


class Hal(PyHal):
    """The simulator's HAL interface, in this process: the simulated mechanism, a RAM flash, seeded hands; a
    provisioned shoe (its files in a folder of its own)."""

    def __init__(self, flash=None):
        folder = tempfile.mkdtemp(prefix="facedown-faults-")
        PyHal.__init__(self, folder, flash=flash if flash is not None else RamFlash(blocks=16))
        self.key = provision(folder, self.device_id)
        self.entropy_fails = False
        self.hands = 0

    def rng(self, seed):
        if self.entropy_fails:
            raise EntropyFault("repetition count", "61 identical bits in a row (cutoff 61)")
        self.hands += 1
        return Failing(self, SeededRandom("dev/%d" % self.hands))


class Failing:
    """A hand's random source that fails its health test once the HAL says so (latched, as
    shoe.health.CheckedSource is)."""

    def __init__(self, hal, rng):
        self.hal = hal
        self.rng = rng

    def below(self, n):
        if self.hal.entropy_fails:
            raise EntropyFault("adaptive proportion", "810 of 1024 bits equal to 1 (cutoff 810)")
        return self.rng.below(n)


class Shoe:
    def __init__(self, hal=None):
        self.hal = hal or Hal()
        self.dev = Device(self.hal)
        # a new numbering (the reply cache of an earlier one goes) and a maintenance session
        self.host = InProcess(self.dev, wire, self.hal.key, "maintenance")
        self.frames = {}

    @property
    def seq(self):
        return self.host.seq

    def send(self, name, *args, seq=None):
        """The command as an ACMD of the session; with seq, that frame again (a retry)."""
        if seq is not None:
            return self.dev.run(seq, self.frames[seq], wire.ACMD)
        self.host.seq += 1
        seq = self.host.seq
        frame = self.host.session.frame_body(seq, wire.encode_command(name, args))
        self.frames[seq] = frame
        return self.dev.run(seq, frame, wire.ACMD)

    def call(self, name, *args):
        body = self.send(name, *args)
        code, values = wire.decode_reply(body, wire.COMMAND_REPLY[wire.COMMAND_IDS[name]])
        return code, values

    def ok(self, name, *args):
        code, values = self.call(name, *args)
        assert code == wire.OK, (name, values)
        return values

    def status(self):
        doc = b""
        while True:
            _hand, _next, chunk = self.ok("status", len(doc))
            if not chunk:
                return json.loads(doc.decode())
            doc += chunk

    def events(self):
        """Every held event entry of the current hand, in order."""
        out = []
        for first, hand, entries in self.dev.held:
            if hand == self.dev.hand_no:
                out += [bytes(entries[i:i + 4]) for i in range(0, len(entries), 4)]
        return out


def table(shoe, seats=(1, 2, 3), button=3):
    mask = sum(1 << s for s in seats)
    shoe.ok("config", "holdem", mask, button, "tda2024", "")
    shoe.ok("hand", 0)


def test_a_jam_answers_mechanism_and_is_an_event():
    s = Shoe()
    table(s)
    s.ok("sim_fault", "feed_jam", 4, UNTIL_CLEARED, 0)
    stub = list(s.dev.hand.z.stub)
    writes = s.dev.journal.writes
    code, message = s.call("deal", 0)
    deal_seq = s.seq
    assert code == wire.MECHANISM and wire.error_name(code) == "MECHANISM"
    assert message.startswith("jam: the card did not reach the throat within 600 ms, 3 times: ")
    assert message.endswith(F.advice(F.code("jam")))
    ev = s.events()
    assert [e[0] for e in ev] == [OP_MOVE] * 3 + [OP_FAULT]
    assert tuple(ev[-1]) == (OP_FAULT, 1, 16 + 1, 3)  # jam, going to seat 1, 3 tries
    # the fault and the reply reached the journal together
    assert s.dev.journal.writes > writes
    assert s.dev.journal.hand.reply[0] == deal_seq and s.dev.journal.hand.reply[1][0] == 9
    assert s.dev.rec.logged == len(s.dev.hand.z.log) // 4
    # the card in flight stayed in the stub, first to come
    assert s.dev.hand.z.stub == stub[:-3]
    st = s.status()
    assert st["fault"] == {"kind": "jam", "code": 1, "command": "deal", "message": message[5:]}
    assert st["table"]["faults"] == ["jam"]
    # the same frame again (a lost reply): the cached answer, nothing runs again
    again = s.send("deal", 0, seq=deal_seq)
    assert wire.decode_reply(again, "")[1] == message and len(s.events()) == 4
    # another step is refused until the deal is repeated; the fault still stands
    code, message = s.call("street")
    assert code == wire.WRONG_STATE and "repeat it to finish it first" in message
    assert s.status()["fault"]["kind"] == "jam"
    s.ok("deal", 0)
    assert s.dev.hand.initial_complete() and s.status()["fault"] is None
    moved = [e[1] for e in s.events() if e[0] == OP_MOVE]
    assert moved == stub[::-1][:6], "the same cards, in the same order"


def test_a_fault_that_stands_after_a_step_with_no_card():
    s = Shoe()
    table(s)
    s.ok("sim_fault", "lid_open", 1, 0, 0)
    assert s.call("deal", 0)[0] == wire.MECHANISM
    # an action (no card) leaves the fault standing; it is refused anyway
    assert s.call("action", 1, 1)[0] == wire.WRONG_STATE
    assert s.status()["fault"]["kind"] == "lid_open"
    s.ok("deal", 0)
    assert s.status()["fault"] is None


def test_recovered_jams_are_counted_in_status():
    s = Shoe()
    table(s)
    s.ok("sim_fault", "feed_jam", 2, 1, 0)
    s.ok("sim_fault", "feed_jam", 5, 2, 0)
    s.ok("deal", 0)
    st = s.status()
    assert st["recovered"] == 2 and st["fault"] is None and st["table"]["faults"] == []


def test_sim_fault_arguments_are_checked():
    s = Shoe()
    table(s)
    for args, text in ((("feed_jam", 1, 0, 0), "feed_jam: the card sticks 1..255 times"),
                       (("empty", 0, 0, 0), "at must be 1 or more"),
                       (("lid", 1, 0, 0), "unknown fault 'lid'"),
                       (("no_burn", 0, 3, 0), "no_burn: card is 0 or 1 (noticed at once)")):
        code, message = s.call("sim_fault", *args)
        assert code == wire.BAD_ARGUMENT and text in message, message
    assert s.ok("sim_fault", "pending", 0, 0, 0) == [0, 0]


def test_a_fault_outside_a_hand_still_answers():
    """No hand in progress: the command that meets the fault gets the reply; no event."""
    s = Shoe()
    s.ok("config", "holdem", 0b1110, 3, "tda2024", "")
    s.hal.entropy_fails = True
    events = s.dev.event_next
    code, message = s.call("hand", 0)
    assert code == wire.MECHANISM and message.startswith(
        "entropy: the random source failed its repetition count test: nothing is dealt")
    assert s.dev.hand is None and s.dev.event_next == events
    assert s.status()["fault"]["kind"] == "entropy"


def test_an_entropy_fault_mid_hand_stops_dealing_until_restart():
    hal = Hal()
    s = Shoe(hal)
    table(s)
    s.ok("deal", 0)
    s.ok("street")
    hal.entropy_fails = True  # the premature flop's reshuffle needs the random source
    code, message = s.call("report", 2, 0, 0)
    assert code == wire.MECHANISM and message.startswith(
        "entropy: the random source failed its adaptive proportion test: ")
    assert message.endswith(F.advice(F.ENTROPY_CODE))
    assert tuple(s.events()[-1]) == (OP_FAULT, F.ENTROPY_CODE, 255, 0)
    z = s.dev.hand.z
    assert z.count() == 52, "every card is somewhere"
    # nothing is dealt now, whatever the command; a new hand is refused too
    for name, args in (("street", ()), ("deal", (0,)), ("action", (1, 1)),
                       ("report", (1, 1, 1))):
        code, message = s.call(name, *args)
        assert code == wire.MECHANISM and message.startswith("entropy: "), (name, message)
    # the source recovers (a power cycle): a restart finds the hand in the journal, still
    # stopped, because its log has the entropy fault; only ending it (or a misdeal) goes
    hal.entropy_fails = False
    s2 = Shoe(Hal(flash=hal.flash))
    assert s2.dev.entropy is None and s2.dev.hand is not None
    code, message = s2.call("street")
    assert code == wire.MECHANISM and "the random source failed during this hand" in message
    s2.ok("end")
    s2.ok("hand", 0)
    s2.ok("deal", 0)
    assert s2.dev.hand.initial_complete()
    # without the restart, the latched fault refuses the next hand as well
    s.ok("end")
    code, message = s.call("hand", 0)
    assert code == wire.MECHANISM and message.startswith("entropy: ")


def test_an_entropy_fault_at_boot_leaves_the_shoe_refusing_to_deal():
    hal = Hal()
    s = Shoe(hal)
    table(s)
    s.ok("deal", 0)
    hal2 = Hal(flash=hal.flash)
    hal2.entropy_fails = True  # the source fails its start-up test at the next power-up
    s2 = Shoe(hal2)
    assert s2.dev.hand is not None and s2.dev.entropy is not None
    assert s2.dev.hand.z.count() == 52
    assert s2.call("street")[0] == wire.MECHANISM
    s2.ok("end")
    assert s2.call("hand", 0)[0] == wire.MECHANISM


def test_the_stopped_command_is_repeated_with_a_new_seq():
    """The host's usual way: the same command, a new frame; the step goes on from the card
    that stopped, and every card dealt is an event exactly once."""
    s = Shoe()
    table(s, seats=(1, 2, 3, 4, 5, 6), button=6)
    s.ok("deal", 0)
    s.ok("sim_fault", "reader_silent", 2, 0, 0)
    assert s.call("street")[0] == wire.MECHANISM
    s.ok("street")
    cards = [e[1] for e in s.events() if e[0] == OP_MOVE]
    assert len(cards) == 12 + 4 and len(set(cards)) == 16
    assert s.dev.hand.z.board and len(s.dev.hand.z.board) == 3 and len(s.dev.hand.z.burns) == 1


class Line:
    """The device end of a serial line: what the host wrote waits to be read."""

    def __init__(self):
        self.inbox = bytearray()
        self.sent = []

    def read_into(self, buf):
        n = min(len(buf), len(self.inbox))
        buf[:n] = self.inbox[:n]
        del self.inbox[:n]
        return n

    def write(self, data):
        self.sent.append(bytes(data))


class Clock:
    def __init__(self):
        self.ms = 1000

    def ticks_ms(self):
        return self.ms

    @staticmethod
    def ticks_diff(a, b):
        return a - b


def test_an_ack_waiting_in_the_line_is_read_before_events_are_resent():
    """A long command (a stop waits for the mechanism): the host's ACK for the events sent
    before it arrives while the shoe is busy. The shoe reads it before its timer resends."""
    from link import Link

    s = Shoe()
    line, clock = Line(), Clock()
    link = Link(line, s.dev, clock)

    def host(name, *args):  # as the host's client sends in its session: ACMD frames
        s.host.seq += 1
        seq = s.host.seq
        line.inbox += wire.encode(wire.ACMD, seq, s.host.session.frame_body(
            seq, wire.encode_command(name, args)))

    def frames():
        dec = wire.Decoder()
        out = dec.feed(b"".join(line.sent))
        del line.sent[:]
        return out

    host("config", "holdem", 0b1110, 3, "tda2024", "")
    host("hand", 0)
    host("deal", 0)
    for _ in range(5):
        link.service()
        clock.ms += 40  # the events wait HOLD_MS for company, then go
    sent = [f for f in frames() if f[0] == wire.EVENT]
    last = max(wire.decode_events(f[2])[0] + len(wire.decode_events(f[2])[2]) - 1
               for f in sent)
    assert last == s.dev.event_next - 1
    # the host sends the next command, then ACKs the events (it had them before); the shoe is
    # busy with the command for 1.6 s (a stopping jam) and reads nothing meanwhile
    s.ok("sim_fault", "feed_jam", 1, 255, 0)
    host("street")
    run = s.dev.run

    def slow(seq, body, ftype=wire.CMD):
        line.inbox += wire.encode(wire.ACK, 0, wire.encode_ack(last))
        clock.ms += 1600
        return run(seq, body, ftype)

    s.dev.run = slow
    for _ in range(5):
        link.service()
        clock.ms += 40
    out = frames()
    assert [f[0] for f in out][:1] == [wire.REPLY]
    resent = [f for f in out if f[0] == wire.EVENT and wire.decode_events(f[2])[0] <= last]
    assert not resent and link.retransmits == 0, "events the host had were sent again"
    assert s.dev.oldest() > last


def test_a_no_burn_flop_noticed_turned_is_reshuffled_on_the_wire():
    """sim_fault no_burn, card 2: the table notices only after the flop was turned (RRoP
    Hold'em 4, cards exposed): back into the stub, reshuffle, burn, a new flop. Card 0 keeps
    today's meaning (at once: the order restored)."""
    for card, procedure in ((2, "no-burn-reshuffle"), (0, "no-burn-restore")):
        s = Shoe()
        s.ok("config", "holdem", 0b1110, 3, "robert", "")
        s.ok("hand", 0)
        s.ok("deal", 0)
        s.ok("sim_fault", "no_burn", 0, card, 0)
        s.ok("street")
        table = s.status()["table"]
        assert table["procedures"] == [procedure], table["procedures"]
        assert len(table["board"]) == 3 and len(table["burns"]) == 1
