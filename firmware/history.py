# The history command: a stored hand (or the list of stored hands) read back from the journal
# and served in chunks. Imported when it comes and let go after (device.py, _on_demand), as
# rare.py is, but smaller: a technician's reading between hands costs the heap only this.
# The cached list of hands (_HandList) keeps this module's code while it is cached: the next
# hand drops it (play.py, cmd_hand).
import wire
from play import CommandError


def history(dev, number, offset):
    """A stored hand (or, for hand 0, the list of stored hands), read back from the journal
    one hand at a time and served in chunks."""
    cache = dev.histories
    if cache is None or cache[0] != dev.journal.writes or cache[1] != number:
        dev.histories = cache = None  # (the heap holds one document at a time)
        if number == 0:
            numbers, problems = dev.journal.scan(0)
            doc = _HandList(len(problems) + len(dev.journal.problems), numbers)
        else:
            h, _ = dev.journal.scan(number)
            if h is None:
                raise CommandError(wire.BAD_ARGUMENT, "hand %d is not in the journal" %
                                   number)
            doc = _history_doc(h)
        cache = dev.histories = (dev.journal.writes, number, doc)
    doc = cache[2]
    if not isinstance(doc, bytearray):  # (a _HandList of an earlier import of this module)
        return (len(doc), doc.chunk(offset, 180))
    return (len(doc), bytes(doc[offset:offset + 180]))


class _HandList:
    """history 0's document (the damaged areas, u16, then the stored hands' numbers, u16 each)
    served from the journal's runs of numbers, with no copy: a full journal of short hands holds
    1,500 of them, and after a power cut the unix port's heap had no 3 KB block for the copy."""

    def __init__(self, bad, numbers):
        self.bad = bad
        self.numbers = numbers

    def __len__(self):
        return 2 + 2 * len(self.numbers)

    def chunk(self, offset, n):
        out = bytearray()
        for i in range(offset, min(offset + n, len(self))):
            v = self.bad if i < 2 else self.numbers[(i - 2) >> 1]
            out.append((v >> 8) & 0xFF if i & 1 else v & 0xFF)
        return bytes(out)


def _history_doc(h):
    head = h["head"]
    flags = (1 if h["hash"] is not None else 0) | (2 if h["damaged"] else 0)
    first = h["first_event"]
    doc = bytearray((h["hand"] & 0xFF, h["hand"] >> 8, first & 0xFF, (first >> 8) & 0xFF,
                     (first >> 16) & 0xFF, first >> 24, flags))
    doc += h.get("prev") or bytes(32)
    doc += h["hash"] or bytes(32)
    doc.append(len(head))
    doc += head
    doc += h["entries"]
    return doc
