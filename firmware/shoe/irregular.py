# The procedures for irregularities (the rulebooks' error procedures): an exposed card, a
# premature street, a disordered stub, a double feed, a non-standard or boxed card, a four-card
# flop, a flop without a burn, a stud stub too short, a draw the stub cannot cover. Functions of
# the hand (shoe.hand.Hand), which calls them through its methods of the same names: this module
# is imported when one applies and let go after (shoe.hand._irregular), so that a Pico's heap
# holds it only then. Nothing here keeps a reference to its own functions.
from shoe import cards as C
from shoe import games as G
from shoe.errors import ShoeError, E_ARG, E_STATE
from shoe.progress import (MISDEAL, CTX_DEAL, CTX_BURN, CTX_FLOPBURN, CTX_FLOP, CTX_STREET,
                           CTX_REPLACE, B_DONE, B_OWED, B_NOBURN_SEEN, P_BURN, DO_PREMATURE)
from shoe.zones import (STUB, BOARD, BURNS, MUCK, ASIDE, SEAT0, OP_PICK, OP_MOVE, MIX_STUB,
                        MIX_MUCK, MIX_BURNS)


def expose(h, seat, index):
    """By dealer error, that seat's index-th card (1-based, in the order received) was exposed."""
    h._check_dealing()
    op = ("report", seat, index)
    if h._again(op):  # its replacement card was stopped: deal it now
        h._start(op)
        h._continue()
        return
    h._check_seat(seat)
    held = h.z.seats[seat]
    if not isinstance(index, int) or isinstance(index, bool) or not (1 <= index <= len(held)):
        raise ShoeError(E_ARG, "seat %d holds %d card(s); no card %r" % (seat, len(held), index))
    if held[index - 1] & C.UP:
        raise ShoeError(E_STATE, "seat %d's card %d is already face up" % (seat, index))
    h._start(op)
    h.last_street = None
    code = held[index - 1] & C.CODE
    if h.kind == G.STUD:
        _expose_stud(h, seat, index - 1, code)
    elif h.kind == G.DRAW and h.draw_round > 0:
        if h.house["draw_exposed"] == "replace":
            h._proc("draw-exposed-replaced", seat)
            h.z.move(code, MUCK)
            h._owe(SEAT0 + seat, False, CTX_REPLACE)
        else:
            _plays(h, seat, code)
    elif h.nstreet == 0 and h.window_open():
        _expose_holecard(h, seat, code)
    else:
        _plays(h, seat, code)


def premature(h):
    """The cards of the last street step were dealt before betting had finished (RP-5)."""
    h._check_dealing()
    h._again(DO_PREMATURE)
    if h.last_street is None or h.kind == G.DRAW:
        raise ShoeError(E_STATE, "premature applies only right after a street is dealt")
    cards = h.last_street
    h.last_street = None
    if h.kind == G.BOARD and h.nstreet == 2 and h.house["premature_turn"] == "set_aside":
        h._proc("premature-turn-aside")
        for code in cards:
            h.z.move(code, ASIDE)
            h.returning.append(code)
        h.nstreet -= 1
        led = h.burn_for
        river = led[3]
        if river == B_OWED or river < 64:
            # the turn is dealt again with a burn, the river without one: the set-aside
            # turn's burn is the river's, taken early (a card kept for the river's burn
            # becomes the new turn's). Set aside twice, the river's burn is already taken:
            # the turn keeps its burn and is dealt again without one (Rule 38).
            led[3] = led[2]
            led[2] = B_OWED
            h._settle(river if river < 64 else None, True)
        return
    if h.kind == G.STUD:
        pid = "premature-stud"
    else:
        pid = ("premature-flop", "premature-turn", "premature-river")[h.nstreet - 1]
    h._proc(pid)
    for code in cards:
        h.z.move(code, STUB)
    h._reshuffle(MIX_STUB)
    h.nstreet -= 1  # its burn stays in the ledger: it is dealt again without one


