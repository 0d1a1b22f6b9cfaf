# The events: the hand's log entries numbered as the host sees them, kept until it acknowledges
# them (SPEC 6.2), sent masked to a session that may not see the down cards. One job of the
# device (firmware/device.py's Device is made of this, play.py and its own dispatch).
import wire
from shoe.zones import BOARD, OP_MOVE, OP_PROC, OP_SHUFFLE, OP_STATUS


class Events:
    """The device's numbered events: held (a list of [first number, hand number, bytearray
    of 4-byte entries]), event_next (the number the next one gets), logged (entries of the
    current hand's log already numbered); Device.__init__ sets them."""

    def collect(self):
        """Number the hand's new log entries as events and keep them until ACKed."""
        h = self.hand
        if h is None:
            return
        log = h.z.log
        n = len(log) // 4
        if n <= self.logged:
            return
        new = log[self.logged * 4:]
        self._count(new)
        last = self.held[-1] if self.held else None
        if last is not None and last[1] == self.hand_no:
            last[2].extend(new)
        else:
            self.held.append([self.event_next, self.hand_no, bytearray(new)])
        self.event_next += n - self.logged
        self.logged = n

    def _count(self, entries, audit=True):
        """Telemetry counters (no card data) and audit records from new log entries."""
        c = self.counts
        for i in range(0, len(entries), 4):
            op = entries[i]
            if op == OP_MOVE and entries[i + 2] == 0:
                c["cards"] += 1
            elif op == OP_SHUFFLE:
                c["shuffles"] += 1
            elif op == OP_PROC:
                c["procedures"] += 1
            elif op == OP_STATUS:
                import shoe.progress  # (the hand's statuses: a small module, not the engine)

                if entries[i + 1] == shoe.progress.MISDEAL:
                    c["misdeals"] += 1
                    if audit:
                        self.audit.add(self.actor(), "misdeal", "hand %d: %s" % (
                            self.hand_no, self.hand.reason or ""))

    def collect_now(self):
        """Mid-operation: number the new log entries and commit them, so they can be sent now.
        True if there were any."""
        before = self.event_next
        self.collect()
        if self.event_next != before:
            self.rec.commit(self.hand)
            return True
        return False

    def ack(self, number):
        """The host holds every event up to number: forget them. (Not saved: after a power cut
        the host is sent a few events again and drops them by number.)"""
        while self.held:
            first, hand, entries = self.held[0]
            count = len(entries) // 4
            if number >= first + count - 1:
                self.held.pop(0)
            elif number >= first:
                drop = number - first + 1
                self.held[0] = [number + 1, hand, entries[drop * 4:]]
                break
            else:
                break

    def events_from(self, number, limit):
        """(first, hand, entries bytes) of up to `limit` held events from number on, or None."""
        for first, hand, entries in self.held:
            count = len(entries) // 4
            if number < first:
                number = first
            if number < first + count:
                i = (number - first) * 4
                out = entries[i:i + limit * 4]
                if self.sessions.role < wire.ROLE_TABLE:
                    out = _mask_events(out)
                return number, hand, out
        return None

    def oldest(self):
        return self.held[0][0] if self.held else self.event_next


def _mask_events(entries):
    """Event entries as anyone may see them: a card that goes face down anywhere but the board
    travels as HIDDEN (the table session gets it)."""
    out = bytearray(entries)
    for i in range(0, len(out), 4):
        if out[i] == OP_MOVE and not out[i + 3] & 0x80 and out[i + 3] != BOARD:
            out[i + 1] = wire.HIDDEN
    return out
