# The journal's history reading on the device's heap (run by tests/test_journal_mp.py under
# `micropython -X heapsize=192K`, the firmware imported from .mpy files as on the Pico):
#   micropython -X heapsize=192K tests/mp_journal_test.py MPY_DIR IMAGE BLOCKS verify
#       verify() on the journal in IMAGE (a full ring): prints "problems N"
#   ... IMAGE BLOCKS hands
#       scan(0) and hands(): prints "numbers a b c ...", "damaged h ...", "problems N"
import sys

if sys.implementation.name != "micropython" and __name__ == "mp_journal_test" and \
        "pytest" in sys.modules:
    import pytest  # collected by pytest under CPython: not a pytest module

    pytest.skip("a MicroPython script, run by tests/test_journal_mp.py", allow_module_level=True)

sys.path.insert(0, sys.argv[1])

from hal.flashdev import FileFlash  # noqa: E402
from journal import Journal  # noqa: E402

image, blocks, what = sys.argv[2], int(sys.argv[3]), sys.argv[4]
j = Journal(FileFlash(image, blocks))
if what == "verify":
    print("problems %d" % len(j.verify()))
else:
    numbers, problems = j.scan(0)
    print("numbers " + " ".join(str(numbers[i]) for i in range(len(numbers))))
    hands, _ = j.hands()
    print("damaged " + " ".join(str(h["hand"]) for h in hands if h["damaged"]))
    print("problems %d" % len(j.verify()))
