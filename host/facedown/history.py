"""Hand histories kept on the shoe: `facedown --port PORT history [--last N | --hand N]`.

Each stored hand comes back from the shoe's flash journal with every movement and procedure, and
the hash chain that links it to the hand before: the host recomputes each hash and checks each
link, so a changed or missing record shows."""

import hashlib
import json
import struct

from . import view
from .errors import UserError
from .progress import track
from .mirror import Mirror, StreamError


def add_command(sub):
    p = sub.add_parser("history", help="hand histories stored on the shoe (hash-chained)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--last", type=_count, default=20, metavar="N", help="the last N hands")
    which.add_argument("--hand", type=_count, metavar="N", help="one hand by number (from 1)")
    p.add_argument("--json", action="store_true", help="the hand records as JSON")
    p.add_argument("--format", choices=("table", "json", "phh"), default=None,
                   help="table (default), json, or phh (the open hand-history format)")
    p.set_defaults(func=run)


def _count(text):
    import argparse

    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("a number 1 or more, not %r" % text)
    if n < 1:
        raise argparse.ArgumentTypeError("a number 1 or more, not %d" % n)
    return n


def fetch(client, number):
    """The raw document of one stored hand (hand 0: the list of stored hand numbers)."""
    chunks = []
    offset = 0
    while True:
        size, chunk = client.call("history", number, offset)
        chunks.append(bytes(chunk))
        offset += len(chunk)
        if offset >= size or not chunk:
            return b"".join(chunks)


def stored(client):
    """(stored hand numbers, damaged areas the shoe's journal reports)."""
    doc = fetch(client, 0)
    return [doc[i] | doc[i + 1] << 8 for i in range(2, len(doc), 2)], doc[0] | doc[1] << 8


class BadDocument(UserError):
    """A hand history from the shoe that does not follow the format (a damaged or forged
    document): one clear error, not a traceback."""

    def __init__(self, doc, why):
        UserError.__init__(self, "the shoe sent a malformed hand history (%d bytes): %s" % (
            len(doc), why))


def parse(doc):
    try:
        hand, first, flags = struct.unpack_from("<HIB", doc, 0)
        prev = doc[7:39]
        digest = doc[39:71]
        n = doc[71]
        head = doc[72:72 + n]
        entries = doc[72 + n:]
        cfg = json.loads(head[6:].decode())
        game, seats, button, rules, house = cfg[:5]
        profile = cfg[5] if len(cfg) > 5 else None  # configured from a house profile
    except (struct.error, IndexError, ValueError, TypeError) as e:
        raise BadDocument(doc, e)
    return {"hand": hand, "first_event": first, "closed": bool(flags & 1),
            "damaged": bool(flags & 2), "prev": prev, "hash": digest, "head": head,
            "entries": entries, "game": game, "seats": seats, "button": button,
            "rules": rules, "house": house, "profile": profile}


def verify(h, previous=None):
    """Problems with one stored hand: its own hash, and its link to the hand before."""
    problems = []
    if h["damaged"]:
        problems.append("the shoe found damaged records in hand %d" % h["hand"])
    if h["closed"]:
        digest = hashlib.sha256(h["prev"] + h["head"] + h["entries"]).digest()
        if digest != h["hash"]:
            problems.append("hand %d does not match its hash" % h["hand"])
        if previous is not None and previous["closed"] and previous["hand"] + 1 == h["hand"] \
                and previous["hash"] != h["prev"]:
            problems.append("hand %d does not follow hand %d (the chain is broken)" % (
                h["hand"], previous["hand"]))
    return problems


def to_record(h):
    try:
        m = Mirror(h["game"], h["seats"], h["button"], h["rules"])
        e = h["entries"]
        for i in range(0, len(e) - 3, 4):
            m.apply(e[i:i + 4])
        rec = m.record()
    except (StreamError, KeyError, IndexError, ValueError, TypeError) as e:
        raise BadDocument(h["head"], "%s: %s" % (type(e).__name__, e))
    rec["hand"] = h["hand"]
    # the table as configured for the hand (what a floor person settling a dispute needs)
    rec["config"] = {"game": h["game"], "seats": list(h["seats"]), "button": h["button"],
                     "rules": h["rules"], "house": dict(h["house"] or {}),
                     "profile": h["profile"]}
    if "betting" in rec["config"]["house"]:  # the bets, the pots and the payout (docs/betting.md)
        from .payout import settle_record

        rec["chips"] = settle_record(rec)
    return rec


def run(args):
    from .commands import config_line, connect

    fmt = args.format or ("json" if args.json else "table")
    client = connect(args)
    try:
        numbers, damaged = stored(client)
        if args.hand is not None:
            if args.hand not in numbers:
                raise UserError("hand %d is not stored on the shoe (it has %s)" % (
                    args.hand, "%d..%d" % (numbers[0], numbers[-1]) if numbers else "none"))
            wanted = [args.hand]
        else:
            wanted = numbers[-args.last:] if args.last > 0 else []
        hands = []
        prev = None
        for n in track(wanted, "reading %d hands from the shoe" % len(wanted)):
            h = parse(fetch(client, n))
            h["problems"] = verify(h, prev)
            if prev is not None and h["hand"] > prev["hand"] + 1:
                h["problems"].append("hand %d is missing before it" % (h["hand"] - 1))
            hands.append(h)
            prev = h
    finally:
        client.close()
    records = [to_record(h) for h in hands]
    bad = sum(1 for h in hands if h["problems"])
    if damaged:
        print("WARNING: the shoe's journal has %d damaged area(s): records there are not taken "
              "(see the shoe's log)" % damaged)
    if fmt == "json":
        print(json.dumps([dict(r, verified=not h["problems"], problems=h["problems"])
                          for r, h in zip(records, hands)], indent=1))
    elif fmt == "phh":
        from .phh import dumps

        for r in records:
            print(dumps(r))
    else:
        for r, h in zip(records, hands):
            mark = "chain ok" if not h["problems"] else "; ".join(h["problems"])
            print(view.render(r, title="hand %d  [%s]\n  config   %s" % (
                h["hand"], mark, config_line(r["config"]))))
            if "chips" in r:
                from .payout import lines

                print("\n".join(lines(r["chips"])))
            print()
        print("%s shown of %d stored; %d failed verification" % (
            view.count(len(hands), "hand"), len(numbers), bad))
    return 1 if bad or damaged else 0
