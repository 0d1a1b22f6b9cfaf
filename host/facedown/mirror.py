"""The host's copy of a hand, rebuilt from the shoe's event stream: the same zones, log and
record as on the device, using the firmware's own tables (never the stub's order: the mirror
only counts the stub)."""

from .engine import firmware_imports


class StreamError(Exception):
    """The event stream does not fit the hand (a gap, or a card that is not where it says)."""


class Mirror:
    def __init__(self, game, seats, button, rules):
        fw = firmware_imports()
        self._fw = fw
        kind, deck_kind = fw.games.GAMES[game][0], fw.games.GAMES[game][1]
        self.game = game
        self.rules = rules
        self.seats = sorted(seats)
        self.button = button
        self.status = 0
        self.reason = None
        self.z = fw.zones.Zones(fw.cards.deck(deck_kind), self.seats)
        self.last_procedure = None

    def apply(self, entry):
        """Apply one 4-byte event entry (op, a, b, c)."""
        fw = self._fw
        zn = fw.zones
        op, a, b, c = entry[0], entry[1], entry[2], entry[3]
        z = self.z
        if op == zn.OP_MOVE:
            dst, up = c & 0x7F, bool(c & 0x80)
            if a >= fw.cards.NCODES or z.where[a] != b:
                raise StreamError("event moves %s from %s, but the mirror has it in %s" % (
                    fw.cards.name(a), zn.zone_name(b) if b != 255 else "nowhere",
                    zn.zone_name(z.where[a]) if a < fw.cards.NCODES and z.where[a] != 255
                    else "nowhere"))
            if dst >= zn.SEAT0 and dst - zn.SEAT0 not in z.seats:
                raise StreamError("event moves a card to %s, not in this hand" % zn.zone_name(dst))
            if b == dst:
                z.turn_up(dst - zn.SEAT0, a)
            else:
                z.move(a, dst, up)
        elif op == zn.OP_REMOVE:
            z.remove(a)
        else:
            z.note(op, a, b, c)
            if op == zn.OP_PROC:
                self.last_procedure = a
            elif op == zn.OP_STATUS:
                self.status = a
                if a >= 2:  # misdeal or void: the reason is the procedure that ended it
                    self.reason = fw.procedures.text(self.last_procedure)

    def record(self):
        return self._fw.record.record(self)
