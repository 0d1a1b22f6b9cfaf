"""The commands that talk to a shoe, virtual or real: `facedown --port PORT COMMAND ...`.
Each prints what the shoe answered (the table after a dealing command)."""

import argparse
import json
import os
import sys
import time

from . import view
from .client import Client, LinkDown, ShoeError
from .engine import firmware_imports, wire
from .errors import UserError
from .events import BETTING_KINDS, decode, describe

W = wire()
ACTIONS = ("check", "call", "bet", "raise", "fold", "allin", "complete", "bringin")
PROFILE_MAX = firmware_imports().house.PROFILE_MAX  # of a profile's name, the shoe keeps


def _seats(text):
    """'1-6,8' -> [1, 2, 3, 4, 5, 6, 8]"""
    out = []
    try:
        for part in text.split(","):
            if "-" in part:
                a, b = part.split("-")
                a, b = int(a), int(b)
                if a > b:
                    raise argparse.ArgumentTypeError(
                        "%d-%d runs backwards: write the lower seat first (%d-%d)" % (a, b, b, a))
                out.extend(range(a, b + 1))
            elif part.strip():
                out.append(int(part))
    except ValueError:
        raise argparse.ArgumentTypeError("seats must look like 1-6,8 (not %r)" % text)
    if not out:
        raise argparse.ArgumentTypeError("no seat in %r: seats look like 1-6,8" % text)
    for s in out:
        if not 1 <= s <= 10:
            raise argparse.ArgumentTypeError("seat %d: seats are 1..10" % s)
    if len(set(out)) != len(out):
        raise argparse.ArgumentTypeError("a seat is named twice in %r" % text)
    return sorted(out)


def _seat(text):
    """A seat number 1..10 (argparse type)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("a seat is a number 1..10, not %r" % text)
    if not 1 <= n <= 10:
        raise argparse.ArgumentTypeError("seats are 1..10, not %d" % n)
    return n


def _positive(text):
    """A card number counted from 1 (argparse type)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("a number 1 or more, not %r" % text)
    if n < 1:
        raise argparse.ArgumentTypeError("counts from 1 (1 = the first card the seat "
                                         "received), not %d" % n)
    return n


def _chips(text):
    try:
        n = int(text)
    except ValueError:
        n = -1
    if not 0 <= n < W.NO_AMOUNT:
        raise argparse.ArgumentTypeError("an amount is a whole number of chips, not %r" % text)
    return n


def _value(text):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    return text


def _bet_value(key, text):
    """A --bet value: blinds/straddles a list of numbers, structure a word, the rest a number."""
    if key == "structure":
        return text
    try:
        if key in ("blinds", "straddles"):
            return [int(x) for x in text.replace("/", ",").split(",") if x.strip()]
        return int(text)
    except ValueError:
        raise UserError("--bet %s=%s: %s" % (key, text, "a list of chip amounts, e.g. "
                                              "%s=50,100" % key if key in ("blinds", "straddles")
                                              else "a whole number of chips"))


