"""The shoe's events as the host reads them: each 4-byte entry decoded by the field names the
protocol's table gives its kind (wire.EVENTS: move has card, src, dst; procedure has
procedure, seat...), never by opcode numbers, and told as a line of text (`facedown watch`, the
demo's last line)."""

from . import view
from .engine import firmware_imports, wire
from .firmware import load

W = wire()


def decode(entry):
    """(kind, {field: value}) of an event entry, by the table (kind None for an unknown op)."""
    return W.event_fields(entry)


def mask(entry):
    """An event entry as the shoe sends it to anyone without a table session (events.py's
    _mask_events on the shoe): a card going face down anywhere but the board becomes
    HIDDEN."""
    z = firmware_imports().zones
    kind, f = decode(entry)
    if kind == "move" and not f["dst"] & 0x80 and f["dst"] != z.BOARD:
        return bytes((entry[0], W.HIDDEN, f["src"], f["dst"]))
    return bytes(entry)


def describe(entry, hand, rules):
    """One event as a line of text."""
    fw = firmware_imports()
    z = fw.zones
    kind, f = decode(entry)
    if kind == "move":
        src = "" if f["src"] == z.STUB else " from %s" % z.zone_name(f["src"])
        card = f["card"]
        return "%s%s -> %s%s" % ("??" if card == W.HIDDEN else fw.cards.name(card), src,
                                 z.zone_name(f["dst"] & 0x7F),
                                 " (face up)" if f["dst"] & 0x80 else "")
    if kind == "shuffle":
        return "face-down reshuffle of %d cards" % f["count"]
    if kind == "cut":
        return "cut"
    if kind == "procedure":
        p, seat = f["procedure"], f["seat"]
        return "PROCEDURE %s %s%s: %s" % (fw.procedures.rule(p, rules), fw.procedures.pid(p),
                                         " (seat %d)" % seat if seat else "",
                                         fw.procedures.text(p))
    if kind == "action":
        actions = load("shoe.hand").ACTIONS
        k = f["kind"] & 0x7F
        return "seat %d %s%s" % (f["seat"], actions[k] if k < len(actions) else f["kind"],
                                 " (out of turn)" if f["kind"] & 0x80 else "")
    if kind == "stack":
        return "seat %d's stack at the start of the hand:" % f["seat"]
    if kind == "bet":
        return "  ... to %d" % (f["lo"] | f["mid"] << 8 | f["hi"] << 16)
    if kind == "remove":
        return "%s removed from play" % fw.cards.name(f["card"])
    if kind == "pick":
        return "random pick among %d cards" % f["candidates"]
    if kind == "status":
        return "hand %d is %s" % (hand, ("dealing", "complete", "MISDEAL", "VOID")[f["status"]])
    if kind == "fault":
        F = fw.faults
        e = {"dest": z.zone_name(f["dest"]) if f["dest"] != z.NOWHERE else None,
             "retries": f["retries"]}
        return "FAULT %s%s: the shoe stopped; %s" % (F.kind(f["kind"]), view.fault_where(e),
                                                    F.advice(f["kind"]))
    return "event %r" % (bytes(entry),)


# the kinds after which `facedown watch` redraws the betting line (pot, turn, options)
BETTING_KINDS = ("action", "bet", "stack", "status")