def jam(h, mixed_with=(), order_kept=False):
    """The stub is disordered, optionally mixed with the muck and/or burns (RP-4)."""
    h._check_dealing()
    for what in mixed_with:
        if what not in ("muck", "burns"):
            raise ShoeError(E_ARG, "mixed_with takes muck and/or burns, not %r" % (what,))
    if order_kept and mixed_with:
        raise ShoeError(E_ARG, "a stub mixed with other cards cannot keep its order")
    if not h.z.stub:
        raise ShoeError(E_STATE, "no stub left")
    h.last_street = None  # (the burn ledger stays: RP-4 adds no burn and takes none)
    if order_kept:
        h._proc("stub-restored")
        return
    mask = MIX_STUB
    if mixed_with:
        h._proc("stub-mixed-reshuffle")
        if "muck" in mixed_with:
            mask |= MIX_MUCK
            h._gather(h.z.muck)
        if "burns" in mixed_with:
            mask |= MIX_BURNS
            h._gather(h.z.burns)
    else:
        h._proc("stub-reshuffle")
    h._reshuffle(mask)


def short_stub(h):
    """RP-10-H, before 7th street. Returns True when a community card is dealt instead."""
    required = len(h.live_seats()) + 2
    n = len(h.z.stub)
    if n >= required:
        return False
    prior = []
    for s in (1, 2, 3):
        v = h.burn_for[s]
        if v & 0xc0 == B_DONE and h.z.where[v & C.CODE] == BURNS:
            prior.append(v & C.CODE)
    if n + len(prior) >= required:
        h._proc("short-stub-a")
        h._gather(prior)
        h._reshuffle(MIX_STUB | MIX_BURNS)
        return False
    if n >= 3:
        h._proc("short-stub-b")
        return True
    h._proc("short-stub-c")
    h._gather(prior)
    h._reshuffle(MIX_STUB | MIX_BURNS)
    return True


def extra(h, code, dest, up, ctx):
    """A second card came out of one feed (double feed)."""
    if ctx == CTX_DEAL:
        h.z.move(code, dest, up)
        if h.house["extra_holecard"] == "misdeal" or h.extra_initial >= 1:
            if h.window_open():
                h._end(MISDEAL, "misdeal-extra-card")
                return -1
        h.extra_initial += 1
        h._proc("extra-holecard-burn", dest - SEAT0)
        h._keep_for_burn(code)
        return 0
    if ctx == CTX_BURN or ctx == CTX_FLOPBURN:
        if h.house["extra_burn"] == "stays":
            h._proc("extra-burn-stays")
            h.z.move(code, BURNS)
        else:
            h._proc("extra-burn-next")
            h._keep_for_burn(code)
        return 0
    if ctx == CTX_FLOP:
        h.z.move(code, BOARD, True)
        h.last_street.append(code)
        return 0
    if h.streets_done() < h.streets_total():
        h._proc("extra-card-burn")
        h._keep_for_burn(code)
    else:
        h._proc("extra-card-muck")
        h.z.move(code, MUCK)
    return 0


def nonstandard(h, code):
    """A joker or a card from another deck. Returns True when it ends the hand."""
    h.z.remove(code)
    if h.house["nonstandard_card"] == "misdeal" and h.window_open():
        h._end(MISDEAL, "misdeal-nonstandard")
        return True
    h._proc("nonstandard-scrap")
    return False


def boxed(h, code, ctx):
    """A card face up in the stub: a scrap, replaced by the next card."""
    h.z.move(code, MUCK)
    if ctx == CTX_DEAL:
        h.boxed_initial += 1
        if h.boxed_initial >= 2 and h.window_open():
            h._end(MISDEAL, "misdeal-boxed")
            return True
    h._proc("boxed-scrap")
    return False


def _expose_holecard(h, seat, code):
    """Flop (and draw) games, during the deal, window open (procedure 1)."""
    if code == h.first_two[0] or code == h.first_two[1] or h.exposures >= 1:
        h.z.turn_up(seat, code)  # the table saw it: the record shows it face up
        h._end(MISDEAL, "misdeal-exposed")
        return
    h.exposures += 1
    if h.house["exposed_holecard"] == "burn":
        h._proc("exposed-to-burn", seat)
        h._keep_for_burn(code)
    else:
        h._proc("exposed-to-muck", seat)
        h.z.move(code, MUCK)
    h.replace_queue.append(seat)
    if h.initial_complete():
        h._after_initial()