def add_command(sub):
    p = sub.add_parser("identify", help="the shoe's versions, id, capabilities and messages")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=identify)

    p = sub.add_parser("config", help="set the game, seats, button and house rules (between hands)")
    p.add_argument("--profile", metavar="FILE",
                   help="a house profile (TOML, see docs/profiles.md): its game, seats, button, "
                        "rules and house settings are the defaults the other flags override")
    p.add_argument("--game", help="holdem, omaha, stud, draw5, ... (needed unless the profile "
                                  "gives it)")
    p.add_argument("--seats", type=_seats, help="occupied seats, e.g. 1-9 (needed unless the "
                                                "profile gives them)")
    p.add_argument("--button", type=_seat, default=None,
                   help="the dealer button's seat, one of --seats (default: the profile's, "
                        "else the highest seat; stud has none)")
    p.add_argument("--rules", default=None, help="tda2024 (default) or robert")
    p.add_argument("--house", action="append", default=[], metavar="SETTING=VALUE",
                   help="override one house setting (repeatable; over the profile's)")
    p.add_argument("--bet", action="append", default=[], metavar="KEY=VALUE",
                   help="how the game is bet, one key a flag (repeatable; over the profile's "
                        "[betting]): structure=nl|pl|fl, blinds=50,100, ante=N, bb_ante=N, "
                        "straddles=200,400, bring_in=N, small_bet=N, big_bet=N, cap=N, chip=N, "
                        "stacks=N (see docs/betting.md)")
    p.add_argument("--no-bet", action="store_true",
                   help="deal without betting (drop the profile's [betting])")
    p.add_argument("--json", action="store_true", help="the shoe's status afterwards, as JSON")
    p.set_defaults(func=config)

    p = sub.add_parser("status", help="the table as the shoe knows it")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=status)

    p = sub.add_parser("hand", help="start the next hand (the shoe shuffles)")
    p.add_argument("--button", type=_seat, default=0,
                   help="button seat (default: moves on; stays after a misdeal)")
    p.set_defaults(func=hand)

    p = sub.add_parser("deal", help="the initial deal (starts a hand if none is in progress)")
    p.add_argument("--cards", type=_positive, default=0, help="only the next N cards of it")
    p.set_defaults(func=deal)

    p = sub.add_parser("street", help="the next street: burn, then the board or stud cards")
    p.set_defaults(func=simple, command="street")

    p = sub.add_parser("draw", help="one draw round")
    p.add_argument("--discard", action="append", default=[], metavar="SEAT:CARDS",
                   help="a seat's discards, e.g. 3:2c,7d (repeatable; seats not named stand pat)")
    p.set_defaults(func=draw)

    text = ("a betting action, reported as it happens: the shoe counts it toward the misdeal "
            "window and the missing-card procedures; on a table that is not bet it does not "
            "check the order of play, on a table that is bet it checks the order and the "
            "amount (docs/betting.md)")
    p = sub.add_parser("action", help=text, description=text)
    p.add_argument("seat", type=_seat)
    p.add_argument("kind", choices=ACTIONS + ("chips",),
                   help="what the seat declared; chips: nothing declared, the chips put out "
                        "(AMOUNT) make the action (TDA 44, 45, 43-B)")
    p.add_argument("amount", nargs="?", type=_chips,
                   help="chips: the seat's total for the round after a bet, raise, completion "
                        "or all-in (raise to N); a call's chips; after chips: the chips put out")
    p.add_argument("--out-of-turn", action="store_true",
                   help="the seat acted ahead of the order of play: the house's procedure "
                        "deals with it (TDA 53, Robert's or the home rule; a table that is bet)")
    p.add_argument("--chips", type=_chips, metavar="N", dest="put",
                   help="the chips the seat put out with its declaration: fewer are completed, "
                        "more go back or stay in the pot by the house (TDA 40-41, seed 003)")
    p.add_argument("--smallest", type=_chips, default=0, metavar="N",
                   help="the smallest chip among those put out (TDA 45); default the table's")
    p.add_argument("--one-chip", action="store_true",
                   help="a single chip was put out (TDA 44: facing a bet, not declared, a call)")
    p.add_argument("--string", action="store_true",
                   help="put out in several motions, not declared: a string bet (TDA 56)")
    p.add_argument("--noticed", action="store_true",
                   help="the player noticed the excess chips first (seed 003: they go back)")
    p.set_defaults(func=action)

    text = ("every seat's stack at the start of this hand, after `hand` and before `deal` (a "
            "table that is bet): an action beyond a stack is refused, an all-in is the stack; "
            "for this hand they replace the configuration's stacks")
    p = sub.add_parser("stacks", help=text, description=text)
    p.add_argument("stack", nargs="+", metavar="SEAT=CHIPS", help="e.g. 1=12000 2=8500")
    p.set_defaults(func=stacks)

    p = sub.add_parser("report", help="report an irregularity to the shoe")
    p.add_argument("what", choices=("exposed", "premature", "misdeal"))
    p.add_argument("--seat", type=_seat, default=0, help="exposed: the seat")
    p.add_argument("--card", type=_positive, default=0,
                   help="exposed: which card (1 = first received)")
    p.set_defaults(func=report)

    p = sub.add_parser("end", help="the hand is over")
    p.set_defaults(func=simple, command="end")

    p = sub.add_parser("watch", help="a live stream of the shoe's events")
    p.add_argument("--backlog", action="store_true",
                   help="start from the oldest event the shoe still holds")
    p.add_argument("--seconds", type=float, default=0, help="stop after this long (0: never)")
    p.add_argument("--lines", action="store_true",
                   help="one line per event instead of the live table")
    p.set_defaults(func=watch)

    p = sub.add_parser("recover", help="after a power cut caught a card in flight: the card "
                                       "found at the output")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--card", help="the card found at the output, e.g. Ah")
    which.add_argument("--none", action="store_true", help="no card was found there")
    p.set_defaults(func=recover)


    p = sub.add_parser("login", help="open a session for the commands that follow (the key "
                                     "from --key-file, $FACEDOWN_KEY_FILE, $FACEDOWN_KEY or "
                                     "the key store; never from an argument)")
    p.add_argument("--role", choices=("table", "maintenance"), default="table")
    p.add_argument("--key-file", metavar="FILE", help="the shoe's key file")
    p.set_defaults(func=login)

    p = sub.add_parser("logout", help="end the session")
    p.set_defaults(func=logout)

    p = sub.add_parser("audit", help="the shoe's audit log, its hash chain checked "
                                     "(maintenance session)")
    p.add_argument("--json", action="store_true", help="the records as JSON lines")
    p.set_defaults(func=audit)

    p = sub.add_parser("keys", help="the key store: list the shoes' keys, or derive a table key")
    p.add_argument("action", choices=("list", "derive"))
    p.add_argument("--device", help="derive: the shoe's id (its key in the key store)")
    p.add_argument("--key-file", metavar="FILE", help="derive: from this key file instead")
    p.add_argument("--role", choices=("table", "maintenance"), default="table")
    p.add_argument("--out", metavar="FILE", help="derive: where to write the role's key file")
    p.set_defaults(func=keys_command)

    p = sub.add_parser("telemetry", help="counters and faults (never card data)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=telemetry)


def connect(args, backlog=False, on_event=None, catalogue=False):
    """A client on --port, identified and attached, with the session `facedown login` opened
    (if any) for this port and shoe; no new login (the commands run as the role logged in)."""
    from .client import connect as open_client

    from . import served

    if not args.port:
        raise UserError("this command talks to a shoe: give --port PORT",
                        hint="`facedown sim` starts a virtual shoe and prints its port")
    remote = served.connect(args.port, backlog=backlog, on_event=on_event)
    if remote is not None:  # `facedown serve` owns the port: through it
        return remote
    client = open_client(args.port, backlog=backlog, stored=True, find=False,
                         catalogue=catalogue, on_event=on_event)
    _unanswered_note(args.port)
    return client


def _unanswered_path(port):
    from . import keys

    return keys.session_path(port)[:-len(".json")] + ".unanswered"


def _unanswered(port, command):
    """A command that got no answer: the next command on this port says so (the shoe may have
    carried it out, in part, before it stopped answering)."""
    path = _unanswered_path(port)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"command": command, "time": time.time()}, f)
    return path


