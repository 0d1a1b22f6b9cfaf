"""The table as a person reads it: seats, board, burns, muck, set-aside, stub count, and the
procedures the shoe applied with their rule numbers. Works from a hand record only."""

SUIT = {"c": "\u2663", "d": "\u2666", "h": "\u2665", "s": "\u2660"}
RULES = {"tda2024": "Poker TDA 2024", "robert": "Robert's Rules of Poker"}


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


def procedure_lines(record):
    """One line per procedure applied: rule, id, what the shoe did."""
    from .engine import scenario_module

    scenario_module()  # puts the firmware's core on the path
    from shoe.procedures import INDEX, text

    out = []
    for e in record.get("log", []):
        if "procedure" in e:
            where = " (seat %d)" % e["seat"] if "seat" in e else ""
            out.append("%-22s %s%s: %s" % (e["rule"], e["procedure"], where,
                                          text(INDEX[e["procedure"]])))
    return out


def render(record, title=None, unicode=True):
    lines = []
    if title:
        lines.append(title)
    head = "%s | %s" % (record.get("game", "?"), RULES.get(record.get("rules"), "?"))
    if record.get("button") is not None:
        head += " | button %s" % record["button"]
    head += " | %s" % record["status"].upper()
    if record.get("reason"):
        head += ": %s" % record["reason"]
    lines.append(head)
    for seat, held in sorted(record["seats"].items(), key=lambda kv: int(kv[0])):
        shown = " ".join(card(c["card"], c["up"], unicode) for c in held) or "(no cards)"
        lines.append("  seat %-3s %s" % (seat, shown))
    lines.append("  board    %s" % cards(record["board"], unicode))
    lines.append("  burns    %s" % cards(record["burns"], unicode))
    lines.append("  muck     %s" % cards(record["muck"], unicode))
    if record["aside"]:
        lines.append("  aside    %s" % cards(record["aside"], unicode))
    if record["removed"]:
        lines.append("  removed  %s" % cards(record["removed"], unicode))
    lines.append("  stub     %d cards (order secret)" % record["stub"])
    for line in procedure_lines(record):
        lines.append("  > " + line)
    return "\n".join(lines)
