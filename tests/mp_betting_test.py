# The betting engine under the MicroPython unix port and CPython: the same hands, the same record.
#   micropython -X heapsize=192K tests/mp_betting_test.py [HANDS]   (run by tests/test_betting.py)
# Plays HANDS hands (default 60) over every structure with a small generator of its own (the two
# ports' `random` differ), choosing among each seat's legal options, and prints every record and
# the final stacks, so the two transcripts must be byte-identical. Ends with "OK".
import sys

HERE = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."
sys.path.insert(0, HERE + "/../firmware")
sys.path.append(HERE + "/../protocol")  # crc.py, wire.py: at the image's root on a shoe

from shoe import betting as B  # noqa: E402
from shoe import games as G  # noqa: E402


class Lcg:
    def __init__(self, seed):
        self.x = seed & 0x7FFFFFFF

    def below(self, n):
        self.x = (self.x * 1103515245 + 12345) & 0x7FFFFFFF
        return (self.x >> 8) % n


TABLES = (
    (G.BOARD, 0, {"structure": "nl", "blinds": [50, 100]}),
    (G.BOARD, 0, {"structure": "pl", "blinds": [5, 10], "ante": 1}),
    (G.BOARD, 0, {"structure": "fl", "blinds": [10, 20], "bb_ante": 20}),
    (G.STUD, 0, {"structure": "fl", "ante": 5, "bring_in": 10, "small_bet": 20}),
    (G.DRAW, 3, {"structure": "fl", "blinds": [1, 2]}),
)


def draw(r, n):
    """Hand n's table: (kind, draws, cfg, seats, stacks, button, opener), drawn from r."""
    kind, draws, raw = TABLES[n % len(TABLES)]
    cfg = B.config(kind, raw)
    count = 2 + r.below(7)
    seats = []
    while len(seats) < count:
        s = 1 + r.below(10)
        if s not in seats:
            seats.append(s)
    seats.sort()
    unit = cfg["small_bet"]
    stacks = {}
    for s in seats:
        stacks[s] = unit * (1 + r.below(40)) + r.below(unit)
    button = seats[r.below(len(seats))]
    opener = seats[r.below(len(seats))] if kind == G.STUD else None
    return kind, draws, cfg, seats, stacks, button, opener


def bet_out(b, r, probe=None):
    """Bet hand b to its end with r's choices among each seat's legal options (probe(b) after
    each action); a stand-in showdown: the lowest seat left takes it all. Returns the actions."""
    n = 0
    while not b.over:
        if b.closed:
            live = b.contenders()
            b.next_round(live[r.below(len(live))] if b.kind == G.STUD else None)
            continue
        opts = b.options()
        names = sorted(opts)
        k = names[r.below(len(names))]
        amount = None
        if k in ("bet", "raise", "complete"):
            low, high = opts[k]
            amount = low + r.below(high - low + 1)
        b.act(b.to_act, k, amount)
        n += 1
        if probe:
            probe(b)
    win = b.winner_by_fold()
    b.award({win if win is not None else b.contenders()[0]: b.total()})
    return n


def play(r, n):
    kind, draws, cfg, seats, stacks, button, opener = draw(r, n)
    b = B.Betting(kind, seats, button, cfg, stacks, draws=draws, opener=opener)
    bet_out(b, r)
    stacks_after = dict((s, b.stack[s]) for s in seats)
    total = 0
    for s in seats:
        total += b.start[s]
    after = 0
    for s in seats:
        after += stacks_after[s]
    assert total == after, (total, after)
    return b.log, stacks_after


def main():
    hands = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    r = Lcg(2024)
    for n in range(hands):
        log, stacks = play(r, n)
        print(n, log)
        print(n, sorted(stacks.items()))
    print("OK")


if __name__ == "__main__":
    main()
