"""Complete the `deck` of golden scenario files (and nothing else).

    python tests/scenarios/make_deck.py fill FILE...   replace a trailing "..." in each file's deck
                                                        by the game's remaining cards, in a fixed
                                                        order (2c..Ac, 2d..Ad, 2h..Ah, 2s..As;
                                                        6..A for shortdeck), and rewrite the file
    python tests/scenarios/make_deck.py show FILE      print the deck with 1-based positions

The expectations are never computed here: they are written by hand from the rules.
"""

import json
import sys

RANKS = "23456789TJQKA"
SUITS = "cdhs"


def deck_of(game):
    ranks = RANKS[4:] if game == "shortdeck" else RANKS
    return [r + s for s in SUITS for r in ranks]


def complete(game, front):
    full = deck_of(game)
    if len(set(front)) != len(front):
        raise ValueError("duplicate card in the deck front: %r" % (front,))
    bad = [c for c in front if c not in full]
    if bad:
        raise ValueError("not cards of the %s deck: %r" % (game, bad))
    return list(front) + [c for c in full if c not in front]


def dumps(data):
    """One key per line, lists on one line (decks wrapped), steps one per line."""
    lines = ["{"]
    keys = list(data)
    for i, key in enumerate(keys):
        sep = "," if i < len(keys) - 1 else ""
        value = data[key]
        if key == "deck":
            rows = [", ".join(json.dumps(c) for c in value[j:j + 13])
                    for j in range(0, len(value), 13)]
            body = ",\n           ".join(rows)
            lines.append('  "deck": [%s]%s' % (body, sep))
        elif key == "steps":
            lines.append('  "steps": [')
            for j, step in enumerate(value):
                lines.append("    %s%s" % (json.dumps(step), "," if j < len(value) - 1 else ""))
            lines.append("  ]%s" % sep)
        elif key == "expect" and isinstance(value, dict):
            lines.append('  "expect": {')
            ek = list(value)
            for j, k in enumerate(ek):
                v = value[k]
                esep = "," if j < len(ek) - 1 else ""
                if k == "seats" and isinstance(v, dict):
                    lines.append('    "seats": {')
                    sk = list(v)
                    for n, s in enumerate(sk):
                        lines.append('      %s: %s%s' % (json.dumps(s), json.dumps(v[s]),
                                                         "," if n < len(sk) - 1 else ""))
                    lines.append("    }%s" % esep)
                else:
                    lines.append("    %s: %s%s" % (json.dumps(k), json.dumps(v), esep))
            lines.append("  }%s" % sep)
        else:
            lines.append("  %s: %s%s" % (json.dumps(key), json.dumps(value), sep))
    lines.append("}")
    return "\n".join(lines) + "\n"


def fill(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    deck = data.get("deck")
    if isinstance(deck, list) and deck and deck[-1] == "...":
        data["deck"] = complete(data["game"], deck[:-1])
    with open(path, "w", encoding="utf-8") as f:
        f.write(dumps(data))


def main(argv):
    if len(argv) < 2 or argv[0] not in ("fill", "show"):
        print(__doc__)
        return 2
    if argv[0] == "fill":
        for path in argv[1:]:
            fill(path)
    else:
        with open(argv[1], encoding="utf-8") as f:
            data = json.load(f)
        for i, c in enumerate(data["deck"], 1):
            print("%2d %s" % (i, c))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
