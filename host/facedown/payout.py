"""The chips of a hand that was bet, from the shoe's record alone (issue 17): the bets played back
through the firmware's own engine (shoe.betting via shoe.bets, the code the shoe ran), then the
showdown, the main and side pots and the odd chips by facedown.pots (pokerkit's evaluators, TDA
20/21 or Robert's), and the payout per seat.

    settle(record) -> None (the table was not bet) or
        {"structure", "contributions": {seat: chips}, "dead", "returned": {seat: chips},
         "folded": [...], "pots": [...], "payouts": {seat: chips},
         "stacks": {"start": {...}, "end": {...}} (when the stacks were known)}

A record is a hand record with its "config" (`facedown history --json` gives both). A misdeal or
a void hand gives every chip back to the seat that put it out.
"""

from . import firmware, pots
from .engine import firmware_imports
from .errors import UserError


class _RecordHand:
    """What shoe.bets.Bets reads of a hand, from a hand record: the game, the seats and their
    cards in the order received (down cards may be masked), the house settings."""

    def __init__(self, record, config):
        fw = firmware_imports()
        game = record.get("game") or config.get("game")
        if game not in fw.games.GAMES:
            raise UserError("the record's game %r is not known" % (game,))
        self.game = game
        self.kind, _, _, self.draws, _ = fw.games.GAMES[game]
        self.rules = record.get("rules") or config.get("rules") or "tda2024"
        house = dict(config.get("house") or {})
        try:
            self.house = fw.house.profile(self.rules, house)
        except ValueError as e:
            raise UserError("the record's house settings: %s" % e)
        self.seats = sorted(int(s) for s in config.get("seats") or record["seats"])
        self.button = record.get("button", config.get("button"))
        self.deal_order = self.seats  # stud's deal order: from the lowest seat
        self.seat_states = bytearray(fw.games.SEAT_MAX + 1)
        self.bets = None
        cards = fw.cards

        class Z:
            seats = {}

        for s in self.seats:
            held = []
            for c in record["seats"].get(str(s), []):
                code = cards.parse(c["card"]) if c["card"] != "??" else 0
                held.append(code | cards.UP if c["up"] else code)
            Z.seats[s] = held
        self.z = Z

    def live(self, seat):
        b = self.bets.b if self.bets is not None else None
        return b is None or not b.folded[seat]

    def streets_done(self):
        return 8  # a round begins at the first action after its cards (shoe.bets._sync)


def replay(record, config, trace=None):
    """The firmware's betting engine, played through the record's actions: a shoe.betting
    Betting as it stood at the end of the hand (None when the table was not bet). trace, a
    list: (record log index, engine entry) appended for every entry the engine logged at that
    record entry (an action out of turn is applied at the entry where its turn came)."""
    raw = (config.get("house") or {}).get("betting")
    if raw is None:
        return None
    fw = firmware_imports()
    bets_module = firmware.load("shoe.bets")
    Bets, WITH_TO = bets_module.Bets, bets_module.WITH_TO
    ShoeError = firmware.load("shoe.errors").ShoeError

    kills = firmware.load("shoe.procedures").KILLS
    h = _RecordHand(record, config)
    try:
        bets = h.bets = Bets(h, raw, replaying=True)
        stacks = {e["seat"]: e["stack"] for e in record.get("log") or [] if "stack" in e}
        if stacks:  # given for this hand over the wire (the stacks command)
            bets.set_stacks(stacks, False)
        for i, e in enumerate(record.get("log") or []):
            seen = len(bets.b.log) if bets.b is not None else 0
            if e.get("procedure") in kills and e.get("seat"):
                bets.kill(e["seat"])  # a dealing procedure killed the hand: folded
            elif "procedure" in e and "chips" in e:  # chips over a declaration, to the pot
                bets.b.to_pot(e["seat"], e["chips"])
            elif "action" in e and e["seat"] in bets.dead:
                continue  # the action that found its hand dead is no action in the betting
            elif "action" in e:
                bets._sync()
                kind = e["action"]
                amount = e.get("total") if kind in WITH_TO else None
                if e.get("out_of_turn"):
                    bets.b.out_of_turn(e["seat"], kind, amount)
                else:
                    bets.b.act(e["seat"], kind, amount)
            if trace is not None and bets.b is not None:
                trace.extend((i, entry) for entry in bets.b.log[seen:])
    except ShoeError as e:
        raise UserError("the record's bets do not play back: %s" % e.message)
    del fw
    return bets.b


