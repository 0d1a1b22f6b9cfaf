"""Open Hand History (OHH 1.4.x JSON) from a finished hand's ledger record, validated against
the JSON Schema the project keeps (schemas/ohh-1.4.schema.json).

What the shoe knows goes in: the seats, every hole card, the board by street, the betting
actions in turn, the button. Chip amounts are not the shoe's: blinds are null (allowed since
1.4.4), amounts are left out (optional), stacks 0, no pots. OHH has no place for burns,
procedures or misdeals: those are in the ledger (`facedown ledger card`) and the PHH export;
a misdealt or void hand is not a played hand and is not exported."""

import json
import os
import time

from . import __version__
from .errors import UserError

SPEC_VERSION = "1.4.7"
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas",
                      "ohh-1.4.schema.json")
GAME_TYPES = {"holdem": "Holdem", "omaha": "Omaha", "omaha5": "Omaha", "omaha6": "Omaha"}
ACTIONS = {"check": "Check", "call": "Call", "bet": "Bet", "raise": "Raise", "fold": "Fold",
           "allin": "Raise"}
STREETS = ((0, "Preflop"), (3, "Flop"), (4, "Turn"), (5, "River"))


def _schema():
    with open(SCHEMA) as f:
        return json.load(f)


def validate(doc):
    """Raise UserError with the first problem if doc is not a valid OHH 1.4 object."""
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(_schema()).iter_errors(doc),
                    key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        raise UserError("not valid OHH 1.4 at %s: %s" % (
            "/".join(str(p) for p in e.absolute_path) or "the top", e.message))
    return doc


def exportable(rec):
    """None if the hand can go to OHH, else why not (one line)."""
    if rec["game"] not in GAME_TYPES:
        return "OHH 1.4 has no game type for %s: export it as PHH (--format phh)" % rec["game"]
    if rec["status"] != "complete":
        return "hand %s was a %s, not a played hand" % (rec.get("hand"), rec["status"])
    return None


def to_ohh(rec, shoe, epoch, table_name=None, bet_type="NL", currency="USD"):
    """The OHH object of a ledger hand record (ledger.Ledger.hand_record)."""
    why = exportable(rec)
    if why:
        raise UserError(why)
    from .engine import firmware_imports

    fw = firmware_imports()
    seats = sorted(int(s) for s in rec["seats"])
    number = [0]

    def act(player, what, **extra):
        number[0] += 1
        out = {"action_number": number[0], "player_id": player, "action": what}
        out.update(extra)
        return out

    rounds = [{"id": 0, "street": "Preflop", "actions": [
        act(s, "Dealt Cards", cards=[c["card"] for c in rec["seats"][str(s)]]) for s in seats]}]
    board_seen = 0
    for e in rec["log"]:
        if e.get("to") == "board":
            board_seen += 1
        elif "from" in e and e["from"] == "board":
            board_seen -= 1
        elif "action" in e:
            street = [name for n, name in STREETS if board_seen >= n][-1]
            if rounds[-1]["street"] != street:
                rounds.append({"id": len(rounds), "street": street, "actions": []})
            extra = {"is_allin": True} if e["action"] == "allin" else {}
            rounds[-1]["actions"].append(act(e["seat"], ACTIONS[e["action"]], **extra))
    board = rec["board"]
    by_street = {"Flop": board[0:3], "Turn": board[3:4], "River": board[4:5]}
    for n, street in STREETS[1:]:
        if len(board) < n:
            break
        found = [r for r in rounds if r["street"] == street]
        if found:
            found[0]["cards"] = by_street[street]
        else:
            rounds.append({"id": len(rounds), "street": street, "cards": by_street[street],
                           "actions": []})
    rounds.sort(key=lambda r: [name for _, name in STREETS].index(r["street"]))
    for i, r in enumerate(rounds):
        r["id"] = i
    started = rec.get("started") or time.time()
    doc = {"ohh": {
        "spec_version": SPEC_VERSION, "site_name": "facedown", "network_name": "facedown",
        "internal_version": __version__, "tournament": False,
        "game_number": "%s-%d-%d" % (shoe, epoch, rec["hand"]),
        "start_date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "table_name": table_name or shoe, "game_type": GAME_TYPES[rec["game"]],
        "bet_limit": {"bet_type": bet_type}, "table_size": fw.games.GAMES[rec["game"]][4],
        "currency": currency, "dealer_seat": rec["button"] or 0,
        "small_blind_amount": None, "big_blind_amount": None, "ante_amount": 0,
        "players": [{"id": s, "seat": s, "name": "Seat %d" % s, "starting_stack": 0}
                    for s in seats],
        "rounds": rounds, "pots": []}}
    return validate(doc)
