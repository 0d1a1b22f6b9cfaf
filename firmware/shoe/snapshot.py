# A hand as plain data for the flash, and back. The stub's order is never saved: a restored hand
# knows which cards are in the stub but not their order, so the stub is treated as disordered
# (TDA RP-4) and reshuffled face down in the mechanism before play goes on.
from binascii import hexlify, unhexlify

from shoe import cards as C
from shoe.hand import Hand, DEALING

_SKIP = ("rng", "mech", "z", "house")
_BYTES = ("state", "first_two", "street_burns", "discards")


def save(hand):
    snap = {"game": hand.game, "seats": hand.seats, "button": hand.button, "rules": hand.rules,
            "house": hand.house}
    fields = {}
    for key in hand.__dict__:
        if key in _SKIP:
            continue
        value = hand.__dict__[key]
        fields[key] = list(value) if key in _BYTES else value
    snap["fields"] = fields
    z = hand.z
    snap["zones"] = {
        "stub": sorted(z.stub),  # membership only, never the order
        "board": z.board, "burns": z.burns, "muck": z.muck, "aside": z.aside,
        "seats": [[s, z.seats[s]] for s in z.seats], "removed": z.removed,
        "log": hexlify(z.log).decode(),
    }
    return snap


def restore(snap, rng, mech):
    """The hand back from save(); the stub reshuffled (RP-4) if it was still being dealt."""
    hand = Hand(snap["game"], snap["seats"], snap["button"], snap["rules"], snap["house"], rng,
                None, C.deck(0 if snap["game"] != "shortdeck" else 1))
    fields = snap["fields"]
    for key in fields:
        value = fields[key]
        setattr(hand, key, bytearray(value) if key in _BYTES else value)
    zs = snap["zones"]
    z = hand.z
    for code in range(len(z.where)):
        z.where[code] = 255
    z.stub = list(zs["stub"])
    z.board = list(zs["board"])
    z.burns = list(zs["burns"])
    z.muck = list(zs["muck"])
    z.aside = list(zs["aside"])
    z.removed = list(zs["removed"])
    z.log = bytearray(unhexlify(zs["log"]))
    for zone, codes in ((0, z.stub), (1, z.board), (2, z.burns), (3, z.muck), (4, z.aside)):
        for code in codes:
            z.where[code] = zone
    for pair in zs["seats"]:
        z.seats[pair[0]] = list(pair[1])
        for code in pair[1]:
            z.where[code & C.CODE] = 16 + pair[0]
    hand.mech = mech
    if hand.status == DEALING and z.stub:
        hand.last_street = None
        hand._proc("stub-reshuffle")
        hand._reshuffle(1)
    else:
        hand._load()
    return hand