def _unanswered_note(port):
    path = _unanswered_path(port)
    try:
        with open(path) as f:
            d = json.load(f)
        os.remove(path)
    except (OSError, ValueError):
        return
    print("facedown: note: `%s` (sent %s) got no answer: the shoe may have carried it out in "
          "part before it stopped; the table it shows now is below (a deal or street it shows "
          "incomplete is finished by sending it again)" % (
              d.get("command"), time.strftime("%H:%M:%S", time.localtime(d.get("time", 0)))),
          file=sys.stderr)


def login(args):
    from . import keys, served

    if not args.port:
        raise UserError("login talks to a shoe: give --port PORT")
    remote = served.connect(args.port, stored=False)
    if remote is not None:
        return served.login_command(remote, args)
    client = Client(args.port).open()
    try:
        info = client.identify()
        key = keys.find_key(info["device_id"], args.key_file)
        if key is None:
            raise UserError("no key for %s" % info["device_id"],
                            hint="give --key-file FILE or set $FACEDOWN_KEY_FILE (facedown "
                                 "provision wrote the shoe's key file)")
        client.call("ping", 0, seq=0)  # no reply cached for another host's numbers
        session = client.login(key, args.role, keep=False)
        keys.save_session(args.port, session)
    finally:
        client.close()
    print("%s session %d open on %s (%s)" % (args.role, session.number, info["device_id"],
                                            args.port))
    return 0


