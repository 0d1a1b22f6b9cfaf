# Revision D's parts on the reader board, as the Pico asks for them over the reader's line
# (hal/readerline.py): the pocket sensor's count of the homing turn ($PK) and the escrows'
# beams ($EB). Imported by hal/loader_rp2.py's fit only when the loader is fitted.
from hal.readerline import EB, END, PK, START, UNKNOWN
from shoe.faults import MechanismFault, READER_FAULT, READER_SILENT


class PocketSensor:
    """The pocket sensor (an EE-SX1041 across the pockets at station 0, on the reader board's
    P3): start() before the homing turn has the board count from zero, seen() after it gives
    the cards it saw, or None when the board did not answer (the pockets are then emptied, as
    when it saw cards). wait: () -> None, run while an answer is awaited."""

    def __init__(self, reader, wait):
        self.reader = reader
        self.wait = wait
        self.started = False

    def start(self):
        self.started = self.reader.ask(PK, START, self.wait) is not None

    def seen(self):
        if not self.started:
            return None
        self.started = False
        f = self.reader.ask(PK, END, self.wait)
        try:
            return int(f[2]) if f is not None else None
        except ValueError:
            return None


class EscrowBeams:
    """The escrows' beams (on the reader board's expander): clear(station) -> True when that
    escrow's beam sees no card. A board that does not answer, or cannot tell, stops the
    reshuffle: a card left in an escrow unseen would fall into the next card's pocket."""

    def __init__(self, reader, wait):
        self.reader = reader
        self.wait = wait

    def clear(self, station):
        """Asked when the latch has closed again; returns at the millisecond timer's next tick
        after the answer (the loading's padded moves start at the same phase whatever the
        answer's bytes took: hal.carousel_rp2.Carousel._until)."""
        f = self.reader.ask(EB, "%d" % station, self.wait)
        clock = self.reader.clock
        m = clock.ticks_ms()
        while clock.ticks_ms() == m:
            pass
        if f is None:
            raise silent(station)
        return beam(station, f[2])


def silent(station):
    """The fault when the board does not answer for `station`'s beam (hal/pipeline_rp2.py's
    deadline too)."""
    return MechanismFault(READER_SILENT, "the reader board does not answer for escrow %d's "
                                         "beam: check the reader's cable and power, then feed "
                                         "again" % station)


def beam(station, seen):
    """$EB's field for `station` ('0' clear, '1' a card, '?' or anything else: the board
    cannot tell) -> True when clear; raises reader_fault when the board cannot tell."""
    if seen == UNKNOWN or seen not in ("0", "1"):
        raise MechanismFault(READER_FAULT, "the reader board cannot read escrow %d's beam: "
                                           "check the beams' expander on its I2C (J16), then "
                                           "feed again" % station)
    return seen == "0"
