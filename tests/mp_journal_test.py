# The journal's history reading on the device's heap (run by tests/test_journal_mp.py under
# `micropython -X heapsize=192K`, the firmware imported from .mpy files as on the Pico):
#   micropython -X heapsize=192K tests/mp_journal_test.py MPY_DIR IMAGE BLOCKS verify
#       verify() on the journal in IMAGE (a full ring): prints "problems N"
#   ... IMAGE BLOCKS hands
#       scan(0) and hands(): prints "numbers a b c ...", "damaged h ...", "problems N"
#   ... IMAGE BLOCKS boot
#       the boot's replay of the open hand: prints "open N", "damaged BLOCK OFFSET" (the
#       record it stepped over, or "-"), "moves M" (the card moves it kept), "problems N"
import sys

sys.path.insert(0, sys.argv[1])

from hal.flashdev import FileFlash  # noqa: E402
from journal import Journal  # noqa: E402

image, blocks, what = sys.argv[2], int(sys.argv[3]), sys.argv[4]
j = Journal(FileFlash(image, blocks))
if what == "verify":
    print("problems %d" % len(j.verify()))
elif what == "boot":
    h = j.hand
    print("open %s" % (h.number if h else "-"))
    print("damaged " + ("%d %d" % h.damaged if h and h.damaged else "-"))
    e = h.entries if h else b""
    print("moves %d" % sum(1 for i in range(0, len(e), 4) if e[i] == 1))
    print("problems %d" % len(j.problems))
else:
    numbers, problems = j.scan(0)
    print("numbers " + " ".join(str(numbers[i]) for i in range(len(numbers))))
    hands, _ = j.hands()
    print("damaged " + " ".join(str(h["hand"]) for h in hands if h["damaged"]))
    print("problems %d" % len(j.verify()))