def logout(args):
    from . import keys

    from . import served

    client = connect(args)
    try:
        if client.session is None and getattr(client, "role", "public") == "public":
            print("no session open on %s" % args.port)
            return 0
        client.logout()
    finally:
        keys.drop_session(args.port)
        served.drop_token(args.port)
        client.close()
    print("session closed")
    return 0


def keys_command(args):
    import os

    from . import keys

    if args.action == "list":
        folder = os.path.join(keys.home(), "keys")
        names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
        for name in names:
            k = keys.Key.load(os.path.join(folder, name))
            print("%-24s %-12s %s" % (k.device, k.role, os.path.join(folder, name)))
        if not names:
            print("no keys in %s" % folder)
        return 0
    if not args.out:
        raise UserError("keys derive needs --out FILE (where to write the %s key)" % args.role)
    if not (args.device or args.key_file or os.environ.get(keys.ENV_KEY_FILE)
            or os.environ.get(keys.ENV_KEY)):
        raise UserError("keys derive needs the shoe's key: --device ID (its key in the key "
                        "store) or --key-file FILE", hint="facedown keys list shows the store")
    key = keys.find_key(args.device, args.key_file)
    if key is None:
        raise UserError("no key for %s in the key store (%s)" % (
            args.device, keys.keystore_path(args.device)),
            hint="facedown keys list shows the shoes it holds; or give --key-file FILE")
    key.derive(args.role).save(args.out)
    print("%s key of %s written to %s" % (args.role, key.device or "the shoe", args.out))
    return 0


def read_chunks(client, command, *head):
    """A document a command serves in chunks: (size, chunk) replies from offset 0 on."""
    out = bytearray()
    while True:
        size, chunk = client.call(command, *(head + (len(out),)))
        out += chunk
        if not chunk or len(out) >= size:
            return bytes(out)


def fetch_audit(client):
    """Every record the shoe keeps, its hash chain checked: (records, problems)."""
    from .audit import parse

    lines = []
    first = 0
    while True:
        doc = read_chunks(client, "audit", first)
        got = [line for line in doc.decode().splitlines() if line.strip()]
        if not got:
            break
        lines.extend(got)
        first = json.loads(got[-1])["n"] + 1
    return parse(lines)


def audit(args):
    client = connect(args)
    try:
        records, problems = fetch_audit(client)
    finally:
        client.close()
    if args.json:
        for r in records:
            print(json.dumps(r))
    else:
        for r in records:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(r["time"])) if r["time"] \
                else "boot %d +%.1f s" % (r["boot"], r["ms"] / 1000)
            print("%5d  %-19s  %-16s %-18s %s" % (r["n"], when, r["actor"], r["what"],
                                                 r["detail"]))
        print("%d records, hash chain %s" % (len(records), "intact" if not problems else
                                             "BROKEN: " + "; ".join(problems)))
    return 1 if problems else 0


def telemetry(args):
    client = connect(args)
    try:
        doc = json.loads(read_chunks(client, "telemetry").decode())
    finally:
        client.close()
    if args.json:
        print(json.dumps(doc, indent=1, sort_keys=True))
    else:
        for k in sorted(doc):
            print("%-18s %s" % (k, doc[k]))
    return 0


def config_line(cfg):
    """The configuration a shoe holds, as one line: game, seats, button, rulebook, overrides."""
    seats = ",".join(str(x) for x in cfg["seats"])
    house = dict(cfg.get("house") or {})
    bet = house.pop("betting", None)
    return "%s, seats %s, %s, %s, %s%s%s" % (
        cfg["game"], seats, "button %s" % cfg["button"] if cfg.get("button") else "no button",
        view.RULES.get(cfg["rules"], cfg["rules"]),
        "house " + ", ".join("%s=%s" % (k, json.dumps(v) if isinstance(v, bool) else v)
                             for k, v in sorted(house.items())) if house
        else "no house overrides",
        "; betting: " + view.betting(bet) if bet is not None else "",
        ", profile %r" % cfg["profile"] if cfg.get("profile") else "")


