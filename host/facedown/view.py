"""The table as a person reads it: seats, board, burns, muck, set-aside, stub count, the
procedures the shoe applied with their rule numbers, and the stopping faults (jams, the
magazine, the lid, the reader...) with what the operator does. Works from a hand record only."""

SUIT = {"c": "\u2663", "d": "\u2666", "h": "\u2665", "s": "\u2660"}
RULES = {"tda2024": "Poker TDA 2024", "robert": "Robert's Rules of Poker"}


STRUCTURE = {"nl": "no-limit", "pl": "pot-limit", "fl": "fixed-limit"}


def betting(bet):
    """How a table is bet, as one line: 'no-limit, blinds 50/100, big-blind ante 100'."""
    st = bet.get("structure") or ("nl" if bet.get("blinds") else "fl")  # stud has no blinds
    parts = [STRUCTURE.get(st, st)]
    if bet.get("blinds"):
        parts.append("blinds %s" % "/".join(str(b) for b in bet["blinds"]))
    for key, label in (("straddles", "straddles"), ("ante", "ante"), ("bb_ante", "big-blind ante"),
                       ("bring_in", "bring-in"), ("small_bet", "small bet"),
                       ("big_bet", "big bet"), ("cap", "cap"), ("chip", "smallest chip")):
        v = bet.get(key)
        if v:
            parts.append("%s %s" % (label, "/".join(str(x) for x in v) if isinstance(v, list)
                                    else v))
    stacks = bet.get("stacks")
    if isinstance(stacks, dict):
        parts.append("stacks " + ", ".join("%s:%s" % (k, stacks[k]) for k in sorted(
            stacks, key=int)))
    elif stacks:
        parts.append("stacks %s each" % stacks)
    return ", ".join(parts)


def seat_chips(bets, seat):
    """A seat's chips on its line: '   bet 600, stack 9400, in 600' (nothing when not bet)."""
    d = (bets or {}).get("seats", {}).get(str(seat))
    if not d:
        return ""
    parts = ["bet %d" % d["bet"]] if d["bet"] else []
    if "stack" in d:
        parts.append("stack %d" % d["stack"])
    parts.append("in %d" % d["in"])
    if d.get("allin"):
        parts.append("ALL IN")
    return "   (%s)" % ", ".join(parts)


def _amounts(v):
    """An option's amount: 300, or a bet's range '200..9800'; a top the engine gives for a stack
    nobody told it (shoe.betting.UNKNOWN, no-limit with the stacks not given) is no limit:
    '200 or more (no limit: stacks not given)'."""
    if not isinstance(v, list):
        return str(v)
    from . import firmware

    if v[1] >= firmware.load("shoe.betting").UNKNOWN:
        return "%d or more (no limit: stacks not given)" % v[0]
    return "%d..%d" % tuple(v) if v[0] != v[1] else str(v[0])


def betting_line(bets):
    """Whose turn it is, the pot, what the seat may do: 'pot 1500; seat 4 to act: fold, call
    200, raise 400..9800'."""
    if bets.get("over"):
        turn = "the betting is over"
    elif bets.get("to_act") is None:
        turn = "the round's betting is over: deal the next street"
    else:
        opts = bets.get("options")
        turn = "seat %s to act%s" % (bets["to_act"], ": " + ", ".join(
            k if v is None else "%s %s" % (k, _amounts(v)) for k, v in sorted(opts.items()))
            if opts else "")
    return "%s, round %d, pot %d; %s" % (STRUCTURE.get(bets.get("structure"), "?"),
                                         bets.get("round", 0) + 1, bets.get("pot", 0), turn)


def count(n, noun, plural=None):
    """'1 hand', '2 hands', '0 jams' ('plural' where adding an s is wrong)."""
    return "%d %s" % (n, noun if n == 1 else plural or noun + "s")


def card(text, up=None, unicode=True):
    """'Ah' -> 'A♥'; down cards in brackets when up is False."""
    if text == "Jk":
        face = "Jk"
    elif text == "??":
        face = "??"
    else:
        face = text[0] + (SUIT[text[1]] if unicode else text[1])
    return "[%s]" % face if up is False else face


def cards(texts, unicode=True):
    return " ".join(card(t, unicode=unicode) for t in texts) or "-"


def procedure_refs(record, first=0):
    """[(procedure id, rule reference)] of the procedures applied, from the first-th on."""
    out = []
    for line in _procedures(record)[first:]:
        out.append((line["procedure"], line["rule"]))
    return out


def _procedures(record):
    from .engine import firmware_imports

    P = firmware_imports().procedures
    INDEX, rule = P.INDEX, P.rule

    log = record.get("log")
    if log is None:
        log = [{"procedure": p, "rule": rule(INDEX[p], record.get("rules", "tda2024"))}
               for p in record.get("procedures") or [] if p in INDEX]
    return [e for e in log if "procedure" in e]


