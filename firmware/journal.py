# The flash journal: a log-structured, append-only record of everything the shoe must not lose,
# on a raw flash partition (rp2.Flash on the Pico; a file-backed block device in the simulator).
#
# Layout: the partition is a ring of 4096-byte blocks. Each block opens with a BLOCK record (its
# sequence number and a checkpoint: configuration, hand number, next event number, the hash of
# the last closed hand, where the open hand started). Records follow, appended in place:
#
#     type u8 | len u8 | payload (len bytes) | crc16 u16 LE over type, len, payload
#
# (CRC-16/CCITT: every single-bit error and every burst up to 16 bits is caught; a closed
# hand is also covered by its SHA-256 chain hash.)
#
# An erased byte (0xFF) where a type should be is the end of the log. Records:
#   CONFIG  the table's configuration (JSON)
#   HAND    a hand begins: hand number u16, first event u32, then its configuration (JSON)
#   COMMIT  what happened since the last commit: n u8, n engine log entries (4 bytes each),
#           flags u8 (1: a card is about to be fed, 2: a reply follows, 4: it answered an ACMD), m u8, m (offset, value)
#           changes of the hand's 147-byte counter image, [route u8], [seq u16, reply bytes]
#   CLOSE   the hand is over: hand number u16, SHA-256 chain hash (32 bytes) over the previous
#           hand's hash, this hand's HAND payload and all its entries
#
# The stub's order is never written: a hand's zones are rebuilt from its entries, and the stub
# is known as a set only. Every page is programmed whole (the RP2040 programs 256-byte pages),
# re-programming the head page as it fills (NOR: bits only go from 1 to 0). Each block is erased
# once per trip round the ring, so wear is spread evenly over the partition.
import json
from array import array

from crc import crc16  # the house's CRC-16 (crc.py), the protocol's too
# the record format (journalrec.py, which journalread.py shares): the journal's names too
from journalrec import (BLOCK, MAGIC, NONE32, R_BLOCK, R_CONFIG, R_HAND, R_COMMIT,  # noqa: F401
                        R_CLOSE, F_FEED, F_REPLY, F_ACMD, OpenHand, _u16, hand_hash)
from hal.base import PAGE  # the flash's geometry (BLOCK too, through journalrec)

# The most blocks a journal takes (about 1,050 hands of 9-seat hold'em with 36 actions each):
# the simulator's flash chip; on the Pico the blocks reserved in littlefs, as many as it has to
# spare up to this (hal/reserve.py: 224 on the stock RPI_PICO image with the firmware installed).
JOURNAL_BLOCKS = 304
CONFIG_MAX = 255 - 56  # the configuration's JSON: it rides in every block's checkpoint record
ZERO_HASH = bytes(32)


def _p16(v):
    return bytes((v & 0xFF, (v >> 8) & 0xFF))


def _p32(v):
    return bytes((v & 0xFF, (v >> 8) & 0xFF, (v >> 16) & 0xFF, (v >> 24) & 0xFF))


