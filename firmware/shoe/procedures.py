# The procedure catalogue: every ruling the shoe applies by itself, with the rule it comes from.
# One table, read by the engine (ids), the host (rule and text) and the docs.
# Row: (id, TDA 2024 reference, Robert's Rules reference, what the shoe does). The row's index
# is the id's number in the compact log (keep the order: append new rows at the end).

PROCEDURES = (
    # 1. exposed hole card during the deal (flop and draw games)
    ("misdeal-exposed", "TDA 35-A-7", "RRoP Misdeal a/b",
                        "1st or 2nd card off the deck, or a second downcard, exposed: misdeal"),
    ("exposed-to-burn", "TDA (silent; house practice)", "RRoP Hold'em 1",
                        "exposed hole card set aside as the flop burn; seat replaced after the deal"),
    ("exposed-to-muck", "house setting", "house setting",
                        "exposed hole card mucked; seat replaced after the deal"),
    ("exposed-replaced", "TDA (silent; house practice)", "RRoP Hold'em 1",
                         "seat with an exposed card receives the next stub card"),
    ("exposed-plays", "TDA 35-D", "RRoP Misdeals",
                      "card exposed after the misdeal window closed: it plays face up"),
    # 2. stud
    ("stud-exposed-upcard", "TDA RP-10-A", "TDA RP-10-A (house)",
                            "exposed initial downcard becomes the upcard; 3rd street dealt down"),
    ("stud-7th-replaced", "TDA RP-10-B", "TDA RP-10-B (house)",
                          "exposed 7th-street card mucked and replaced by the next card down"),
    ("stud-7th-plays", "house setting", "house setting",
                       "exposed 7th-street card plays face up"),
    # 3. premature streets
    ("premature-flop", "TDA RP-5-A", "RRoP Hold'em 7",
                       "premature flop back to the stub, reshuffled; re-dealt without a burn"),
    ("premature-turn", "TDA RP-5-B", "house setting",
                       "premature turn back to the stub, reshuffled; re-dealt without a burn"),
    ("premature-turn-aside", "house setting", "RRoP Hold'em 8",
                             "premature turn set aside; the river card comes as the turn"),
    ("premature-turn-return", "house setting", "RRoP Hold'em 8",
                              "set-aside turn reshuffled into the stub; river without a burn"),
    ("premature-river", "TDA RP-5-C", "RRoP Hold'em 8",
                        "premature river back to the stub, reshuffled; re-dealt without a burn"),
    ("premature-stud", "TDA RP-5-D", "TDA RP-5-D (house)",
                       "premature stud street back to the stub, reshuffled; re-dealt without a burn"),
    # 4. four-card flop, extra burn
    ("flop4-scramble", "TDA 39-A", "house setting",
                       "four-card flop scrambled face down; one picked at random is burned"),
    ("flop4-reshuffle", "house setting", "RRoP Hold'em 3",
                        "four-card flop back to the stub, reshuffled; new flop without a burn"),
    ("extra-burn-stays", "TDA 38", "house setting", "extra burn card stays burned"),
    ("extra-burn-next", "house setting", "RRoP Hold'em 5",
                        "extra burn card kept as the next street's burn"),
    # 5. missing burn
    ("no-burn-scramble", "TDA 39-B", "house setting",
                         "flop without a burn scrambled; one picked at random is burned, one card added"),
    ("no-burn-restore", "house setting", "RRoP Hold'em 4",
                        "flop without a burn put in order: first card burned, one card added"),
    ("burn-misrouted", "TDA RP-14", "RRoP Hold'em 5",
                       "burn card misrouted to the output: placed as the burn, street goes on"),
    # 6. extra card on a later street
    ("extra-card-burn", "seed rule 7 (TDA silent)", "seed rule 7",
                        "extra card dealt: kept aside as the next street's burn"),
    ("extra-card-muck", "seed rule 7 (TDA silent)", "seed rule 7",
                        "extra card dealt with no street left: mucked"),
    # 7. disordered stub
    ("stub-restored", "TDA RP-4-1", "TDA RP-4-1 (RRoP silent)",
                      "disordered stub verified and restored to its order"),
    ("stub-reshuffle", "TDA RP-4-2", "TDA RP-4-2 (RRoP silent)",
                       "disordered stub reshuffled alone"),
    ("stub-mixed-reshuffle", "TDA RP-4-3", "TDA RP-4-3 (RRoP silent)",
                             "stub mixed with muck/burns: all reshuffled together"),
    # 8. non-standard, duplicate, boxed cards
    ("misdeal-nonstandard", "TDA 35-A-6", "house setting",
                            "non-standard card before substantial action: misdeal"),
    ("nonstandard-scrap", "TDA 35-D", "RRoP Irregularities 8",
                          "non-standard card removed as a scrap of paper and replaced"),
    ("fouled-deck", "TDA 35-E", "RRoP Irregularities 4",
                    "duplicate card: fouled deck, hand void, all bets returned"),
    ("boxed-scrap", "TDA (silent; scrap of paper)", "RRoP Irregularities 7",
                    "boxed card mucked as a scrap of paper and replaced by the next card"),
    ("misdeal-boxed", "TDA 35-A-1", "RRoP Misdeal c",
                      "two boxed cards on the initial deal: misdeal"),
    # 9. extra or missing hole cards
    ("misdeal-extra-card", "TDA 35-A-5", "RRoP Misdeal d",
                           "wrong number of hole cards: misdeal"),
    ("extra-holecard-burn", "house setting", "RRoP Hold'em 2",
                            "one extra hole card kept aside as the next street's burn"),
    ("button-completed", "TDA 37 / 35-B", "RRoP Misdeal e",
                         "button short a card: given the next card"),
    ("button-dead", "TDA 37", "TDA 37 (house)", "button acted with too few cards: hand dead"),
    ("misdeal-short", "TDA 35-A-5", "house setting", "seat dealt too few cards: misdeal"),
    ("short-completed", "house setting", "RRoP Misdeal e",
                        "short seats completed from the stub in proper sequence"),
    # 10. stud short stub
    ("short-stub-a", "TDA RP-10-H-A", "TDA RP-10-H-A (house)",
                     "7th street short: stub and prior burns reshuffled, one card each"),
    ("short-stub-b", "TDA RP-10-H-B", "TDA RP-10-H-B (house)",
                     "7th street short: burn and one community card"),
    ("short-stub-c", "TDA RP-10-H-C", "TDA RP-10-H-C (house)",
                     "7th street short: stub and prior burns reshuffled, one community card"),
    # 11. draw games
    ("draw-reshuffle", "TDA 39-D (house rule)", "house rule",
                       "stub short for a draw: last card plus discards reshuffled face down"),
    ("draw-exposed-replaced", "house rule", "house rule",
                              "card exposed on the draw mucked and replaced"),
    # the floor
    ("misdeal-floor", "TDA 35", "RRoP Misdeals", "misdeal declared by the floor"),
    ("reserved-burn-mucked", "TDA 38", "RRoP", "card kept for a burn with no street left: mucked"),
    ("out-of-sequence", "TDA RP-4", "TDA RP-4", "card read out of its expected order: taken as read"),
    ("stub-exhausted", "TDA RP-14", "house rule",
     "no card left even after a draw reshuffle: the seat draws short"),
    ("card-settled", "TDA RP-4 (power cut)", "TDA RP-4 (power cut)",
     "a card that left during a power cut, read at the output, is placed where it was going"),
    ("no-burn-reshuffle", "house setting", "RRoP Hold'em 4",
                          "flop without a burn, seen turned: back into the stub, reshuffled; burn, new flop"),
    # chips put out against what was declared (shoe.chips)
    ("declared-binds", "TDA 40", "RRoP Verbal 1",
     "a declared bet or call with no chips put out binds: the seat owes the chips"),
    ("declared-void", "house setting (seed 003)", "house setting (seed 003)",
     "a declared bet or call with no chips put out is void: the seat acts again"),
    ("chips-short", "TDA 41", "RRoP Verbal 1",
     "fewer chips put out than the action takes: the seat completes them"),
    ("chips-excess-returned", "TDA 41", "RRoP Verbal 1",
     "more chips put out than the action takes: the action stands, the excess goes back"),
    ("chips-excess-pot", "house setting (seed 003)", "house setting (seed 003)",
     "more chips put out than declared: the declaration stands, the excess stays in the pot"),
    ("chips-excess-noticed", "house setting (seed 003)", "house setting (seed 003)",
     "more chips put out than declared, the player noticed first: the excess goes back"),
    ("oversized-call", "TDA 44", "RRoP Oversized chip",
     "a single oversized chip facing a bet, raise not declared: a call, the change back"),
    ("oversized-bet", "TDA 44", "RRoP Oversized chip",
     "a single chip facing no bet, not declared: a bet of the chip's value"),
    ("multichip-call", "TDA 45", "RRoP Multiple chips",
     "several chips facing a bet, raise not declared, every chip needed for the call: a call"),
    ("under-raise-full", "TDA 43-B", "RRoP No-limit 4",
     "a raise by chips of half the minimum raise or more: made the minimum raise"),
    ("under-raise-call", "TDA 43-B", "RRoP No-limit 4",
     "a raise by chips short of half the minimum raise: a call, the excess back"),
    ("string-call", "TDA 56", "RRoP String raise",
     "a string bet facing a bet: a call, the later motions' chips back"),
    ("string-bet", "TDA 56", "RRoP String raise",
     "a string bet facing no bet: a bet of the first motion's chips"),
)


# the procedures that kill a seat's hand mid-hand (the seat is in their log entry): the betting
# folds that seat (shoe.bets; the host's payout.replay reads the record's entries the same way)
KILLS = ("button-dead",)

INDEX = {}
for _i, _row in enumerate(PROCEDURES):
    INDEX[_row[0]] = _i


def rule(num, profile):
    row = PROCEDURES[num]
    return row[2] if profile == "robert" else row[1]


def pid(num):
    return PROCEDURES[num][0]


def text(num):
    return PROCEDURES[num][3]
