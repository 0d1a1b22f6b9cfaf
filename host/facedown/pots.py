"""Split pots and odd chips by the rulebook (issue 9).

`facedown pots HAND.json BETS.json` reads a finished hand record (as `facedown replay --json`
prints it) and what each seat put in the pot, builds the main and side pots, finds the winners of
each half (high, and low where the game has one) with pokerkit's hand evaluators, and deals out
every chip, saying which rule decided each odd chip. docs/pots.md is the user's page.

Sections, top to bottom: the game table, reading the input, building the pots, the showdown,
the odd-chip rules, splitting, printing, the command.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any, Mapping

from pokerkit import (
    EightOrBetterLowHand,
    Hand,
    OmahaEightOrBetterLowHand,
    OmahaHoldemHand,
    RegularLowHand,
    ShortDeckHoldemHand,
    StandardHighHand,
    StandardLowHand,
)

from .errors import UserError

RANKS = "23456789TJQKA"
RANKS_ACE_LOW = "A23456789TJQK"
SUITS = "cdhs"  # clubs < diamonds < hearts < spades (RRoP Ties, TDA RP-10-D)
SUIT_SIGNS = {"c": "\u2663", "d": "\u2666", "h": "\u2665", "s": "\u2660"}

HIGH, LOW = "high", "low"
BOARD, STUD, DRAW = "board", "stud", "draw"
TDA, ROBERT = "tda2024", "robert"
TOURNAMENT, CASH = "tournament", "cash"

# ------------------------------------------------------------------------------ the game table


@dataclass(frozen=True)
class Side:
    """One half of a pot: who wins it is decided by `hand` (a pokerkit hand class)."""

    name: str  # HIGH or LOW (razz and 2-7 are low games: their one side is LOW)
    hand: type[Hand]
    ace_low: bool = False  # aces rank low when cards are compared by suit (A-5 lows)
    qualifier: bool = False  # a hand may not qualify (8-or-better): then it has no hand here


@dataclass(frozen=True)
class Game:
    name: str
    title: str
    kind: str  # BOARD, STUD or DRAW
    own: int  # cards a seat holds at showdown (stud: with the community card, if any)
    board: int  # board cards at showdown (board games)
    sides: tuple[Side, ...]


_HIGH = Side(HIGH, StandardHighHand)
_OMAHA_HIGH = Side(HIGH, OmahaHoldemHand)
_OMAHA8_LOW = Side(LOW, OmahaEightOrBetterLowHand, ace_low=True, qualifier=True)

GAMES: dict[str, Game] = {
    g.name: g
    for g in (
        Game("holdem", "Hold'em", BOARD, 2, 5, (_HIGH,)),
        Game("omaha", "Omaha", BOARD, 4, 5, (_OMAHA_HIGH,)),
        Game("omaha5", "5-card Omaha", BOARD, 5, 5, (_OMAHA_HIGH,)),
        Game("omaha6", "6-card Omaha", BOARD, 6, 5, (_OMAHA_HIGH,)),
        Game("shortdeck", "Short deck", BOARD, 2, 5, (Side(HIGH, ShortDeckHoldemHand),)),
        Game("stud", "Seven-card stud", STUD, 7, 0, (_HIGH,)),
        Game("stud8", "Stud 8-or-better", STUD, 7, 0,
             (_HIGH, Side(LOW, EightOrBetterLowHand, ace_low=True, qualifier=True))),
        Game("razz", "Razz", STUD, 7, 0, (Side(LOW, RegularLowHand, ace_low=True),)),
        Game("draw5", "Five-card draw", DRAW, 5, 0, (_HIGH,)),
        Game("triple27", "2-7 triple draw", DRAW, 5, 0, (Side(LOW, StandardLowHand),)),
    )
}
HILO_GAMES = ("omaha", "omaha5", "omaha6")  # "split": "hilo" makes them Omaha 8-or-better


def game_for(name: str, split: str | None) -> Game:
    if name not in GAMES:
        raise UserError("unknown game %r" % name, hint="games: " + ", ".join(sorted(GAMES)))
    game = GAMES[name]
    if split is None:
        return game
    if split != "hilo" or name not in HILO_GAMES:
        raise UserError('"split": %r is not supported for %s' % (split, name),
                        hint='only "split": "hilo" for ' + ", ".join(HILO_GAMES))
    return replace(game, name=name + "8", title=game.title + " hi-lo 8-or-better",
                   sides=(_OMAHA_HIGH, _OMAHA8_LOW))


# ------------------------------------------------------------------------------ reading the input


@dataclass(frozen=True)
class Table:
    """Everything the split needs, checked: one finished hand and its bets."""

    game: Game
    rules: str  # TDA or ROBERT
    mode: str  # TOURNAMENT or CASH
    chip: int  # the smallest denomination in play
    button: int | None
    own: Mapping[int, tuple[str, ...]]  # each seat's cards (not folded, with cards)
    board: tuple[str, ...]  # board cards; in stud, the community card (RP-10-H) if any
    contributions: Mapping[int, int]
    folded: frozenset[int]

    @property
    def contestants(self) -> list[int]:
        return sorted(s for s, cards in self.own.items() if cards and s not in self.folded)


BETS_KEYS = {"button", "contributions", "folded", "mode", "rules", "chip", "game", "split"}
RULES_NAMES = {"tda2024": TDA, "tda": TDA, "robert": ROBERT, "roberts": ROBERT, "rrop": ROBERT}


def load_json(path: str, what: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise UserError("cannot read %s %s: %s" % (what, path, exc.strerror or exc))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError("%s %s is not valid JSON: %s" % (what, path, exc))
    if not isinstance(data, dict):
        raise UserError("%s %s must hold a JSON object" % (what, path))
    return data


def read_table(record: Mapping[str, Any], bets: Mapping[str, Any]) -> Table:
    """Check a hand record and its bets and turn them into a Table (UserError if they don't fit)."""
    unknown = sorted(set(bets) - BETS_KEYS)
    if unknown:
        raise UserError("unknown key %r in the bets" % unknown[0],
                        hint="keys: " + ", ".join(sorted(BETS_KEYS)))
    _check_status(record.get("status"))
    own = {seat: _cards(cards, "seat %d" % seat) for seat, cards in _seat_map(record).items()}
    contributions = {_seat(k): _amount(v, k) for k, v in _dict(bets, "contributions").items()}
    folded = frozenset(_seat(s) for s in _list(bets, "folded", _folds_in_log(record)))
    _check_seats_known(own, contributions, folded)
    chip = _chip(bets.get("chip", 1), contributions)
    table = Table(
        game=game_for(_game_name(record, bets), bets.get("split")),
        rules=_choice(bets.get("rules", record.get("rules") or TDA), RULES_NAMES, "rules"),
        mode=_choice(bets.get("mode", TOURNAMENT), {TOURNAMENT: TOURNAMENT, CASH: CASH}, "mode"),
        chip=chip,
        button=_button(bets.get("button", record.get("button"))),
        own=own,
        board=_cards(record.get("board") or [], "the board"),
        contributions=contributions,
        folded=folded,
    )
    _check_unique_cards(table)
    return table


def _check_seats_known(own: Mapping[int, Any], contributions: Mapping[int, int],
                       folded: frozenset[int]) -> None:
    unknown = sorted(set(contributions) - set(own) - folded)
    if unknown:
        raise UserError("seat %d is not in the hand record" % unknown[0],
                        hint='a seat whose cards are gone must be listed in "folded"')
    strangers = sorted(folded - set(own) - set(contributions))
    if strangers:
        raise UserError("folded seat %d is in neither the hand record nor the contributions"
                        % strangers[0])


def _check_status(status: Any) -> None:
    if status in ("misdeal", "void"):
        raise UserError("the hand is a %s: all bets are returned, there is nothing to split"
                        % status)
    if status not in (None, "complete", "dealing"):
        raise UserError("unknown hand status %r" % (status,))


def _seat(key: Any) -> int:
    try:
        seat = int(key)
    except (TypeError, ValueError):
        raise UserError("%r is not a seat number" % (key,))
    if seat < 1 or isinstance(key, bool) or str(seat) != str(key).strip():
        raise UserError("%r is not a seat number" % (key,))
    return seat


def _amount(value: Any, seat: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise UserError("contribution of seat %s must be a whole number of chips >= 0, not %r"
                        % (seat, value))
    return value


def _dict(data: Mapping[str, Any], key: str) -> dict:
    value = data.get(key)
    if not isinstance(value, dict):
        raise UserError('the bets need "%s": {seat: chips, ...}' % key)
    return value


def _list(data: Mapping[str, Any], key: str, default: list) -> list:
    value = data.get(key, default)
    if not isinstance(value, list):
        raise UserError('"%s" must be a list of seats' % key)
    return value


def _seat_map(record: Mapping[str, Any]) -> dict[int, list]:
    seats = record.get("seats")
    if not isinstance(seats, dict):
        raise UserError('the hand record has no "seats"',
                        hint="give the output of `facedown replay --json`")
    return {_seat(k): v or [] for k, v in seats.items()}


def _folds_in_log(record: Mapping[str, Any]) -> list[int]:
    """Seats the record's own log shows folding (used when the bets give no "folded")."""
    log = record.get("log") or []
    return [e["seat"] for e in log if isinstance(e, dict) and e.get("action") == "fold"]


def _cards(items: Any, where: str) -> tuple[str, ...]:
    if not isinstance(items, list):
        raise UserError("cards of %s must be a list" % where)
    out = []
    for item in items:
        card = item.get("card") if isinstance(item, dict) else item
        if not (isinstance(card, str) and len(card) == 2 and card[0] in RANKS and card[1] in SUITS):
            raise UserError("%r in %s is not a card" % (card, where),
                            hint="cards look like Ah, Td, 2c")
        out.append(card)
    return tuple(out)


def _check_unique_cards(table: Table) -> None:
    seen: set[str] = set()
    for card in [c for cards in table.own.values() for c in cards] + list(table.board):
        if card in seen:
            raise UserError("card %s appears twice in the hand record" % card)
        seen.add(card)


def _game_name(record: Mapping[str, Any], bets: Mapping[str, Any]) -> str:
    in_record, in_bets = record.get("game"), bets.get("game")
    if in_record and in_bets and in_record != in_bets:
        raise UserError("the hand record is %s but the bets say %s" % (in_record, in_bets))
    name = in_record or in_bets
    if not name:
        raise UserError("no game: the hand record has none", hint='add "game" to the bets')
    return name


def _choice(value: Any, names: Mapping[str, str], key: str) -> str:
    if value not in names:
        raise UserError('"%s": %r is not known' % (key, value), hint="one of: " + ", ".join(names))
    return names[value]


def _button(value: Any) -> int | None:
    return None if value is None else _seat(value)


def _chip(value: Any, contributions: Mapping[int, int]) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise UserError('"chip" must be a whole number >= 1, not %r' % (value,))
    for seat, amount in sorted(contributions.items()):
        if amount % value:
            raise UserError("seat %d put in %d, which is not a multiple of the chip (%d)"
                            % (seat, amount, value),
                            hint='"chip" is the smallest denomination in play')
    return value


# ------------------------------------------------------------------------------ building the pots


@dataclass(frozen=True)
class Pot:
    amount: int
    eligible: tuple[int, ...]  # seats that contest it (put in at least its level, not folded)


def build_pots(contributions: Mapping[int, int], contestants: list[int],
               dead: int = 0) -> list[Pot]:
    """The main pot and the side pots, one layer per all-in level; layers with the same
    eligible seats are one pot. A folded seat's chips stay in the pots it reached. Dead money
    (the big-blind ante, TDA RP-11) belongs to the main pot, whoever put it in."""
    pots: list[Pot] = []
    previous = 0
    for level in sorted({c for c in contributions.values() if c > 0}):
        amount = sum(min(c, level) - min(c, previous) for c in contributions.values())
        eligible = tuple(s for s in contestants if contributions.get(s, 0) >= level)
        if not eligible:
            raise UserError("%d chips above %d were put in only by folded seats"
                            % (amount, previous),
                            hint="an uncalled bet goes back to its seat before the split")
        if pots and pots[-1].eligible == eligible:
            pots[-1] = Pot(pots[-1].amount + amount, eligible)
        else:
            pots.append(Pot(amount, eligible))
        previous = level
    if dead:
        if pots:
            pots[0] = Pot(pots[0].amount + dead, pots[0].eligible)
        else:
            pots.append(Pot(dead, tuple(contestants)))
    return pots


# ------------------------------------------------------------------------------ the showdown


def evaluate(table: Table, side: Side, seat: int) -> Hand | None:
    """The seat's best hand for this side (pokerkit), or None if it does not qualify."""
    own, board = table.own[seat], table.board
    _check_complete(table, seat)
    if side.qualifier:
        return side.hand.from_game_or_none("".join(own), "".join(board))
    return side.hand.from_game("".join(own), "".join(board))


def _check_complete(table: Table, seat: int) -> None:
    game, own, board = table.game, table.own[seat], table.board
    if game.kind == STUD:  # the board holds at most the community card (RP-10-H)
        ok = len(own) + len(board) == game.own and len(board) <= 1
        need = "%d cards with the board" % game.own
    else:
        ok = len(own) == game.own and len(board) == game.board
        need = "%d cards and a board of %d" % (game.own, game.board)
    if not ok:
        raise UserError("seat %d cannot show down in %s: it has %d cards, the board %d (needs %s)"
                        % (seat, game.name, len(own), len(board), need),
                        hint="pots are split on a finished hand")


def winners(hands: Mapping[int, Hand | None]) -> list[int]:
    """Seats holding the best hand (empty if no seat has one, e.g. no qualifying low)."""
    made = {s: h for s, h in hands.items() if h is not None}
    if not made:
        return []
    best = max(made.values())
    return sorted(s for s, h in made.items() if h == best)


def five_cards(side: Side, hand: Hand, cards: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Every 5-card choice from `cards` worth exactly `hand` (a player shows the best of them)."""
    out = []
    for combo in combinations(cards, 5):
        try:
            if side.hand("".join(combo)) == hand:
                out.append(combo)
        except ValueError:
            pass
    return out


# ------------------------------------------------------------------------------ odd-chip rules

RULE_TEXT = {
    "TDA 20-A": "first winner left of the button",
    "TDA 20-B": "high card by suit in the 5-card hand",
    "TDA 20-C": "odd chip of the total pot to the high side",
    "RRoP Ties (button)": "first winner clockwise from the button",
    "RRoP Ties (stud high card)": "highest card by suit, all cards",
    "RRoP Ties (stud low card)": "lowest card by suit, all cards",
    "RRoP Ties (high side)": "odd chip of the split to the high hand",
    "RRoP Ties (one odd chip each)": "no player receives more than one odd chip",
    "cash house rule": "high hole card by suit",
}
NEXT = ", next clockwise"


@dataclass(frozen=True)
class Award:
    """Who receives a split's odd chips: `order[0]` first (by `rule`), then clockwise."""

    order: tuple[int, ...]
    rule: str
    card: str | None = None  # the card that decided, when a card did


def award_order(table: Table, side: Side, hands: Mapping[int, Hand | None],
                tied: list[int]) -> Award:
    """The rule that gives the first odd chip among tied winners, for this game and rulebook."""
    if table.mode == CASH:  # the house rule reads hole cards the plain way: aces high
        keys = {s: _high_key(table.own[s], ace_low=False) for s in tied}
        return _by_card(keys, "cash house rule")
    if table.game.kind != STUD:
        return Award(_clockwise(tied, _after_button(table)),
                     "TDA 20-A" if table.rules == TDA else "RRoP Ties (button)")
    if table.rules == TDA:
        keys = {s: _five_card_key(table, side, hands[s], s) for s in tied}
        return _by_card(keys, "TDA 20-B")
    if side.name == HIGH:
        keys = {s: _high_key(table.own[s], side.ace_low) for s in tied}
        return _by_card(keys, "RRoP Ties (stud high card)")
    keys = {s: _low_key(table.own[s]) for s in tied}
    return _by_card(keys, "RRoP Ties (stud low card)")


def _after_button(table: Table) -> int:
    if table.button is None:
        raise UserError("%s needs the button to award an odd chip" % table.game.name,
                        hint='add "button" to the bets')
    return table.button + 1


def _clockwise(seats: list[int], start: int) -> tuple[int, ...]:
    """Seats in dealing order (ascending, wrapping) beginning at seat `start` or the next one."""
    return tuple(sorted(seats, key=lambda s: (s < start, s)))


# A card key ranks cards so that the greatest key wins the chip: (rank, suit) pairs, best first.
CardKey = list[tuple[int, int, str]]


def _high_key(cards: tuple[str, ...], ace_low: bool) -> CardKey:
    ranks = RANKS_ACE_LOW if ace_low else RANKS
    return sorted(((ranks.index(c[0]), SUITS.index(c[1]), c) for c in cards), reverse=True)


def _low_key(cards: tuple[str, ...]) -> CardKey:
    """Lowest card by suit (aces low, clubs lowest): the lowest card gets the greatest key."""
    key = [(-RANKS_ACE_LOW.index(c[0]), -SUITS.index(c[1]), c) for c in cards]
    return sorted(key, reverse=True)


def _five_card_key(table: Table, side: Side, hand: Hand | None, seat: int) -> CardKey:
    """TDA 20-B: the high card by suit in the 5-card hand; a shared community card decides
    nothing, so it is left out and the next card decides."""
    assert hand is not None
    shown = five_cards(side, hand, table.own[seat] + table.board)
    return max(_high_key(tuple(c for c in five if c not in table.board), side.ace_low)
               for five in shown)


def _by_card(keys: Mapping[int, CardKey], rule: str) -> Award:
    first = max(sorted(keys), key=lambda s: keys[s])
    return Award(_clockwise(list(keys), first), rule, keys[first][0][2] if keys[first] else None)


# ------------------------------------------------------------------------------ splitting


@dataclass(frozen=True)
class OddChip:
    seat: int | None  # None: the chip went to the high side, shared by several high winners
    rule: str
    side: str | None = None  # set when the pot is split high/low
    card: str | None = None

    def as_json(self) -> dict:
        out: dict[str, Any] = {"seat": self.seat, "rule": self.rule}
        if self.side:
            out["side"] = self.side
        if self.card:
            out["card"] = self.card
        return out


@dataclass
class PotResult:
    amount: int
    eligible: tuple[int, ...]
    shares: dict[str, dict[int, int]] = field(default_factory=lambda: {HIGH: {}, LOW: {}})
    hands: dict[str, Hand] = field(default_factory=dict)  # side -> the winning hand (display)
    odd_chips: list[OddChip] = field(default_factory=list)


@dataclass
class Distribution:
    table: Table
    pots: list[PotResult]

    @property
    def payouts(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for pot in self.pots:
            for shares in pot.shares.values():
                for seat, amount in shares.items():
                    out[seat] = out.get(seat, 0) + amount
        return dict(sorted(out.items()))


def distribute(table: Table, dead: int = 0) -> Distribution:
    pots = build_pots(table.contributions, table.contestants, dead)
    return Distribution(table, [split_pot(table, pot) for pot in pots])


def split_pot(table: Table, pot: Pot) -> PotResult:
    """One pot, split separately (TDA 21, RRoP Ties): in chip units, high side first."""
    result = PotResult(pot.amount, pot.eligible)
    units = pot.amount // table.chip
    sides = table.game.sides
    if len(pot.eligible) == 1:  # everyone else folded: the pot goes to that one
        result.shares[sides[0].name] = {pot.eligible[0]: pot.amount}
        return result
    hands = {side.name: {s: evaluate(table, side, s) for s in pot.eligible} for side in sides}
    won = [(side, winners(hands[side.name])) for side in sides]
    won = [(side, seats) for side, seats in won if seats]
    halves = _halves(units, len(won))
    if len(won) == 2 and units % 2:
        result.odd_chips.append(_hilo_chip(table, won[0][1]))
    capped = {c.seat for c in result.odd_chips if c.seat is not None}
    for (side, tied), side_units in zip(won, halves):
        needs_award = side_units % len(tied) > 0
        award = award_order(table, side, hands[side.name], tied) if needs_award else None
        shares, chips = split_side(table, side_units, tied, award, capped)
        result.shares[side.name] = {s: n * table.chip for s, n in shares.items()}
        result.hands[side.name] = hands[side.name][tied[0]]
        result.odd_chips += [replace(c, side=side.name if len(won) == 2 else None) for c in chips]
        capped |= {c.seat for c in chips}
    return result


def _halves(units: int, sides: int) -> list[int]:
    """Units per side: all to one side, or half each with the odd unit to the high side."""
    return [units] if sides == 1 else [units - units // 2, units // 2]


def _hilo_chip(table: Table, high_winners: list[int]) -> OddChip:
    rule = "TDA 20-C" if table.rules == TDA else "RRoP Ties (high side)"
    seat = high_winners[0] if len(high_winners) == 1 else None
    return OddChip(seat, rule, side=HIGH)


def split_side(table: Table, units: int, tied: list[int], award: Award | None,
               capped: set[int]) -> tuple[dict[int, int], list[OddChip]]:
    """Even shares in chip units; the odd units go one each in the award's order. Under
    Robert's Rules a seat that already has an odd chip of this pot is passed over while
    another winner has none."""
    share, odd = divmod(units, len(tied))
    shares = {s: share for s in tied}
    if not odd:
        return shares, []
    assert award is not None
    order = list(award.order)
    if table.rules == ROBERT:
        order = [s for s in order if s not in capped] + [s for s in order if s in capped]
    chips = []
    for i, seat in enumerate(order[:odd]):
        shares[seat] += 1
        if seat not in award.order[:odd]:
            chips.append(OddChip(seat, "RRoP Ties (one odd chip each)"))
        elif i == 0 and seat == award.order[0]:
            chips.append(OddChip(seat, award.rule, card=award.card))
        else:
            chips.append(OddChip(seat, award.rule + NEXT))
    return shares, chips


# ------------------------------------------------------------------------------ printing


def as_json(dist: Distribution) -> dict:
    def seats(shares: Mapping[int, int]) -> dict[str, int]:
        return {str(s): n for s, n in sorted(shares.items())}

    return {
        "pots": [
            {
                "amount": p.amount,
                "eligible": list(p.eligible),
                "high": seats(p.shares[HIGH]),
                "low": seats(p.shares[LOW]),
                "odd_chips": [c.as_json() for c in p.odd_chips],
            }
            for p in dist.pots
        ],
        "payouts": seats(dist.payouts),
    }


def pretty(card: str) -> str:
    return card[0].replace("T", "10") + SUIT_SIGNS[card[1]]


def render(dist: Distribution) -> str:
    """The floor's view: a heading, one line per pot, the payouts."""
    t = dist.table
    heading = [t.game.title, t.mode, "TDA 2024" if t.rules == TDA else "Robert's Rules",
               "chip %d" % t.chip] + (["button %d" % t.button] if t.button else [])
    lines = [" \u00b7 ".join(heading)]
    names = ["Main pot"] + ["Side pot %d" % i for i in range(1, len(dist.pots))]
    width = max([len(str(p.amount)) for p in dist.pots] + [1])
    for name, pot in zip(names, dist.pots):
        lines.append("%-10s %*d  seats %-10s %s%s" % (
            name, width, pot.amount, " ".join(map(str, pot.eligible)),
            _winners_text(pot, t.game), _odd_text(pot, t.chip)))
    if not dist.pots:
        lines.append("No chips in the pot.")
    paid = ", ".join("seat %d %d" % sn for sn in dist.payouts.items())
    lines.append("Payouts: " + (paid or "none"))
    return "\n".join(lines)


def _winners_text(pot: PotResult, game: Game) -> str:
    if len(pot.eligible) == 1:
        return "seat %d takes it (no other seat eligible)" % pot.eligible[0]
    parts = []
    for side in game.sides:
        shares = pot.shares[side.name]
        if shares:
            got = ", ".join("seat %d %d" % sn for sn in sorted(shares.items()))
            parts.append("%s %s: %s" % (side.name, _hand_text(pot.hands[side.name], side), got))
    return "; ".join(parts)


def _hand_text(hand: Hand, side: Side) -> str:
    """What won, by ranks only (tied winners hold the same ranks): "full house 8-8-8-7-7";
    low hands highest card first: "8-6-4-2-A"."""
    ranks = RANKS_ACE_LOW if side.ace_low else RANKS
    held = [repr(c)[0] for c in hand.cards]
    if hand.low:
        order = sorted(held, key=ranks.index, reverse=True)
    elif sorted(held) == sorted("A2345"):  # the wheel: its ace plays low
        order = list("5432A")
    else:
        order = sorted(held, key=lambda r: (held.count(r), ranks.index(r)), reverse=True)
    shown = "-".join(r.replace("T", "10") for r in order)
    return shown if hand.low else "%s %s" % (hand.entry.label.value.lower(), shown)


def _odd_text(pot: PotResult, chip: int) -> str:
    """ "odd chip of 25 → seat 1: TDA 20-A, first winner left of the button"."""
    if not pot.odd_chips:
        return ""
    parts = []
    for c in pot.odd_chips:
        who = "high side" if c.seat is None else "seat %d" % c.seat
        if c.side and c.seat is not None:
            who = "%s %s" % (c.side, who)
        if c.card:
            who += " (%s)" % pretty(c.card)
        why = c.rule if c.rule.endswith(NEXT) else "%s, %s" % (c.rule, RULE_TEXT[c.rule])
        parts.append("%s: %s" % (who, why))
    count = len(pot.odd_chips)
    label = "odd chip" if count == 1 else "%d odd chips" % count
    return "  |  %s of %d \u2192 %s" % (label, chip, "; ".join(parts))


# ------------------------------------------------------------------------------ the command


def add_command(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "pots",
        help="split the pots of a finished hand, odd chips by the rulebook",
        description="Build the main and side pots of a finished hand, find the winners of each "
                    "(high and low) and deal every chip, naming the rule behind each odd chip.",
    )
    p.add_argument("hand", metavar="HAND.json",
                   help="hand record, as `facedown replay --json` prints it")
    p.add_argument("bets", metavar="BETS.json",
                   help="what each seat put in, folds and house settings (see docs/pots.md)")
    p.add_argument("--json", action="store_true", help="print the distribution as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    table = read_table(load_json(args.hand, "hand record"), load_json(args.bets, "bets file"))
    dist = distribute(table)
    print(json.dumps(as_json(dist)) if args.json else render(dist))
    return 0
