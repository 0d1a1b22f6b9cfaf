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
        deck_kind = fw.games.GAMES[game][1]
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
        op, a, b, c = entry[0], entry[1], entry[2], entry[3]
        why = self._unfit(op, a, b, c)
        if why:
            raise StreamError("the event stream does not fit the hand: %s" % why)
        try:
            fw.logplay.apply(self.z, op, a, b, c)
        except ValueError as e:
            raise StreamError("the event stream does not fit the hand: %s" % e)
        if op == fw.zones.OP_PROC:
            self.last_procedure = a
        elif op == fw.zones.OP_STATUS:
            self.status = a
            if a >= 2:  # misdeal or void: the reason is the procedure that ended it
                self.reason = None if self.last_procedure is None else \
                    fw.procedures.text(self.last_procedure)

    def _zone(self, z):
        return z < len(self._fw.zones.ZONE_NAMES) or z - self._fw.zones.SEAT0 in self.z.seats

    def _unfit(self, op, a, b, c):
        """Why an entry is not one the shoe could send (the record could not show it), or
        None. A frame with a good CRC may still carry anything."""
        fw = self._fw
        zn = fw.zones
        if op == zn.OP_MOVE:
            if not (self._zone(b) and self._zone(c & 0x7F)) or \
                    b == c & 0x7F and b < zn.SEAT0:  # (only a seat's card turns up in place)
                return "a move between zones %d and %d" % (b, c & 0x7F)
        elif op == zn.OP_REMOVE:
            if a & fw.cards.CODE >= fw.cards.NCODES:
                return "the removal of object %d" % a
        elif op == zn.OP_PICK:
            if not self._zone(a):
                return "a pick from zone %d" % a
        elif op == zn.OP_PROC:
            if a >= len(fw.procedures.PROCEDURES):
                return "procedure %d" % a
        elif op == zn.OP_ACTION:
            if b & 0x7F >= len(fw.record.ACTIONS):
                return "action %d" % b
        elif op == zn.OP_STATUS:
            if a >= len(fw.record.STATUS_NAMES):
                return "status %d" % a
        elif op == zn.OP_FAULT:
            if b != zn.NOWHERE and not self._zone(b):
                return "a fault for zone %d" % b
        elif op == zn.OP_BET:  # the amount of the action (or chips procedure) just before it
            log = self.z.log
            if len(log) < 4 or log[-4] not in (zn.OP_ACTION, zn.OP_PROC, zn.OP_STACK):
                return "a bet amount after no action"
        elif op == zn.OP_STACK:
            if a not in self.z.seats:
                return "a stack for seat %d" % a
        elif op != zn.OP_SHUFFLE and op != zn.OP_CUT:
            return "unknown event op %d" % op
        return None

    @classmethod
    def from_record(cls, rec):
        """A mirror that starts from a table as the shoe reported it (status), to follow the
        events from here on."""
        m = cls(rec["game"], [int(s) for s in rec["seats"]], rec["button"], rec["rules"])
        fw = m._fw
        z = m.z
        zn = fw.zones
        for seat, held in rec["seats"].items():
            for c in held:
                z.move(fw.cards.parse(c["card"]), zn.SEAT0 + int(seat), c["up"])
        for name, zone in (("board", zn.BOARD), ("burns", zn.BURNS), ("muck", zn.MUCK),
                           ("aside", zn.ASIDE)):
            for c in rec[name]:
                z.move(fw.cards.parse(c), zone, name == "board")
        for c in rec["removed"]:
            z.remove(fw.cards.parse(c))
        del z.log[:]
        m.status = ("dealing", "complete", "misdeal", "void").index(rec["status"])
        m.reason = rec["reason"]
        return m

    def record(self):
        return self._fw.record.record(self)