def show(client, args, before=None):
    """The table after a command (before: the status before it, to name what it did)."""
    st = client.status()
    if getattr(args, "json", False):
        print(json.dumps(st, indent=1))
        return 0
    table = st.get("table")
    if table is None:
        cfg = st.get("config")
        last = st["hand"]  # (a shoe restarted between hands shows no table: the journal's)
        print("%sno hand in progress%s" % (
            "hand %d is over (facedown history --hand %d shows it); " % (last, last) if last else "",
            "" if cfg is None else " (%s)" % config_line(cfg)))
        if st.get("latched"):
            print("FAULT LATCHED: %s: the floor clears it with end" % st["latched"])
        return 0
    print("hand %d" % st["hand"])
    print(view.render(table))
    if st.get("fault"):
        print(stopped_line(st["fault"]))
    if st.get("latched"):
        print("FAULT LATCHED: %s: nothing is dealt until the floor ends the hand" % st["latched"])
    if before is not None:
        was = before.get("table") if before.get("hand") == st["hand"] else None
        old = len(was.get("procedures") or []) if was else 0
        new = view.procedure_refs(table, old)
        status = table["status"]
        changed = was is not None and was["status"] != status
        what = " ".join(str(x) for x in [args.command] + [
            getattr(args, k) for k in ("what", "seat", "kind") if getattr(args, k, None)])
        if new:
            print("%s: the shoe applied %s" % (what, "; ".join(
                "%s (%s)" % (p, r) for p, r in view.procedure_refs(table, old))))
        if changed and status != "dealing":
            print("%s: hand %d is %s%s" % (what, st["hand"], status.upper(),
                                          ": " + table["reason"] if table.get("reason") else ""))
    return 0


def stopped_line(fault):
    """The standing fault of a status, as the operator's line."""
    return "STOPPED (%s): %s: %s" % (fault["command"], fault["kind"], fault["message"])


def recover(args):
    code = 255
    if args.card:
        try:
            code = firmware_imports().cards.parse(args.card)
        except ValueError as e:
            raise UserError(str(e), hint="cards are written like Ah, Td, 2c")
    return run_shoe(args, lambda c: c.call("recover", code))


def status(args):
    return run_shoe(args, lambda c: None)


def run_shoe(args, fn):
    client = connect(args)
    try:
        moves = args.command in Client.MOVES or args.command == "action"
        before = client.status() if moves and not getattr(args, "json", False) else None
        try:
            fn(client)
        except LinkDown as e:
            if args.command in Client.MOVES or args.command == "action":
                _unanswered(args.port, args.command)
                raise LinkDown("%s: it may have carried out part of %s before it stopped" % (
                    e, args.command), hint="once it answers again, `facedown --port %s status` "
                                           "shows what it did" % args.port)
            raise
        return show(client, args, before)
    finally:
        client.close()


def identify(args):
    client = connect(args, catalogue=True)
    try:
        info = client.info
    finally:
        client.close()
    if args.json:
        print(json.dumps(info, indent=1))
    else:
        print("device %s, firmware %s, protocol %d, capabilities: %s" % (
            info["device_id"], info["firmware"], info["protocol"],
            ", ".join(info["capabilities"]) or "-"))
        names = [m[1] for m in info["catalogue"]["messages"] if m[2] == "cmd"]
        print("commands: " + ", ".join(names))
    return 0


