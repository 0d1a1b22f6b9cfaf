# The game table: every game the shoe deals, as data.
from shoe.compat import const
from shoe.cards import FULL, SHORT

BOARD = const(0)
STUD = const(1)
DRAW = const(2)

# name: (kind, deck, hole cards, draw rounds, max players)
GAMES = {
    "holdem": (BOARD, FULL, 2, 0, 10),
    "omaha": (BOARD, FULL, 4, 0, 10),
    "omaha5": (BOARD, FULL, 5, 0, 8),
    "omaha6": (BOARD, FULL, 6, 0, 7),
    "shortdeck": (BOARD, SHORT, 2, 0, 10),
    "stud": (STUD, FULL, 3, 0, 8),
    "stud8": (STUD, FULL, 3, 0, 8),
    "razz": (STUD, FULL, 3, 0, 8),
    "draw5": (DRAW, FULL, 5, 1, 8),
    "triple27": (DRAW, FULL, 5, 3, 6),
}

# Board games: cards per street after the deal (flop, turn, river).
BOARD_STREETS = (3, 1, 1)
# Stud: streets after 3rd (4th, 5th, 6th, 7th): face up?
STUD_STREETS = (True, True, True, False)
STUD_LAST = const(4)  # index of 7th street among the later streets (1-based)
# Stud's initial deal: two down, one up.
STUD_DEAL_UP = (False, False, True)

SEAT_MIN = const(1)
SEAT_MAX = const(10)


def names():
    return sorted(GAMES)


def streets(kind):
    """How many later streets (or draw rounds, given separately) a game kind has."""
    if kind == BOARD:
        return len(BOARD_STREETS)
    if kind == STUD:
        return len(STUD_STREETS)
    return 0
