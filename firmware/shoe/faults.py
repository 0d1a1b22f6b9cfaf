# What the engine and both hardware faces (hal/rp2mech.py on the Pico, hal/simmech.py in the
# simulator) share of the mechanism, in one place: where a feed sends its card (ROUTE_*) and how
# it stops (the stopping faults and their timing figures).
#
# Stopping faults: the mechanism (or the random source) stopped safe and the operator must act.
# One table for everyone: both hardware layers raise MechanismFault with these kinds
# (hal/rp2mech.py on the Pico, hal/simmech.py in the simulator), the engine logs a fault entry
# with the code when a feed stops (zones.OP_FAULT), the device answers the command with the
# MECHANISM error, and the host names the fault and tells the operator what to do.
# Row: (code, kind). The code is the fault event's first byte: append new rows, never renumber.
# What the operator does about each is shoe/advice.py's (its text, loaded when asked: a Pico's
# heap does not hold it, its hardware face words its own stops).
from shoe.compat import const

# Where the mechanism sends a card it feeds (Mechanism.feed(route)): the engine asks for a route
# (shoe/hand.py), each face sets its diverter by it. The numbers index the pin map's
# diverter.pulse_us in ROUTE_NAMES' order (hal/rp2wire.py; the carousel's fourth position is
# hal.carousel_rp2.ROUTE_SHUFFLE).
ROUTE_OUT = const(0)     # to the table (a seat, the board)
ROUTE_BURN = const(1)    # to the burn pocket
ROUTE_REJECT = const(2)  # to the reject bin (a card nobody read, an extra of a double feed)
ROUTE_NAMES = ("output", "burn", "reject")

FAULTS = (
    (1, "jam"),
    (2, "empty"),
    (3, "lid_open"),
    (4, "reader_silent"),
    (5, "reader_fault"),
    (6, "motor_power"),
    (7, "double_feed_unresolved"),
    (8, "entropy"),
    (9, "carousel_lost_steps"),
    (10, "carousel_no_index"),
    (11, "carousel_pocket"),
    (12, "latched"),
    (13, "escrow_caught"),
    (14, "servo_driver"),
)

JAM = "jam"
EMPTY = "empty"
LID_OPEN = "lid_open"
READER_SILENT = "reader_silent"
READER_FAULT = "reader_fault"
MOTOR_POWER = "motor_power"
DOUBLE_UNRESOLVED = "double_feed_unresolved"
ENTROPY = "entropy"
ENTROPY_CODE = const(8)
LATCHED = "latched"
LATCHED_CODE = const(12)

# How the mechanism meets a fault, shared so that the simulator's faults take the time the
# hardware's do (the rest of the timing is in the pin map, hardware/pinmap.json):
MAGAZINE_FEW = const(3)    # the magazine beam (1 mm above the floor) reads clear under this many
REVERSE_DIVISOR = const(4)  # a jam's reverse runs at a quarter of the cruise step rate


def _row(col, value):
    for row in FAULTS:
        if row[col] == value:
            return row
    return None


def code(kind):
    """The code of a fault kind; ValueError for a kind not in the table."""
    row = _row(1, kind)
    if row is None:
        raise ValueError("unknown fault kind %r" % (kind,))
    return row[0]


def kind(number):
    """The kind of a fault code ("fault-N" for a code this table does not know)."""
    row = _row(0, number)
    return "fault-%d" % number if row is None else row[1]


def advice(number):
    """What the operator does about a fault, by code (shoe/advice.py)."""
    from shoe.advice import ADVICE

    for row in ADVICE:
        if row[0] == number:
            return row[1]
    return "see the shoe's log"


class MechanismFault(Exception):
    """The mechanism stopped safe; `kind` is one of the kinds above (`code` its number),
    `message` tells the operator what to do. Nothing of the feed that raised it reached the
    engine: once the cause is cleared, the same feed is simply tried again."""

    def __init__(self, kind, message):
        super().__init__("%s: %s" % (kind, message))
        self.kind = kind
        self.message = message
        self.code = code(kind)