def config(args):
    prof = {"game": None, "seats": None, "button": None, "rules": None, "house": {}}
    if args.profile:
        from .profiles import load_profile

        prof = load_profile(args.profile)
    house = dict(prof["house"])  # the profile's house settings, under explicit --house ones
    for item in args.house:
        if "=" not in item:
            raise UserError("--house takes SETTING=VALUE, not %r" % item)
        k, v = item.split("=", 1)
        house[k.strip()] = _value(v.strip())
    bet = dict(prof.get("betting") or {})
    for item in args.bet:
        if "=" not in item:
            raise UserError("--bet takes KEY=VALUE, not %r" % item,
                            hint="e.g. --bet structure=nl --bet blinds=50,100")
        k, v = item.split("=", 1)
        bet[k.strip()] = _bet_value(k.strip(), v.strip())
    if bet and not args.no_bet:
        house["betting"] = bet
    game = args.game or prof["game"]
    seats = args.seats if args.seats is not None else prof["seats"]
    for flag, value in (("--game", game), ("--seats", seats)):
        if not value:
            raise UserError("config needs %s (or a --profile that sets %s)" % (flag, flag[2:]),
                            hint="e.g. facedown config --game holdem --seats 1-9, or "
                                 "--profile room.toml (see docs/profiles.md)")
    button = args.button if args.button is not None else (prof["button"] or 0)
    rules = args.rules or prof["rules"] or "tda2024"
    mask = 0
    for s in seats:
        if not 1 <= s <= 10:
            raise UserError("seat %d: seats are 1..10" % s)
        mask |= 1 << s
    if button and button not in seats:
        raise UserError("--button %d is not one of the seats (%s)" % (
            button, ",".join(str(s) for s in seats)),
            hint="the button is an occupied seat's, e.g. --button %d" % seats[-1])
    if args.profile and prof.get("name"):  # the shoe keeps the profile's name with the table
        house["_profile"] = prof["name"][:PROFILE_MAX]
        if len(prof["name"]) > PROFILE_MAX:
            print("note: the shoe keeps the first %d characters of the profile's name: %r" % (
                PROFILE_MAX, house["_profile"]), file=sys.stderr)
    text = _fitting_house(house, game, mask, button, rules)
    client = connect(args)
    try:
        client.call("config", game, mask, button, rules, text)
        st = client.status()
    finally:
        client.close()
    if args.json:
        print(json.dumps(st, indent=1))
        return 0
    print("configured %s: %s%s" % (args.port, config_line(st["config"]),
                                   " (from %s)" % args.profile if args.profile else ""))
    print("the next hand is %d: `facedown --port %s deal` starts it" % (st["hand"] + 1,
                                                                         args.port))
    return 0


def _fits(game, mask, button, rules, text):
    try:  # in a session's frame (ACMD: counter and tag before the command)
        return len(W.encode_command("config", (game, mask, button, rules, text))) <= \
            W.MAX_BODY - 4 - W.TAG
    except W.WireError:
        return False


def _fitting_house(house, game, mask, button, rules):
    """The house JSON for the config command, made to fit its frame (and the journal's 199
    bytes) when it can without changing what the shoe does: overrides at the rulebook's default
    go, stacks all alike become one number, and last the profile's name (with a note). Otherwise
    one line saying what takes the room and what to do."""
    text = json.dumps(house, separators=(",", ":"))
    if _fits(game, mask, button, rules, text):
        return text
    H = firmware_imports().house
    try:
        defaults = H.profile(rules)
    except ValueError:
        defaults = {}
    small = {k: v for k, v in house.items() if k not in defaults or defaults[k] != v}
    bet = small.get("betting")
    if isinstance(bet, dict) and isinstance(bet.get("stacks"), dict) and \
            len(set(bet["stacks"].values())) == 1:
        small["betting"] = dict(bet, stacks=list(bet["stacks"].values())[0])
    text = json.dumps(small, separators=(",", ":"))
    if _fits(game, mask, button, rules, text):
        return text
    if "_profile" in small:  # the name only labels the table: the settings matter more
        nameless = dict((k, v) for k, v in small.items() if k != "_profile")
        if _fits(game, mask, button, rules, json.dumps(nameless, separators=(",", ":"))):
            print("note: the shoe does not keep the profile's name %r this time: with it the "
                  "configuration would not fit one frame" % small["_profile"], file=sys.stderr)
            return json.dumps(nameless, separators=(",", ":"))
    sizes = []
    for key, what in (("betting", "the betting"), ("_profile", "the profile's name")):
        if key in small:
            sizes.append("%s %d" % (what, len(json.dumps(small[key], separators=(",", ":")))))
    n = len([k for k in small if k not in ("betting", "_profile")])
    if n:
        sizes.append("%d house override%s %d" % (n, "s" if n > 1 else "", len(json.dumps(
            {k: v for k, v in small.items() if k not in ("betting", "_profile")},
            separators=(",", ":")))))
    stacks = isinstance(bet, dict) and isinstance(bet.get("stacks"), dict)
    room = W.MAX_BODY - 4 - W.TAG - len(W.encode_command("config", (game, mask, button, rules,
                                                                    "")))
    raise UserError(
        "config: the house settings take %d bytes as JSON (%s), more than the %d one frame of "
        "the protocol carries here" % (len(text), ", ".join(sizes), room),
        hint="give each hand's stacks with `facedown stacks SEAT=CHIPS ...` instead of the "
             "betting's stacks" if stacks else "set fewer house overrides, or a shorter profile "
             "name")


