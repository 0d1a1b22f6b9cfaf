# The device's rare paths: the commands no hand runs (config, audit, telemetry, raw,
# maintenance, resume, recover, history, the simulator's sim_fault and sim_deck) and the
# power-up restore; a command whose handler is not a cmd_<name> of the device (play.py) is
# here, as a function of the same name taking the device (history has a module of its own,
# history.py, the smaller to load between hands). device.py imports this module when
# one comes and lets it go after (shoe.compat.release): on a Pico a module's bytecode and
# strings sit in the heap for as long as it is imported (docs/deploy.md, "The memory budget").
# Nothing made here may keep a reference to this module's functions or classes (it would keep
# the module in the heap).

import json

import wire
from version import VERSION as FIRMWARE_VERSION
from play import CommandError, HELD_HANDS, _NoRandom, _entropy_why, _next_seat, dealing
from journal import CONFIG_MAX
from shoe import cards as C
from shoe import faults as F
from shoe import games as G
from shoe.errors import ShoeError
from shoe.progress import MISDEAL
from shoe.zones import OP_STATUS

# sim_fault kinds armed on the mechanism as they are named; and feed_jam, the mechanism's jam
# (the wire's "jam" is the disordered stub, RP-4)
_SIM_KINDS = ("double_feed", "boxed", "foreign", "duplicate", "no_burn", F.EMPTY, F.LID_OPEN,
              F.READER_SILENT)


def config(dev, game, seats_mask, button, rules, house_json):
    if dealing(dev.hand) and dev.hand.z.log:
        raise CommandError(wire.WRONG_STATE, "a hand is in progress: end it before config")
    from shoe import house as H  # (the engine's table: play.py says when it loads)
    from shoe.hand import Hand

    seats = [s for s in range(G.SEAT_MIN, G.SEAT_MAX + 1) if seats_mask & (1 << s)]
    try:
        house = json.loads(house_json) if house_json else {}
    except ValueError:
        raise CommandError(wire.BAD_ARGUMENT, "house rules must be a JSON object")
    if not isinstance(house, dict):
        raise CommandError(wire.BAD_ARGUMENT, "house rules must be a JSON object")
    profile = house.pop("_profile", None)  # the house profile's name: kept, not a setting
    if profile is not None and (not isinstance(profile, str) or len(profile) > H.PROFILE_MAX):
        raise CommandError(wire.BAD_ARGUMENT, "the profile's name must be text of at most "
                           "%d characters" % H.PROFILE_MAX)
    if not button:  # stud has none; a flop game's defaults to the highest seat
        button = seats[-1] if seats and G.GAMES.get(game, (G.STUD,))[0] != G.STUD else None
    # a dry run of the hand checks every argument before anything changes
    Hand(game, seats, button, rules, house, _NoRandom(), None,
         C.deck(0 if game != "shortdeck" else 1))
    if H.BETTING in house:  # how the game is bet: shoe.betting loads only for a table that bets
        from shoe import betting

        betting.config(G.GAMES[game][0], house[H.BETTING], H.profile(rules, house))
    config = [game, seats, button, rules, house] + ([profile] if profile else [])
    if len(json.dumps(config)) > CONFIG_MAX:
        raise CommandError(wire.BAD_ARGUMENT, "the configuration is %d bytes as JSON; the "
                           "journal keeps at most %d: fewer house overrides or a shorter "
                           "profile name" % (len(json.dumps(config)), CONFIG_MAX))
    dev.config = config
    dev.audit.add(dev.actor(), "config", "%s, seats %s, %s%s" % (
        game, ",".join(str(s) for s in seats), rules, ", house " + house_json if house_json
        else ""))
    if dealing(dev.hand):
        dev.hand.end()  # a hand with no card dealt yet is simply closed
        dev.collect()
        dev.rec.commit(dev.hand)
    dev.hand = None
    dev.journal.set_config(json.dumps(dev.config))
    return ()


def audit(dev, first, offset):
    cache = dev.exports
    if offset == 0 or cache is None or cache[0] != first:
        cache = dev.exports = (first, dev.audit.export(first))
    doc = cache[1]
    return (len(doc), doc[offset:offset + 180])


def telemetry(dev, offset):
    """Counters and faults, never a card (WAC 230-16-152)."""
    doc = json.dumps({
        "firmware": FIRMWARE_VERSION, "device": dev.hal.device_id, "boots": dev.boots,
        "hands": dev.hand_no, "cards_dealt": dev.counts["cards"],
        "shuffles": dev.counts["shuffles"], "procedures": dev.counts["procedures"],
        "misdeals": dev.counts["misdeals"], "faults": faults_count(dev),
        "failed_logins": dev.sessions.failures, "forged_commands": dev.sessions.forged,
        "provisioned": dev.sessions.provisioned(), "locked": dev.locked,
        "latched": dev.latched,
        "journal_problems": len(dev.journal.problems), "audit_records": dev.audit.n,
    }).encode()
    return (len(doc), doc[offset:offset + 180])


