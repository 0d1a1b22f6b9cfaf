# Replaying log entries onto zones: the one way to rebuild a hand's table from its log (the
# journal at boot, the host's mirror of the event stream). Checks each movement against where
# the card is: a stream that does not fit raises ValueError.
from shoe.cards import NCODES
from shoe.zones import OP_MOVE, OP_REMOVE, SEAT0, NOWHERE


def apply(z, op, a, b, c):
    """Apply one entry to zones z (appending it to z's log as the original did)."""
    if op == OP_MOVE:
        dst, up = c & 0x7F, bool(c & 0x80)
        if a >= NCODES or z.where[a] != b:
            raise ValueError("entry moves card %d from zone %d, but it is in zone %d" % (
                a, b, z.where[a] if a < NCODES else NOWHERE))
        if dst >= SEAT0 and dst - SEAT0 not in z.seats:
            raise ValueError("entry moves a card to seat %d, not in this hand" % (dst - SEAT0))
        if b == dst:
            z.turn_up(dst - SEAT0, a)
        else:
            z.move(a, dst, up)
    elif op == OP_REMOVE:
        z.remove(a)
    else:
        z.note(op, a, b, c)
