# Cards: rank 23456789TJQKA + suit cdhs ("Td"); "Jk" is a joker, never part of a game's deck.
# A card is a small int: rank * 4 + suit (0..51); the joker is 52. Bit UP marks a card held face up.
from shoe.compat import const

RANKS = "23456789TJQKA"
SUITS = "cdhs"
JOKER = const(52)
UP = const(64)
CODE = const(63)
NCODES = const(53)

FULL = const(0)
SHORT = const(1)


def parse(text):
    """'Td' -> 34. Raises ValueError naming the text for anything else."""
    if text == "Jk":
        return JOKER
    if not isinstance(text, str) or len(text) != 2:
        raise ValueError("unknown card %r" % (text,))
    r = RANKS.find(text[0])
    s = SUITS.find(text[1])
    if r < 0 or s < 0:
        raise ValueError("unknown card %r" % (text,))
    return r * 4 + s


def name(code):
    code &= CODE
    if code == JOKER:
        return "Jk"
    return RANKS[code >> 2] + SUITS[code & 3]


def deck(kind):
    """The game's deck in a fixed order: 52 cards, or 36 (6 through A) for short deck."""
    return list(range(52 - deck_size(kind), 52))


def deck_size(kind):
    return 36 if kind == SHORT else 52


def in_deck(code, kind):
    return (16 if kind == SHORT else 0) <= code < 52