class Journal:
    def __init__(self, dev):
        self.dev = dev
        self.nblocks = dev.ioctl(4, 0)
        self.page = bytearray(PAGE)
        self.scratch = bytearray(PAGE)
        self.rbuf = bytearray(260)
        self.rhead = memoryview(self.rbuf)[:2]
        self.seqs = array("L", [0] * self.nblocks)
        self.problems = []          # what boot or verify() found wrong (text, hand affected)
        self.config = None          # JSON text of the configuration
        self.hand_no = 0
        self.event_next = 1
        self.chain = ZERO_HASH      # hash of the last closed hand
        self.hand = None            # the open hand (OpenHand) or None
        self.last = None            # the last closed hand (OpenHand), for resending its events
        self.dealt = False          # a hand began after the configuration (its button moves)
        self.seq = 0                # the head block's sequence number
        self.block = 0              # head block
        self.off = 0                # append offset in the head block
        self.writes = 0             # records appended since boot
        self.hand_loc = (NONE32, 0)  # where the open hand's HAND record is
        self.torn = 0xFFFF          # offset of a record a power cut tore in the head block
        self.cut = 0
        self.fail = 0  # simulator: the fail-th record from now fails to write (fail_at)
        self.boot()

    def boot(self):
        """Find the head, restore the checkpoint, replay the open hand (journalread.boot).
        Never raises on a bad journal: what is wrong goes to self.problems."""
        _reading("boot", self)

    # ------------------------------------------------------------------ reading

    def _read(self, block, off, n):
        buf = bytearray(n)
        self.dev.readblocks(block, buf, off)
        return buf

    def _record(self, block, off):
        """(type, payload, next offset) of the record at off; type 0 for the end of the log,
        -1 for a damaged record."""
        if off + 4 > BLOCK:
            return 0, None, off
        hdr = self._read(block, off, 2)
        if hdr[0] == 0xFF:
            return 0, None, off
        n = hdr[1]
        if off + 4 + n > BLOCK:
            return -1, None, off
        body = self._read(block, off, 2 + n + 2)
        if crc16(body[:2 + n]) != _u16(body, 2 + n):
            return -1, None, off
        return body[0], bytes(body[2:2 + n]), off + 4 + n

    def _header(self, block):
        t, p, nxt = self._record(block, 0)
        if t != R_BLOCK or p is None or len(p) < 56 or p[:4] != MAGIC:
            return None
        return p, nxt

    def _erased(self, block, off):
        """Is the rest of the block, from off, all 0xFF? (read a page at a time)"""
        buf = self.scratch
        while off < BLOCK:
            n = min(PAGE, BLOCK - off)
            view = memoryview(buf)[:n]
            self.dev.readblocks(block, view, off)
            for i in range(n):
                if buf[i] != 0xFF:
                    return False
            off += n
        return True

    # ------------------------------------------------------------------ writing

    def _load_page(self):
        base = self.off - self.off % PAGE
        self.dev.readblocks(self.block, self.page, base)

    def _program(self, data):
        """Append raw bytes at the head, programming each touched page whole."""
        i = 0
        n = len(data)
        while i < n:
            off = self.off
            in_page = off % PAGE
            take = min(n - i, PAGE - in_page)
            self.page[in_page:in_page + take] = data[i:i + take]
            self.dev.writeblocks(self.block, self.page, off - in_page)
            self.off = off + take
            i += take
            if self.off % PAGE == 0:
                for k in range(PAGE):
                    self.page[k] = 0xFF

    def _new_block(self, block, seq):
        """Erase the next block of the ring and open it with a checkpoint."""
        if self._header(block) is None and not self._erased(block, 0):
            # neither erased nor a block of the ring: damage (or a torn erase) destroys it
            self.problems.append(("block %d was damaged (header unreadable): erased" % block,
                                  None))
        self.dev.ioctl(6, block)
        self.block = block
        self.seq = seq
        self.off = 0
        for k in range(PAGE):
            self.page[k] = 0xFF
        hs, ho = NONE32, 0
        if self.hand is not None:
            hs, ho = self.hand_loc
        cfg = (self.config or "").encode()
        p = MAGIC + _p32(seq) + _p16(self.hand_no) + _p32(self.event_next) + self.chain + \
            _p32(hs) + _p16(ho) + _p16(self.torn) + _p16(len(cfg)) + cfg
        self._program(self._frame(R_BLOCK, p))
        self.torn = 0xFFFF

    def _frame(self, t, payload):
        if len(payload) > 255:
            raise ValueError("journal record of %d bytes" % len(payload))
        head = bytes((t, len(payload))) + payload
        return head + _p16(crc16(head))

    def cut_at(self, n):
        """Simulator: the power goes while the n-th record from now is being written."""
        self.cut = n

    def fail_at(self, n):
        """Simulator: the n-th record from now fails to write (an OSError, as a flash program
        that did not take), before any byte of it reaches the flash."""
        self.fail = n

    def _append(self, t, payload):
        if self.fail:
            self.fail -= 1
            if self.fail == 0:
                raise OSError(5, "simulated journal write failure")
        if self.cut:
            self.cut -= 1
            if self.cut == 0:
                self.dev.arm(1)  # the next flash operation does not happen
        rec = self._frame(t, payload)
        if self.off + len(rec) > BLOCK:
            self._new_block((self.block + 1) % self.nblocks, self.seq + 1)
        at = (self.seq, self.off)
        self._program(rec)
        self.writes += 1
        return at

    # ------------------------------------------------------------------ the shoe's records

    def set_config(self, text):
        self._append(R_CONFIG, text.encode())
        self.config = text
        self.dealt = False

    def begin_hand(self, number, config_text):
        first = self.event_next
        p = _p16(number) + _p32(first) + config_text.encode()
        self.hand = OpenHand(number, first, config_text, p)
        self.hand_loc = self._append(R_HAND, p)
        self.hand_no = number
        self.dealt = True
        return first

    def commit(self, entries, image_pairs, feeding=-1, reply=None):
        """Make durable what happened since the last commit (before it is reported, and before
        the next card moves)."""
        h = self.hand
        flags = (F_FEED if feeding >= 0 else 0) | (F_REPLY if reply is not None else 0) | \
            (F_ACMD if reply is not None and len(reply) > 2 and reply[2] else 0)
        p = bytearray((len(entries) // 4,))
        p += entries
        p.append(flags)
        p.append(len(image_pairs) // 2)
        p += image_pairs
        if feeding >= 0:
            p.append(feeding)
        if reply is not None:
            p += _p16(reply[0]) + reply[1]
        self._append(R_COMMIT, bytes(p))
        h.entries.extend(entries)
        self.event_next += len(entries) // 4
        h.feeding = feeding
        if reply is not None:
            h.reply = reply

    def close_hand(self):
        """The hand is over: chain its hash to the previous hand's."""
        h = self.hand
        digest = hand_hash(self.chain, h.head, h.entries)
        self._append(R_CLOSE, _p16(h.number) + digest)
        self.chain = digest
        self.last = h
        self.hand = None
        return digest

    # ------------------------------------------------------------------ histories

    def hands(self):
        """Every hand still in the journal, oldest first, with its entries; damaged ones
        flagged. Holds them all: for the host and tests (a device uses scan())."""
        out = []
        problems = _reading("walk", self, lambda n: True, out.append)
        return out, problems

    def scan(self, want=0):
        """One pass holding one hand at a time (what a device can afford). want 0: (the stored
        hands' numbers, as Runs, problems); want N: (hand N as a dict, or None, problems)."""
        numbers = Runs()
        found = []

        def on_hand(h):
            numbers.append(h["hand"])
            if h["hand"] == want:
                found.append(h)

        problems = _reading("walk", self, lambda n: n == want, on_hand)
        if want:
            return (found[-1] if found else None), problems
        return numbers, problems

    def verify(self):
        """Read everything back, every hand's hash checked, one hand held at a time (the ring's
        1,000 hands at once do not fit a device's heap): the list of problems (empty when the
        journal is sound)."""
        return self.problems + _reading("walk", self, _every, _drop)


def _reading(name, *args):
    """journalread's function name, on args: the module imported for the call and let go
    after it (shoe.compat.release), so that a shoe between power-up and a technician's
    history, resume or verify does not hold the code that reads the journal back."""
    import journalread
    from shoe.compat import release

    try:
        return getattr(journalread, name)(*args)
    finally:
        release("journalread")


def _every(number):
    return True


def _drop(hand):
    pass


class Runs:
    """Hand numbers in the order met, kept as runs of consecutive numbers (after 65535 comes
    1): a journal's hands are one run, or a few where damage cut it; numbers[i] and len()."""

    def __init__(self):
        self.runs = []  # [first, count]
        self.n = 0

    def append(self, v):
        r = self.runs
        if r:
            first, count = r[-1]
            last = (first - 1 + count - 1) % 0xFFFF + 1
            if v == last % 0xFFFF + 1:  # the next number
                r[-1][1] += 1
                self.n += 1
                return
        r.append([v, 1])
        self.n += 1

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        for first, count in self.runs:
            if i < count:
                return (first - 1 + i) % 0xFFFF + 1
            i -= count
        raise IndexError(i)


def config_json(game, seats, button, rules, house, profile=None):
    """A hand's configuration as the journal keeps it (HAND record): the house profile's name
    is a sixth element when the table was configured from one."""
    cfg = [game, seats, button, rules, house]
    if profile:
        cfg.append(profile)
    return json.dumps(cfg)