def raw(dev, source, count):
    """Raw output for an outside lab's statistical tests (GLI-29): the entropy source's
    health-tested bytes before the generator, or the generator's output. Between hands only:
    nothing drawn here is ever related to a deck in play."""
    h = dev.hand
    if dealing(h) and h.z.log:
        raise CommandError(wire.WRONG_STATE, "a hand is in progress: end it first")
    if count < 1 or count > 180 or source > 1:
        raise CommandError(wire.BAD_ARGUMENT, "raw: source 0 or 1, count 1..180")
    if source == 0:
        return (bytes(dev.hal.entropy(count)),)
    gen = dev.hal.rng(None)
    if not hasattr(gen, "raw"):
        raise CommandError(wire.DENIED, "raw: this simulator is seeded: its shuffles do not "
                                        "come from the generator")
    return (gen.raw(count),)


def faults_count(dev):
    """Stopping faults by kind since installation, and the simulator's injected faults."""
    out = dict(dev.counts.get("faults") or {})
    fired = dev.mech.fired
    if fired:
        out["simulated"] = fired
    return out


def maintenance(dev):
    """Leave the protocol: once the reply is out, the main loop ends and the REPL has the
    line (facedown deploy / verify). Not between cards: a hand in progress is refused.
    Needs a maintenance session, or the reference shoe's key switch, or a shoe that has
    no key yet (installation: provisioning writes it over the REPL)."""
    h = dev.hand
    if dealing(h) and h.z.log:
        raise CommandError(wire.WRONG_STATE, "a hand is in progress: end it before "
                                             "maintenance")
    dev.maintenance = True
    actor = dev.sessions.actor() if dev.role else (
        "key-switch" if dev.sessions.provisioned() else "installation")
    dev.audit.add(actor, "maintenance", "the REPL takes the line")
    dev.hal.store.write("maint.actor", actor)
    return ()


def resume(dev, number):
    """Retransmit held events from number on (the host's last ACK + 1): everything before
    it is acknowledged."""
    number = min(max(number, 1), dev.event_next)
    if number < dev.oldest():
        _reload(dev, number)  # after a power cut: older events come back from the journal
    if number > 1:
        dev.ack(number - 1)
    dev.resend_from = max(number, dev.oldest())
    return (dev.oldest(), dev.event_next)


def sim_fault(dev, kind, at, card, flags):
    if kind == "jam":
        mixed = []
        if flags & 1:
            mixed.append("muck")
        if flags & 2:
            mixed.append("burns")
        dev._hand().jam(mixed, bool(flags & 4))
        return (0, 0)
    if kind == "pending":
        return (dev.mech.pending(), dev.mech.feeds)
    if kind == "power_cut":  # the power goes while the at-th record from now is written
        dev.journal.cut_at(at)  # (0: disarm)
        return (0, 0)
    if kind in ("journal_fail", "internal") and at < 1:
        raise CommandError(wire.BAD_ARGUMENT, "at must be 1 or more")
    if kind == "journal_fail":  # the at-th record from now fails to write (latches)
        dev.journal.fail_at(at)
        return (0, 0)
    if kind == "internal":  # the at-th dealing command from now fails inside (latches)
        dev.sim_crash = at
        return (0, 0)
    if kind == "invariant":  # a card vanishes from the zones (the next check latches)
        h = dev._hand()
        if not h.z.stub:
            raise CommandError(wire.WRONG_STATE, "invariant: the stub is empty")
        card = h.z.stub.pop(0)  # the bottom card, gone from every zone's list
        h.z.where[card] = 255
        return (0, 0)
    armed = F.JAM if kind == "feed_jam" else kind if kind in _SIM_KINDS else None
    if armed is None:
        raise CommandError(wire.BAD_ARGUMENT, "unknown fault %r" % kind)
    if armed != "no_burn" and at < 1:
        raise CommandError(wire.BAD_ARGUMENT, "at must be 1 or more")
    if armed == F.JAM:  # card: the times the card sticks
        if card < 1:
            raise CommandError(wire.BAD_ARGUMENT, "feed_jam: the card sticks 1..255 times "
                                                  "(255: until cleared)")
    elif armed == "no_burn":  # card: when the table notices it (simmech.NOTICED_*)
        if card > 2:
            raise CommandError(wire.BAD_ARGUMENT, "no_burn: card is 0 or 1 (noticed at once) "
                                                  "or 2 (noticed after the flop was turned)")
    elif card > C.JOKER:
        raise CommandError(wire.BAD_ARGUMENT, "unknown card code %d" % card)
    try:
        dev.mech.arm(armed, at, card)
    except OSError as e:  # the simulator's pin map is missing
        raise CommandError(wire.FAULT, str(e))
    return (0, 0)


def sim_deck(dev, cards, flags, seed):
    order = list(cards) if cards else None  # checked against the game by hand
    dev.sim_order = order
    dev.sim_seed = seed if flags & 1 else None
    return ()