def _expose_stud(h, seat, pos, code):
    if pos < 2 and h.nstreet == 0:
        h._proc("stud-exposed-upcard", seat)
        h.z.turn_up(seat, code)
        if len(h.z.seats[seat]) < 3 and seat not in h.down3:
            h.down3.append(seat)
    elif pos == 6:
        if h.house["stud_7th_exposed"] == "replace":
            h._proc("stud-7th-replaced", seat)
            h.z.move(code, MUCK)
            h._owe(SEAT0 + seat, False, CTX_REPLACE)
        else:
            h._proc("stud-7th-plays", seat)
            h.z.turn_up(seat, code)
    else:
        _plays(h, seat, code)


def _plays(h, seat, code):
    h._proc("exposed-plays", seat)
    h.z.turn_up(seat, code)


def four_card_flop(h, before):
    board = h.z.board
    if h.house["four_card_flop"] == "scramble":
        h._proc("flop4-scramble")
        n = len(board) - before
        k = h.rng.below(n)
        h.z.note(OP_PICK, BOARD, n)
        code = board[before + k]
        h.z.move(code, BURNS)
        _unlist(h, code)
        if h.house["flop4_pick_is_turn_burn"]:
            h._burned(2, code)  # the turn's burn: the turn takes none from the stub
        return
    h._proc("flop4-reshuffle")
    h._gather(board[before:])
    h.last_street = []
    h._reshuffle(MIX_STUB)
    for _ in range(3):
        h.step.owed.append((BOARD, True, CTX_STREET))
    h._pay()


def no_burn_flop(h, before):
    board = h.z.board
    if h.house["no_burn_flop"] == "restore" and h.burn_for[1] == B_NOBURN_SEEN:
        # RRoP Hold'em 4, cards exposed: take the flop back, shuffle it into the stub, cut,
        # burn, a new flop. The burn that went to the board is back in the stub: the flop
        # still owes its one burn.
        h._proc("no-burn-reshuffle")
        h._gather(board[before:])
        h._reshuffle(MIX_STUB)
        h.burn_for[1] = B_OWED
        h.last_street = []
        h.step.want = before + 3
        h.step.kind = P_BURN
        h._finish_street()
        return
    if h.house["no_burn_flop"] == "scramble":
        h._proc("no-burn-scramble")
        k = h.rng.below(3)
        h.z.note(OP_PICK, BOARD, 3)
    else:
        h._proc("no-burn-restore")
        k = 0
    code = board[before + k]
    h.z.move(code, BURNS)
    _unlist(h, code)
    h._burned(1, code)
    h._owe(BOARD, True, CTX_STREET)


def _unlist(h, code):
    """A card of the last street is burned after all. (A street a power cut interrupted
    lists only the cards dealt since the reboot: the card may not be there.)"""
    if code in h.last_street:
        h.last_street.remove(code)


def draw_reshuffle(h, seat):
    """The stub cannot cover a draw: last card plus earlier discards, reshuffled."""
    own = h.draw_round * 16 + seat
    pool = []
    for code in h.z.muck:
        tag = h.discards[code]
        if tag and (tag != own or h.house["draw_reshuffle_own_discards"]):
            pool.append(code)
    if not pool:
        return
    h._proc("draw-reshuffle", seat)
    h._gather(pool)
    h._reshuffle(MIX_STUB | MIX_MUCK)


def last_down_card(hand):
    """(seat, index) of the last card dealt face down to a seat (index 1-based in the order the
    seat received its cards), or None: Hand.can_report_exposed, which the front panel's EXPOSED
    asks (here, not in shoe/hand.py: loaded at the first irregularity, not held from boot)."""
    log = hand.z.log
    i = len(log) - 4
    while i >= 0:
        # (a move names seat n as zone SEAT0 + n, bit 7 set when face up)
        if log[i] == OP_MOVE and log[i + 3] & 0x7F >= SEAT0 and not log[i + 3] & 0x80:
            seat = (log[i + 3] & 0x7F) - SEAT0
            held = hand.z.seats.get(seat, ())
            for k in range(len(held)):
                if held[k] & C.CODE == log[i + 1]:
                    return None if held[k] & C.UP else (seat, k + 1)
            return None  # that card has left the seat since (mucked, replaced)
        i -= 4
    return None