def procedure_lines(record, first=0):
    """One line per procedure applied (from the first-th on): rule, id, what the shoe did. From
    the record's log, or, for a table without its log (the shoe's status), from its list of
    procedure ids, each with the reference of the rulebook in force."""
    procs = _procedures(record)[first:]
    from .engine import firmware_imports

    P = firmware_imports().procedures
    INDEX, text = P.INDEX, P.text

    out = []
    for e in procs:
        where = " (seat %d)" % e["seat"] if "seat" in e else ""
        out.append("%-22s %s%s: %s" % (e["rule"], e["procedure"], where,
                                      text(INDEX[e["procedure"]])))
    return out


def phase(record):
    """Where a hand in progress is: 'the initial deal', 'before the flop', 'flop', 'turn',
    'river', 'the draw', '4th street'... (from the cards on the table)."""
    from .engine import firmware_imports

    G = firmware_imports().games

    game = G.GAMES.get(record.get("game"))
    if game is None:
        return "in progress"
    held = [len(h) for h in record.get("seats", {}).values()]
    most = max(held) if held else 0
    if game[0] == G.STUD:
        if most < 3:
            return "the initial deal"
        return "%d%s street" % (most, {3: "rd"}.get(most, "th"))
    if most < game[2] and not record.get("board"):
        return "the initial deal"
    if game[0] == G.DRAW:
        return "after the deal"
    return {0: "before the flop", 3: "flop", 4: "turn", 5: "river"}.get(
        len(record.get("board") or ()), "the board")


def fault_lines(record):
    """One line per stopping fault in the log: the kind, the card it stopped, what to do."""
    from .engine import firmware_imports

    F = firmware_imports().faults

    advice = {row[1]: F.advice(row[0]) for row in F.FAULTS}
    log = record.get("log")
    if log is None:  # a table without its log (the shoe's status): the kinds only
        log = [{"fault": kind} for kind in record.get("faults") or []]
    out = []
    for e in log:
        if "fault" in e:
            out.append("FAULT %s%s: %s" % (e["fault"], fault_where(e),
                                          advice.get(e["fault"], "see the shoe's log")))
    return out


def fault_where(entry):
    """' (the card for seat 3, 3 tries)' for a fault entry of the log."""
    parts = []
    dest = entry.get("dest")
    if dest:
        parts.append("the card for %s" % (dest.replace(":", " ") if dest.startswith("seat")
                                          else "the " + {"burns": "burn"}.get(dest, dest)))
    if entry.get("retries"):
        parts.append("%d tries" % entry["retries"])
    return " (%s)" % ", ".join(parts) if parts else ""


_OUT = {"folded": "(folded)", "dead": "(mucked)"}


def _empty_seats(record):
    """Why each seat without cards has none: it folded, its cards were mucked (a dead hand), or
    it was never dealt one. From the log in a history; a status has no log but names the seats
    that are out ("out": folded or dead)."""
    log = record.get("log")
    if log is None:
        out = record.get("out") or {}
        return {str(s): _OUT.get(out.get(str(s)), "(not dealt)") for s in record.get("seats") or {}}
    folded = {str(e["seat"]) for e in log if e.get("action") == "fold"}
    left = {e["from"][5:] for e in log if str(e.get("from", "")).startswith("seat:")}
    return {str(s): "(folded)" if str(s) in folded else "(mucked)" if str(s) in left
            else "(not dealt)" for s in record.get("seats") or {}}


def render(record, title=None, unicode=True):
    lines = []
    if title:
        lines.append(title)
    head = "%s | %s" % (record.get("game", "?"), RULES.get(record.get("rules"), "?"))
    if record.get("button") is not None:
        head += " | button %s" % record["button"]
    head += " | %s" % record["status"].upper()
    if record["status"] == "dealing":
        head += ": %s" % phase(record)
    if record.get("reason"):
        head += ": %s" % record["reason"]
    lines.append(head)
    gone = _empty_seats(record)
    bets = record.get("betting")
    for seat, held in sorted(record["seats"].items(), key=lambda kv: int(kv[0])):
        shown = " ".join(card(c["card"], c["up"], unicode) for c in held) or \
            gone.get(str(seat), "(no cards)")
        lines.append("  seat %-3s %s%s" % (seat, shown, seat_chips(bets, seat)))
    lines.append("  board    %s" % cards(record["board"], unicode))
    lines.append("  burns    %s" % cards(record["burns"], unicode))
    lines.append("  muck     %s" % cards(record["muck"], unicode))
    if record["aside"]:
        lines.append("  aside    %s" % cards(record["aside"], unicode))
    if record["removed"]:
        lines.append("  removed  %s" % cards(record["removed"], unicode))
    lines.append("  stub     %d cards (order secret)" % record["stub"])
    if bets:
        lines.append("  betting  " + betting_line(bets))
    for line in procedure_lines(record):
        lines.append("  > " + line)
    for line in fault_lines(record):
        lines.append("  ! " + line)
    return "\n".join(lines)
