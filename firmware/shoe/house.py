# House settings: every point where TDA 2024 and Robert's Rules differ or are silent, by name.
# A profile is a rulebook's defaults with named overrides on top.

PROFILES = ("tda2024", "robert")
PROFILE_MAX = 48  # characters of a house profile's name the shoe keeps (config's "_profile")

# name, TDA 2024 default, Robert's default, allowed values, where it comes from
SETTINGS = (
    ("misdeal_window", "tda36", "two_actions", ("tda36", "two_actions"),
     "TDA 36 substantial action / RRoP Misdeals: two players acted after the blinds"),
    ("exposed_holecard", "burn", "burn", ("burn", "muck"),
     "RRoP Hold'em 1 (TDA silent): a single exposed hole card becomes the flop burn, or is mucked"),
    ("extra_holecard", "misdeal", "burn", ("misdeal", "burn"),
     "TDA 35-A-5 wrong number of cards / RRoP Hold'em 2: one extra card becomes the burn"),
    ("short_hand", "misdeal", "complete", ("misdeal", "complete"),
     "TDA 35-A-5 / RRoP Misdeal e: short seats (not the button) at the first action"),
    ("premature_turn", "reshuffle", "set_aside", ("reshuffle", "set_aside"),
     "TDA RP-5-B / RRoP Hold'em 8: premature turn"),
    ("four_card_flop", "scramble", "reshuffle", ("scramble", "reshuffle"),
     "TDA 39-A / RRoP Hold'em 3: four-card flop"),
    ("flop4_pick_is_turn_burn", True, True, (True, False),
     "TDA 39-A with Rule 38: the card picked from a four-card flop is the turn's burn"),
    ("no_burn_flop", "scramble", "restore", ("scramble", "restore"),
     "TDA 39-B / RRoP Hold'em 4: flop dealt without a burn, before action"),
    ("extra_burn", "stays", "next_burn", ("stays", "next_burn"),
     "TDA 38 / RRoP Hold'em 5: a second card in the burn tray"),
    ("nonstandard_card", "misdeal", "scrap", ("misdeal", "scrap"),
     "TDA 35-A-6 and 35-D / RRoP Irregularities 8: joker or wrong-deck card"),
    ("stud_7th_exposed", "replace", "replace", ("replace", "keep"),
     "TDA RP-10-B: a 7th-street card exposed by the dealer"),
    ("draw_exposed", "replace", "replace", ("replace", "keep"),
     "house rule: a card exposed on the draw is mucked and replaced"),
    ("draw_reshuffle_own_discards", False, False, (False, True),
     "house rule (TDA 39-D): the drawing seat's own discards join a draw reshuffle"),
    ("cut_after_reshuffle", True, True, (True, False),
     "TDA RP-4 / RRoP: a random cut after every face-down reshuffle"),
    # the betting's (shoe.betting reads them; the game's structure and blinds are the "betting"
    # configuration, not settings)
    ("reopen_limit", "half", "half", ("half", "full"),
     "TDA 47-B / RRoP: in fixed limit an all-in of half a bet or more reopens the betting"),
    ("limit_short_allin", "raise", "complete", ("raise", "complete"),
     "RRoP Betting and raising 6 (TDA silent): in fixed limit, facing an all-in of less than half a bet, the next raise completes the wager (a 20 bet, all in for 25: to 40) or is a full bet over it (to 45)"),
    ("cap_heads_up", "capped", "uncapped", ("capped", "uncapped"),
     "TDA 48 / RRoP Limit 6: the raise cap still applies when two players are left"),
    ("straddle", "off", "on", ("off", "on"),
     "house rule (TDA silent; RRoP Button games): live straddles allowed"),
    ("blind_before_ante", True, True, (True, False),
     "TDA RP-11 (2024): a short big blind posts the blind first, then the big-blind ante"),
    ("pl_full_blinds", True, False, (True, False),
     "TDA 54: pot-limit sizing pre-flop counts short blinds as full"),
    ("short_blind", "full", "full", ("full", "posted"),
     "RRoP No-limit 2 / TDA forum: pre-flop a short all-in blind is called and raised as a full one"),
    ("under_raise", "half", "half", ("half", "call"),
     "TDA 43 / RRoP: a raise of 50% or more of the minimum is made a full raise, less is a call"),
    ("out_of_turn", "tda53", "robert", ("tda53", "robert", "home"),
     "TDA 53 / RRoP Action out of turn / seed 003: action out of turn"),
    ("excess_chips", "returned", "returned", ("returned", "stays"),
     "TDA 41 / RRoP Verbal / seed 003: chips over a declaration go back, or stay in the pot"),
    ("no_chips", "binds", "binds", ("binds", "void"),
     "TDA 40 / RRoP Verbal / seed 003: a declared bet or call with no chips put in binds, or is void"),
)

BETTING = "betting"  # house JSON's key for how the game is bet (shoe.betting.config checks it)

_INDEX = {}
for _i, _row in enumerate(SETTINGS):
    _INDEX[_row[0]] = _i


def _near(key, table=SETTINGS):
    """The settings sharing a word with key (all of them if none does): short enough for a
    protocol error reply."""
    words = key.split("_")
    near = [row[0] for row in table if [w for w in words if len(w) > 2 and w in row[0]]]
    return near or [row[0] for row in table]


def profile(rules, overrides=None, table=SETTINGS, what="house setting"):
    """The settings dict of a rulebook with overrides. Raises ValueError with a clear message.
    table: rows like SETTINGS (shoe.betting keeps its own, read the same way)."""
    if rules not in PROFILES:
        raise ValueError("unknown rules %r (allowed: %s)" % (rules, ", ".join(PROFILES)))
    col = 1 if rules == "tda2024" else 2
    out = {}
    for row in table:
        out[row[0]] = row[col]
    if overrides:
        if not isinstance(overrides, dict):
            raise ValueError("%s overrides must be an object of setting: value" % what)
        for key in overrides:
            if key == BETTING:
                continue  # not a setting: the betting configuration
            row = None
            for r in table:
                if r[0] == key:
                    row = r
                    break
            if row is None:
                raise ValueError("unknown %s %r (known: %s)" % (
                    what, key, ", ".join(_near(key, table))))
            allowed = row[3]
            value = overrides[key]
            if value not in allowed or type(value) is not type(allowed[0]):
                raise ValueError("%s %s: %r not allowed (allowed: %s)" % (
                    what, key, value, ", ".join(repr(a) for a in allowed)))
            out[key] = value
    return out