def hand(args):
    return run_shoe(args, lambda c: c.call("hand", args.button))


def deal(args):
    def go(c):
        table = c.status().get("table")
        if table is None or table["status"] != "dealing":
            try:  # the last hand is over: the next one (the shoe shuffles)
                c.call("hand", 0)
            except ShoeError as e:  # said as the user's command, not the one it sent
                raise ShoeError(e.code, e.message.replace("hand needs", "deal needs", 1)
                                if isinstance(e.message, str) else e.message, "deal", args.port)
        c.call("deal", args.cards)
    return run_shoe(args, go)


def simple(args):
    return run_shoe(args, lambda c: c.call(args.command))


def draw(args):
    fw = firmware_imports()
    discards = []
    for item in args.discard:
        seat, _, cards = item.partition(":")
        try:
            codes = [fw.cards.parse(t.strip()) for t in cards.split(",") if t.strip()]
            discards.append((int(seat), codes))
        except ValueError as e:
            raise UserError("--discard %s: %s" % (item, e))
    return run_shoe(args, lambda c: c.call("draw", W.pack_discards(sorted(discards))))


def action(args):
    silent = args.kind == "chips"
    flags = (1 if silent else 0) | (2 if args.one_chip else 0) | (4 if args.string else 0) | \
        (8 if args.noticed else 0)
    if silent and args.put is not None:
        raise UserError("action SEAT chips N: N is the chips put out; --chips is for a "
                        "declared action", hint="e.g. facedown action 3 chips 500 --one-chip")
    if silent and args.amount is None:
        raise UserError("action SEAT chips needs the chips put out",
                        hint="e.g. facedown action 3 chips 1300 --smallest 100")
    if (flags or args.smallest) and not silent and args.put is None:
        raise UserError("--smallest, --one-chip, --string and --noticed describe the chips put "
                        "out: give them with --chips N (or report an action without a declaration as "
                        "`action SEAT chips N`)")
    if silent or args.put is not None:
        put = args.amount if silent else args.put
        kind = 0 if silent else ACTIONS.index(args.kind)
        amount = W.NO_AMOUNT if silent or args.amount is None else args.amount
        return run_shoe(args, lambda c: c.call(
            "chips", args.seat, kind | (0x80 if args.out_of_turn else 0), amount, put,
            args.smallest, flags))
    kind = ACTIONS.index(args.kind)
    if args.amount is None and not args.out_of_turn:
        return run_shoe(args, lambda c: c.call("action", args.seat, kind))
    return run_shoe(args, lambda c: c.call(
        "bet", args.seat, kind | (0x80 if args.out_of_turn else 0),
        W.NO_AMOUNT if args.amount is None else args.amount))


def stacks(args):
    given = {}
    for item in args.stack:
        seat, _, chips = item.partition("=")
        try:
            s, n = _seat(seat), _chips(chips)
        except argparse.ArgumentTypeError as e:
            raise UserError("stacks %s: %s" % (item, e), hint="e.g. facedown stacks 1=12000 "
                            "2=8500 (every seat dealt in)")
        if s in given:
            raise UserError("stacks: seat %d given twice" % s)
        given[s] = n
    return run_shoe(args, lambda c: c.call("stacks", W.pack_stacks(given)))


