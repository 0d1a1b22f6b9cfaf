# Chips put out against what was declared: the rulebooks' procedures turn what the dealer saw
# (a declaration, the chips pushed out, how) into the action the betting engine applies.
# Pure logic (no machine import), loaded only when an action is reported with its chips.
#
#   declared (said in turn; TDA 40 binding, TDA 41 the declaration over the chips):
#     no chips put out:   house no_chips: binds (TDA 40, RRoP) / void (seed 003: act again)
#     fewer chips:        the seat completes them (TDA 41, RRoP, seed 003)
#     more chips:         the declaration stands; house excess_chips: returned (TDA 41, RRoP)
#                         / stays in the pot (seed 003), unless the player noticed it first
#   not declared (the chips speak):
#     a single oversized chip facing a bet: a call (TDA 44); facing none: a bet of its value
#     several chips facing a bet: a call if removing one smallest chip leaves less than the
#       call (TDA 45); else a raise to the chips, an under-raise by house under_raise (TDA 43:
#       half the minimum raise or more is made the minimum raise, less is a call)
#     a string bet (several motions): facing a bet a call; facing none a bet of its first
#       motion's chips (TDA 56)
from shoe.compat import const
from shoe.errors import ShoeError, E_ARG

SILENT = const(1)   # no declaration: the chips alone make the action
ONECHIP = const(2)  # one chip put out
STRING = const(4)   # put out in several motions, not declared (a string bet)
NOTICED = const(8)  # the player noticed the excess before anyone else (seed 003)
FLAGS = const(15)


def _sized(b, s, to):
    """(kind, to, procedure): a bet or raise to `to` made by chips, sized by the structure (a
    fixed-limit or pot-limit bet over its size: the excess back)."""
    r = b.raise_range(s)
    kind = "bet" if b.high == 0 else ("complete" if b._is_completion() else "raise")
    if r is None:
        b._refuse("reopen" if not b._reopened(s) else "cap" if b._capped() else "turn",
                  "seat %d may not %s: it may call or fold" % (s, kind))
    low, high = r
    if to > high:
        return kind, high, "chips-excess-returned"
    if to >= low or to == b.stack[s] + b.bet[s]:
        return kind, to, None
    if b.high == b.bet[s]:  # an opening bet short of the minimum (or a limit bet): completed
        return kind, low, "chips-short"
    if b.house["under_raise"] == "half" and 2 * (to - b.high) >= low - b.high:
        return kind, low, "under-raise-full"
    return "call", None, "under-raise-call"


def resolve(b, s, kind, amount, put, smallest, flags):
    """What seat s's action is, given the chips it put out now (put), the smallest chip among
    them (0: the table's chip) and how (flags): (kind, amount, procedure, to the pot), kind None
    when the action is void. b is the shoe.betting.Betting; raises ShoeError naming the rule
    for a push no rule makes an action of; changes nothing."""
    if flags & ~FLAGS:
        raise ShoeError(E_ARG, "chips flags are 1 not declared, 2 one chip, 4 string, "
                        "8 noticed, not %d" % flags)
    if s not in b.seats or not b.live(s):
        return kind, amount, None, 0  # (the engine refuses it, naming the rule)
    if put > b.stack[s]:
        b._refuse("chips", "seat %d put out %d, more than it has (%d)" % (s, put, b.stack[s]))
    facing = b.high - b.bet[s]
    if flags & (SILENT | STRING):
        if put == 0:
            raise ShoeError(E_ARG, "no chips put out and nothing declared: report the check "
                            "or fold")
        if b.bring_in:
            b._refuse("bringin", "seat %d must declare its bring-in or completion" % s)
        if b.known and put == b.stack[s]:
            return "allin", None, None, 0
        to = b.bet[s] + put
        if facing > 0:
            if put < facing:
                return "call", None, "chips-short", 0
            if flags & STRING:
                return "call", None, "string-call", 0
            if put == facing:
                return "call", None, None, 0
            if flags & ONECHIP:
                return "call", None, "oversized-call", 0
            if put - (smallest or b.cfg["chip"]) < facing:
                return "call", None, "multichip-call", 0
            kind, to, pid = _sized(b, s, to)
            return kind, to, pid, 0
        kind, to, pid = _sized(b, s, to)
        if flags & STRING:
            pid = "string-bet"
        elif flags & ONECHIP and pid is None:
            pid = "oversized-bet"
        return kind, to, pid, 0
    # declared: the declaration stands, the chips are made to fit it
    need = _needs(b, s, kind, amount, facing)
    if need == 0 and put == 0:
        return kind, amount, None, 0
    if put == 0:
        if b.house["no_chips"] == "void":
            return None, None, "declared-void", 0
        return kind, amount, "declared-binds", 0
    if put < need:
        return kind, amount, "chips-short", 0
    if put > need:
        if b.house["excess_chips"] == "returned":
            return kind, amount, "chips-excess-returned", 0
        if flags & NOTICED:
            return kind, amount, "chips-excess-noticed", 0
        return kind, amount, "chips-excess-pot", put - need
    return kind, amount, None, 0


def _needs(b, s, kind, amount, facing):
    """The chips a declared action adds to the seat's bet (as the engine will take them)."""
    if kind in ("fold", "check"):
        return 0
    stack = b.stack[s]
    if kind == "call":
        if amount is not None and amount > facing:  # a call may name its total
            return min(amount - b.bet[s], stack)
        return min(facing, stack)
    if kind == "allin":
        return stack
    if kind == "bringin":
        return min(b.cfg["bring_in"], stack)
    if amount is None:  # a fixed-limit bet or raise, or a completion: its size
        r = b.raise_range(s)
        return (r[0] - b.bet[s]) if r else 0
    return min(amount - b.bet[s], stack)