def settle(record, config=None):
    """The hand's chips: contributions, pots, odd chips and the payout (see the module)."""
    config = config if config is not None else record.get("config") or {}
    b = replay(record, config)
    if b is None:
        return None
    seats = b.seats
    out_total = {s: b.start[s] - b.stack[s] for s in seats}  # every chip each seat put out
    out = {"structure": b.cfg["structure"],
           "contributions": {str(s): b.put[s] for s in seats},
           "dead": b.dead,
           "returned": {str(s): b.returned[s] for s in seats if b.returned[s]},
           "folded": [s for s in seats if b.folded[s]]}
    status = record.get("status")
    if status == "dealing":  # the hand goes on: what is in, no payout yet
        out["pots"] = []
        out["payouts"] = None
        return out
    if status in ("misdeal", "void"):
        out["pots"] = []
        payouts = {s: n for s, n in out_total.items() if n}
    else:
        bets = {"contributions": out["contributions"], "folded": out["folded"],
                "chip": b.cfg["chip"], "rules": record.get("rules") or "tda2024"}
        table = pots.read_table(record, bets)
        dist = pots.distribute(table, b.dead)
        out["pots"] = pots.as_json(dist)["pots"]
        payouts = dict(dist.payouts)
    out["payouts"] = {str(s): n for s, n in sorted(payouts.items()) if n}
    if sum(payouts.values()) != sum(out_total.values()):
        raise UserError("the payout (%d) is not the chips put out (%d)" % (
            sum(payouts.values()), sum(out_total.values())))
    if b.known:
        out["stacks"] = {"start": {str(s): b.start[s] for s in seats},
                         "end": {str(s): b.stack[s] + payouts.get(s, 0) for s in seats}}
    return out


def settle_record(record):
    """settle(), or {"error": why} when the record's chips do not add up (shown, not raised:
    a history is read to settle a dispute)."""
    try:
        return settle(record)
    except UserError as e:
        return {"error": str(e)}


def lines(settled):
    """The chips of a hand as the floor reads them: pots, payouts, stacks."""
    if settled is None:
        return []
    if "error" in settled:
        return ["  chips    CANNOT SETTLE: %s" % settled["error"]]
    out = ["  chips    in: %s%s" % (", ".join("seat %s %d" % kv for kv in sorted(
        settled["contributions"].items(), key=lambda kv: int(kv[0])) if kv[1]),
        "; dead %d" % settled["dead"] if settled["dead"] else "")]
    if settled["returned"]:
        out.append("           uncalled back: %s" % ", ".join(
            "seat %s %d" % kv for kv in sorted(settled["returned"].items())))
    names = ["main pot"] + ["side pot %d" % i for i in range(1, len(settled["pots"]))]
    for name, p in zip(names, settled["pots"]):
        won = dict(p["high"])
        for s, n in p["low"].items():
            won[s] = won.get(s, 0) + n
        out.append("           %s %d (seats %s): %s%s" % (
            name, p["amount"], " ".join(map(str, p["eligible"])),
            ", ".join("seat %s %d" % kv for kv in sorted(won.items())),
            "".join("; odd chip to seat %s (%s)" % (c["seat"], c["rule"])
                    for c in p["odd_chips"] if c.get("seat") is not None)))
    if settled["payouts"] is None:
        out.append("  payout   - (the hand is not over)")
        return out
    out.append("  payout   %s" % (", ".join("seat %s %d" % kv for kv in
                                            settled["payouts"].items()) or "-"))
    if "stacks" in settled:
        out.append("  stacks   %s" % ", ".join(
            "seat %s %d -> %d" % (s, settled["stacks"]["start"][s], settled["stacks"]["end"][s])
            for s in sorted(settled["stacks"]["start"], key=int)))
    return out
