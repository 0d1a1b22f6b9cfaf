# The flash journal's records (journal.py writes them, journalread.py reads them back): the
# record types and flags, the block's magic, the little-endian fields, the open hand as the
# journal holds it, and the chain hash a CLOSE record carries. The layout: journal.py's head.
import hashlib

from hal.base import BLOCK  # the flash's geometry  # noqa: F401

R_BLOCK = 1
R_CONFIG = 2
R_HAND = 3
R_COMMIT = 4
R_CLOSE = 5
MAGIC = b"FDJ1"
F_FEED = 1
F_REPLY = 2
F_ACMD = 4  # the reply answered an authenticated command (ACMD): only an ACMD retry gets it
NONE32 = 0xFFFFFFFF


def _u16(b, i):
    return b[i] | (b[i + 1] << 8)


def _u32(b, i):
    return b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)


class OpenHand:
    """The open hand as the journal holds it."""

    def __init__(self, number, first_event, config, head):
        self.number = number
        self.first_event = first_event
        self.config = config        # JSON text
        self.head = head            # the HAND payload (hashed into the chain)
        self.entries = bytearray()
        self.image = None           # the counter image after the last commit
        self.reply = None           # (seq, reply, authenticated) of the last command
        self.feeding = -1           # route of a feed committed but never settled, else -1
        self.damaged = None         # (block, offset) of a damaged record boot stepped over


def hand_hash(prev, head, entries):
    h = hashlib.sha256(prev)
    h.update(head)
    h.update(entries)
    return h.digest()