def report(args):
    what = {"exposed": 1, "premature": 2, "misdeal": 3}[args.what]
    if what == 1:
        missing = [f for f, v in (("--seat S", args.seat), ("--card K", args.card)) if not v]
        if missing:
            raise UserError("report exposed needs %s" % " and ".join(missing),
                            hint="e.g. report exposed --seat 3 --card 1 (1 = the first card "
                                 "the seat received)")
    elif args.seat or args.card:
        raise UserError("report %s takes no --seat or --card (they name an exposed card)"
                        % args.what)
    return run_shoe(args, lambda c: c.call("report", what, args.seat, args.card))


def watch(args):
    """The live table: redrawn as each event arrives (on a terminal), or one line per event
    (--lines, or when the output is not a terminal)."""
    from .demo import Screen
    from .mirror import Mirror

    state = {"rules": "tda2024", "mirror": None, "hand": None, "last": "", "screen": None}

    def fresh(client):
        st = client.status()
        state["hand"] = st["hand"]
        cfg = st.get("config")
        if cfg:
            state["rules"] = cfg["rules"]
        table = st.get("table")
        state["betting"] = (table or {}).get("betting")  # a table that is bet: pot and turn
        # without a table session the down cards are hidden: the table is read again after
        # each event instead of followed card by card
        state["blind"] = not getattr(client, "sees_down_cards", client.session is not None)
        state["mirror"] = Mirror.from_record(table) if table and not state["blind"] else None
        state["table"] = table

    def on_event(number, hand, entry):
        line = "#%-6d hand %-4d %s" % (number, hand, describe(entry, hand, state["rules"]))
        kind = decode(entry)[0]
        if kind == "fault":
            state["fault"] = True  # the shoe's own words for it are read below (status)
        if kind in BETTING_KINDS and state.get("betting", True) is not None:
            state["bets"] = True  # the pot and the turn are read below (status); events that
            # come with the connection, before the table is first read, count too
        if state["screen"] is None:
            print(line, flush=True)
            return
        state["last"] = line
        if hand != state["hand"] or state["blind"]:
            state["pending"] = True  # a new hand (or a blind view): the table is read again
            return
        m = state["mirror"]
        if m is not None:
            m.apply(entry)
            state["screen"].show(view.render(with_bets(m.record()), title=line), highlight=True)

    def with_bets(rec):
        if state.get("betting") is not None:
            rec["betting"] = state["betting"]
        return rec

    client = connect(args, backlog=args.backlog, on_event=on_event)
    fresh(client)
    if not args.lines and sys.stdout.isatty():
        state["screen"] = Screen()
        if state["mirror"] is not None:
            state["screen"].show(view.render(with_bets(state["mirror"].record()),
                                             title="hand %d" % state["hand"]), highlight=True)
    end = time.monotonic() + args.seconds if args.seconds else None
    try:
        while end is None or time.monotonic() < end:
            client.pump(0.1)
            if state.pop("pending", False):
                fresh(client)
                if state["screen"] is not None and state["blind"] and state["table"]:
                    state["screen"].show(view.render(state["table"], title=state["last"]),
                                         highlight=True)
            if state.pop("bets", False):  # the shoe's betting after an action: pot and turn
                bets = (client.status().get("table") or {}).get("betting")
                if bets is not None:
                    state["betting"] = bets
                    if state["screen"] is None:
                        print("        betting  %s" % view.betting_line(bets), flush=True)
                    elif state["mirror"] is not None:
                        state["screen"].show(view.render(with_bets(state["mirror"].record()),
                                                         title=state["last"]), highlight=True)
            if state.pop("fault", False):
                fault = client.status().get("fault")
                if fault:
                    line = stopped_line(fault)
                    if state["screen"] is None:
                        print(line, flush=True)
                    else:
                        state["screen"].say(line, alarm=True)
    except KeyboardInterrupt:
        pass
    finally:
        if state["screen"] is not None:
            state["screen"].stop()
        client.close()
    return 0