def restore(dev):
    """Boot: the configuration, hand number, event numbers, the open hand (its stub
    reshuffled, RP-4) and the last reply, from the journal; a card caught in flight by the
    power cut is settled from the mechanism's sensors and reader, or left to the operator."""
    j = dev.journal
    for what, hand in j.problems:
        dev.hal.log("journal: %s (hand %s)" % (what, hand))
    try:
        dev.config = json.loads(j.config) if j.config else None
    except ValueError:
        dev.hal.log("journal: the configuration is unreadable")
        dev.config = None
    dev.hand_no = j.hand_no
    dev.event_next = j.event_next
    oh = j.hand if j.hand is not None else j.last
    if oh is None:
        return
    if j.hand is None:  # the last hand is over: its events are held until the host has them,
        # and nothing of it is dealt again, so the engine is not loaded for it (it loads with
        # the next hand: docs/deploy.md, "The memory budget"); the journal keeps its record
        _hold(dev, oh)
        if j.dealt and dev.config is not None and dev.config[2]:  # not configured since: the
            # next hand's button follows this hand's, as when the hand is in the heap (play.py)
            button = json.loads(oh.config)[2]
            dev.config[2] = button if _last_status(oh.entries) == MISDEAL else \
                _next_seat(dev.config[1], button)
        return
    caught = oh.feeding >= 0  # a feed was under way
    settle = dev.mech.inspect() if caught else []  # what the output sensor and reader see
    try:
        rng = dev.hal.rng(None)
    except Exception as e:  # nothing is dealt until a restart finds the source healthy
        dev.entropy = _entropy_why(e)
        if dev.entropy is None:
            raise
        dev.hal.log("random source: %s" % e)
        rng = _NoRandom()
    from recorder import rebuild  # (with a hand only: the device's recorder keeps it loaded)

    try:
        hand = rebuild(oh, rng, dev.mech)
    except (ValueError, KeyError, TypeError, IndexError, ShoeError) as e:
        dev.hal.log("journal: hand %d cannot be rebuilt (%r)" % (oh.number, e))
        return
    dev.hand = hand
    if dev.config is not None and hand.button:  # (the journal's is the configured button)
        dev.config[2] = hand.button
    _hold(dev, oh)
    dev.rec.logged = dev.logged
    dev.rec.image = bytearray(oh.image) if oh.image is not None else None
    if oh.damaged is not None:  # rebuilt from the records that verify: the floor
        dev._latch("journal: a damaged record in block %d at offset %d of hand %d: "
                   "the hand was rebuilt from the records that verify; check the "
                   "table against it" % (oh.damaged[0], oh.damaged[1], oh.number))
    if settle is None:
        dev.recovery = "a card may have left during the power cut: check the output " \
                       "and send recover with the card found there (or none)"
    else:
        found = [c for c in settle if hand.z.where[c & 63] == 0]
        if found:
            hand._proc("card-settled")
        _deliver(dev, found)
    dev.collect()
    dev.rec.commit(hand)


def _hold(dev, oh):
    """The restored hand's events held until the host has them (the counters were saved when
    it began), and the reply to its last command."""
    dev._count(oh.entries, audit=False)
    dev.held = [[oh.first_event, oh.number, bytearray(oh.entries)]]
    dev.logged = len(oh.entries) // 4
    if oh.reply is not None:
        dev.replies = [oh.reply]


def _last_status(entries):
    """The status a hand's entries end with (its last OP_STATUS), None if none."""
    status = None
    for i in range(0, len(entries), 4):
        if entries[i] == OP_STATUS:
            status = entries[i + 1]
    return status


def _reload(dev, number):
    """Hold again the events from `number` on that the journal still has: whole hands,
    read one at a time, going back from the oldest held; at most HELD_HANDS hands in all
    (the heap holds no more: resume answers where it starts)."""
    oldest = dev.oldest()
    n = dev.held[0][1] - 1 if dev.held else dev.hand_no
    older = []
    while n > 0 and oldest > number and len(older) + len(dev.held) < HELD_HANDS:
        h, _ = dev.journal.scan(n)
        if h is None or h["damaged"]:
            break
        first = h["first_event"]
        older.insert(0, [first, n, bytearray(h["entries"][:(oldest - first) * 4])])
        oldest = first
        n -= 1
    dev.held = older + dev.held


def recover(dev, card):
    """The operator's answer after a power cut mid-feed: the card found at the output
    (255: none)."""
    if dev.recovery is None:
        raise CommandError(wire.WRONG_STATE, "nothing to recover")
    if card != 255:
        if card >= C.JOKER or dev.hand is None or dev.hand.z.where[card] != 0:
            raise CommandError(wire.BAD_ARGUMENT, "that card is not one the shoe holds")
        _deliver(dev, [card])
    dev.recovery = None
    return ()


def _deliver(dev, cards):
    from recorder import deliver

    deliver(dev.mech, dev.hand, cards)
