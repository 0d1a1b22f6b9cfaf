# The hand record: what the host sees of a hand. The stub is a count: its cards and order never
# appear here.
from shoe import cards as C
from shoe import faults as F
from shoe.zones import (zone_name, STUB, NOWHERE, OP_MOVE, OP_SHUFFLE, OP_CUT, OP_PROC,
                        OP_ACTION, OP_REMOVE, OP_PICK, OP_FAULT, OP_BET, OP_STACK, MIX_MUCK,
                        MIX_BURNS)
from shoe.hand import STATUS_NAMES, ACTIONS


def _names(codes):
    return [C.name(c) for c in codes]


def log_entries(hand, start=0):
    """Decode the compact log from entry `start` on, as the record's list of dicts."""
    log = hand.z.log
    out = []
    i = start * 4
    P = None  # the procedures' catalogue, read at the first procedure (shoe.hand.procedure)
    while i < len(log):
        op, a, b, c = log[i], log[i + 1], log[i + 2], log[i + 3]
        i += 4
        if op == OP_MOVE:
            e = {"card": C.name(a), "to": zone_name(c & 0x7f), "up": bool(c & 0x80)}
            if b != STUB:
                e["from"] = zone_name(b)
        elif op == OP_SHUFFLE:
            what = "stub"
            if a & MIX_MUCK:
                what += "+muck"
            if a & MIX_BURNS:
                what += "+burns"
            e = {"reshuffle": what, "cards": b}
        elif op == OP_CUT:
            e = {"cut": True, "cards": a}
        elif op == OP_PROC:
            if P is None:
                from shoe import procedures as P
            e = {"procedure": P.pid(a), "rule": P.rule(a, hand.rules)}
            if b:
                e["seat"] = b
        elif op == OP_ACTION:
            e = {"action": ACTIONS[b & 0x7F], "seat": a}
            if b & 0x80:
                e["out_of_turn"] = True
        elif op == OP_BET:  # the amount of the action before it: the seat's total this round
            e = {"total": a | (b << 8) | (c << 16)}  # (after a procedure: the chips it moved)
            if out and "action" in out[-1]:
                out[-1].update(e)
                continue
            if out and "procedure" in out[-1]:
                out[-1]["chips"] = e["total"]
                continue
            if out and "stack" in out[-1]:
                out[-1]["stack"] = e["total"]
                continue
        elif op == OP_STACK:  # a seat's stack at the start of the hand (the amount follows)
            e = {"seat": a, "stack": 0}
        elif op == OP_REMOVE:
            e = {"card": C.name(a), "to": "removed"}
        elif op == OP_PICK:
            e = {"pick": "random", "from": zone_name(a), "of": b}
        elif op == OP_FAULT:  # the shoe stopped; the card it was feeding stayed in the stub
            e = {"fault": F.kind(a)}
            if b != NOWHERE:
                e["dest"] = zone_name(b)
            if c:
                e["retries"] = c
        else:  # OP_STATUS
            e = {"status": STATUS_NAMES[a]}
        out.append(e)
    return out


def _named(hand, op, name):
    log = hand.z.log
    out = []
    for i in range(0, len(log), 4):
        if log[i] == op:
            out.append(name(log[i + 1]))
    return out


def procedures(hand):
    nums = _named(hand, OP_PROC, int)
    if not nums:
        return nums
    from shoe import procedures as P  # read when the hand applied one (shoe.hand.procedure)

    return [P.pid(n) for n in nums]


def faults(hand):
    """The stopping faults of the hand, in order (kinds of shoe.faults)."""
    return _named(hand, OP_FAULT, F.kind)


def record(hand, log=True):
    """The hand record; log=False leaves out the log (the device's status: less heap)."""
    z = hand.z
    seats = {}
    for s in hand.seats:
        seats[str(s)] = [{"card": C.name(c), "up": bool(c & C.UP)} for c in z.seats[s]]
    return {
        "game": hand.game,
        "rules": hand.rules,
        "button": hand.button,
        "status": STATUS_NAMES[hand.status],
        "reason": hand.reason,
        "seats": seats,
        "board": _names(z.board),
        "burns": _names(z.burns),
        "muck": _names(z.muck),
        "aside": _names(z.aside),
        "removed": _names(z.removed),
        "stub": len(z.stub),
        "procedures": procedures(hand),
        "faults": faults(hand),
        "log": log_entries(hand) if log else None,
    }


