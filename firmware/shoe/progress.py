# The hand's progress: the names the hand (shoe/hand.py) and its irregularities' procedures
# (shoe/irregular.py, loaded on demand) share, so that neither imports the other's module for
# them: the hand's status, the step in progress (Step, its dealing steps P_* and the feed
# contexts CTX_* of the cards it owes), the burn ledger's values (B_*) and the operations a
# stopping fault interrupts (DO_*). Pure names and one small record: the Pico holds it with
# the hand.
from shoe.compat import const

# status
DEALING = const(0)
COMPLETE = const(1)
MISDEAL = const(2)
VOID = const(3)
STATUS_NAMES = ("dealing", "complete", "misdeal", "void")

# feed contexts: what an extra card means depends on where it came out
CTX_DEAL = const(0)      # initial deal
CTX_BURN = const(1)      # a burn
CTX_FLOPBURN = const(2)  # the flop's burn
CTX_FLOP = const(3)      # a flop card
CTX_STREET = const(4)    # turn, river, stud street, community card
CTX_DRAW = const(5)      # a draw
CTX_REPLACE = const(6)   # a replacement card

# dealing steps under way (Step.kind)
P_DEAL = const(1)
P_BURN = const(2)
P_CARDS = const(3)
P_DRAW = const(4)
P_DRAWBURN = const(5)

# The burn ledger (Hand.burn_for): what each street owes the burns, street n (1-based: the flop,
# 4th street or the first draw) at index n. Every procedure reads and writes it through
# _burn, _burned, _keep_for_burn and _settle, and no reshuffle touches it (Rule 38: one and only
# one card is burned for each street, whatever happens between).
B_OWED = const(0xff)      # the street burns the top of the stub
B_NOBURN = const(0xfd)    # the flop's burn went to the board, noticed at once (settled after it)
B_NOBURN_SEEN = const(0xfc)  # the same, noticed only after the flop was turned (exposed)
B_DONE = const(0x80)      # | card: the street's burn is taken (that card); it takes no other
# a value below 64 is a card kept aside as that street's burn (a reserved burn)
LEDGER = const(8)         # streets 1..7 (the most a game has is 4: room for kept cards after)

# operations that deal, as (name, a, b): what a stopping fault interrupts (Step.stopped)
DO_DEAL = ("deal", 0, 0)
DO_STREET = ("street", 0, 0)
DO_DRAW = ("draw", 0, 0)
DO_PREMATURE = ("premature", 0, 0)  # never interrupted itself: refused while another one is


class Step:
    """The hand's step in progress, one record (was five attributes of Hand): kind, a dealing
    step under way (P_*, 0 none: what a power cut interrupts; the snapshot keeps kind and
    want); want, its target (initial cards dealt, or the board's length); owed, (dest, up,
    ctx) cards a procedure still has to deal; doing, the operation under way as (name, a, b);
    stopped, the operation a stopping fault stopped (repeat it to go on), or None."""

    def __init__(self):
        self.kind = 0
        self.want = 0
        self.owed = []
        self.doing = None
        self.stopped = None
