# The table's zones and the one path by which a card changes zone.
# Invariant: every card of the game's deck is in exactly one zone; `where` is the truth and the
# lists keep each zone's order. Every change is appended to the compact log (4 bytes an entry),
# which is what the record shows and what the flash journal will store.
from shoe.compat import const
from shoe.cards import UP, CODE, NCODES

STUB = const(0)
BOARD = const(1)
BURNS = const(2)
MUCK = const(3)
ASIDE = const(4)
SEAT0 = const(16)  # seat s is zone SEAT0 + s
NOWHERE = const(255)

ZONE_NAMES = ("stub", "board", "burns", "muck", "aside")

# log opcodes
OP_MOVE = const(1)      # card, from, to | 0x80 if face up
OP_SHUFFLE = const(2)   # mask of mixed zones, count
OP_CUT = const(3)       # count
OP_PROC = const(4)      # procedure number, seat
OP_ACTION = const(5)    # seat, action number
OP_REMOVE = const(6)    # object code
OP_PICK = const(7)      # zone, candidates
OP_STATUS = const(8)    # status number
OP_FAULT = const(9)     # fault code (shoe.faults), zone the card in flight was going to, retries
OP_BET = const(10)      # after an action with chips (betting configured): the seat's total for
#                         the round after it, 24 bits little-endian
OP_STACK = const(11)    # seat: its stack at the start of the hand, in the OP_BET entry after it

# reshuffle mask bits
MIX_STUB = const(1)
MIX_MUCK = const(2)
MIX_BURNS = const(4)


def zone_name(z):
    if z >= SEAT0:
        return "seat:%d" % (z - SEAT0)
    return ZONE_NAMES[z]


class Zones:
    def __init__(self, deck, seats):
        self.where = bytearray(b"\xff" * NCODES)
        self.stub = list(deck)  # top of the stub is the END of the list
        for c in deck:
            self.where[c] = STUB
        self.board = []
        self.burns = []
        self.muck = []
        self.aside = []
        self.seats = {}
        for s in seats:
            self.seats[s] = []
        self.removed = []
        self.log = bytearray()

    def zone(self, z):
        if z >= SEAT0:
            return self.seats[z - SEAT0]
        if z == STUB:
            return self.stub
        if z == BOARD:
            return self.board
        if z == BURNS:
            return self.burns
        if z == MUCK:
            return self.muck
        return self.aside

    def note(self, op, a=0, b=0, c=0):
        self.log.append(op)
        self.log.append(a)
        self.log.append(b)
        self.log.append(c)

    def move(self, card, dst, up=False):
        src = self.where[card]
        lst = self.zone(src)
        if src >= SEAT0:
            for i in range(len(lst)):
                if lst[i] & CODE == card:
                    lst.pop(i)
                    break
        elif src == STUB and lst and lst[-1] == card:
            lst.pop()
        else:
            lst.remove(card)
        if dst >= SEAT0:
            self.seats[dst - SEAT0].append(card | UP if up else card)
        else:
            self.zone(dst).append(card)
        self.where[card] = dst
        self.note(OP_MOVE, card, src, dst | (0x80 if up else 0))

    def turn_up(self, seat, card):
        lst = self.seats[seat]
        for i in range(len(lst)):
            if lst[i] & CODE == card:
                lst[i] = card | UP
        self.note(OP_MOVE, card, SEAT0 + seat, SEAT0 + seat | 0x80)

    def remove(self, code):
        self.removed.append(code)
        self.note(OP_REMOVE, code)

    def count(self):
        """Cards tracked in all zones (the conservation check)."""
        n = len(self.stub) + len(self.board) + len(self.burns) + len(self.muck) + len(self.aside)
        for s in self.seats:
            n += len(self.seats[s])
        return n
