# The shoe as the host sees it: configuration, the current hand, the command handlers, and the
# numbered events (the engine's log entries) kept until the host acknowledges them.
# Every state change is committed to the flash journal before the reply or its events leave the
# device, and before the next card moves.
import json

import wire
from audit import Audit
from journal import Journal, config_json
from recorder import Recorder
from shoe import cards as C
from shoe import games as G
from shoe import house as H
from shoe.errors import ShoeError, E_ARG
from shoe import faults as F
from shoe.compat import release
from shoe.faults import MechanismFault
from shoe.hand import Hand, ACTIONS, DEALING, MISDEAL, FOLDED, DEAD
from shoe.record import record
from session import Sessions, AuthError
from shoe.zones import OP_FAULT
from version import VERSION as FIRMWARE_VERSION  # the one version (firmware/version.py)

HELD_HANDS = 4  # hands whose events may wait for the host's ACK before a new hand is refused


class CommandError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


_CHECK = object()
_OUT = {FOLDED: "folded", DEAD: "dead"}  # status_json's "out": a seat that is not live


class Device:
    def __init__(self, hal, boot=_CHECK):
        """boot: the firmware check's answer (integrity.boot: why the shoe locks, what was
        deployed), when main.py ran it first; by default the device runs it."""
        self.hal = hal
        self.mech = hal.mech
        self.config = None      # [game, seats, button, rules, house overrides]
        self.hand = None
        self.hand_no = 0
        self.event_next = 1     # the number the next event gets
        self.logged = 0         # entries of the current hand's log already numbered
        self.held = []          # [first number, hand number, bytearray of 4-byte entries]
        self.sim_order = None
        self.sim_seed = None
        self.status_cache = None
        self.handlers = {
            "status": self.cmd_status, "deal": self.cmd_deal,
            "street": self.cmd_street, "draw": self.cmd_draw, "action": self.cmd_action,
            "bet": self.cmd_bet, "chips": self.cmd_chips, "stacks": self.cmd_stacks,
            "report": self.cmd_report, "end": self.cmd_end, "hand": self.cmd_hand,
            "ping": self.cmd_ping,
        }
        for name in _RARE:  # in rare.py, imported when one comes
            self.handlers[name] = _Rare(self, name)
        self.replies = []       # [(seq, reply body)], the last REPLY_CACHE
        self.zero = None        # (session, counter, reply) of the last SEQ 0 ACMD: its resend
        self.resend_from = 0    # set by resume: the link retransmits from here
        self.handlers["history"] = self.cmd_history
        self.histories = None   # (journal writes, hands) read for history requests
        self.recovery = None    # set when a card's fate after a power cut needs the operator
        self.maintenance = False  # set by maintenance: the link hands the line to the REPL
        self.handlers["challenge"] = self.cmd_challenge
        self.handlers["login"] = self.cmd_login
        self.handlers["logout"] = self.cmd_logout
        self.role = wire.ROLE_PUBLIC  # the role of the command being run
        self.local_actor = None  # "panel" while the front panel's command runs (local)
        self.shown = None  # the status LED's state, as last shown (indicate)
        # the hardware's LED and panel, bound once: the idle loop calls them all the time, and
        # a method bound at each call is an allocation each time
        self._show = getattr(hal, "show", None)
        self._presses = getattr(hal, "presses", None)
        self.counts = {"cards": 0, "shuffles": 0, "procedures": 0, "misdeals": 0}
        self.exports = None
        store = hal.store
        try:
            self.boots = int(store.read("boots") or "0") + 1
        except ValueError:
            self.boots = 1
        store.write("boots", str(self.boots))
        try:
            self.counts.update(json.loads(store.read("counters") or "{}"))
        except ValueError:
            pass
        self.audit = Audit(store, hal.clock, self.boots)
        self.sessions = Sessions(store, hal.device_id, hal.clock, hal.entropy, self.audit)
        if boot is _CHECK:
            from integrity import boot as check

            boot = check(store)
        # why the firmware check failed, or why the HAL has no flash for the journal (a shoe
        # that a power cut would make forget its cards never deals); only maintenance leaves it
        self.locked = boot[0] or getattr(hal, "journal_fault", None)
        if self.sessions.provisioned():
            if self.locked:
                self.audit.add("device", "locked", self.locked)
                hal.log("locked: " + self.locked)
        self.audit.add("device", "boot", "firmware %s%s" % (
            FIRMWARE_VERSION, "" if self.sessions.provisioned() else ", no key provisioned"))
        if boot[1]:  # a software download: who entered maintenance for it, what, the result
            self.audit.add(store.read("maint.actor") or "unknown", "deploy", boot[1])
        self.fault = None       # the last stopping fault (status shows it) until a feed succeeds
        # a fault that may affect the outcome (latch): kept in the store, so a power cycle
        # does not clear it; only the floor, ending the hand, does
        self.latched = store.read(_LATCH_KEY) or None
        self.sim_crash = 0      # simulator: the n-th dealing command from now fails inside
        self.entropy = None     # the random source failed: latched until the shoe restarts
        flash = hal.flash
        if flash is None:  # (journal_fault: locked) two erased blocks that nothing is dealt on
            from hal.flashdev import RamFlash

            flash = RamFlash(2)
        self.journal = Journal(flash)
        self.rec = Recorder(self.journal)
        self.mech.before = self._before_feed
        _Rare(self, "restore")()  # the power-up (rare.py)

    # ------------------------------------------------------------------ commands

    def run(self, seq, body, ftype=wire.CMD):
        """One CMD (or ACMD) frame's body -> its REPLY body. A retried seq gets the reply it had
        (an ACMD's only to an ACMD of the session); the new state and the reply are committed
        together before the reply leaves."""
        authed = ftype == wire.ACMD
        if authed:
            try:
                counter, body = self.sessions.verify(seq, body)
            except wire.WireError as e:
                return wire.encode_reply_error(e.code, str(e))
            except AuthError as e:
                return wire.encode_reply_error(e.code, e.message)
        if seq == 0:
            if authed and self.zero is not None and \
                    self.zero[:2] == (self.sessions.number, counter):
                return self.zero[2]  # the same SEQ 0 frame again (its reply was lost)
            self.replies = []
        else:
            for entry in self.replies:
                if entry[0] == seq and entry[2] == authed:
                    return entry[1]
        self.role = wire.ROLE_PUBLIC
        try:
            if authed:
                self.sessions.accept(counter)
                self.role = self.sessions.role
            cid, args = wire.decode_command(body)
            reply = wire.encode_reply_ok(wire.COMMAND_REPLY[cid], self.execute(cid, args))
        except wire.WireError as e:
            reply = wire.encode_reply_error(e.code, str(e))
        except (CommandError, AuthError) as e:
            reply = wire.encode_reply_error(e.code, e.message)
        except Exception as e:  # a fault in the shoe itself
            reply = self._internal(body, e)
        self.role = wire.ROLE_PUBLIC
        # read-only commands write nothing (no flash wear for a ping); nor does arming a
        # simulated fault, which changes only the mechanism
        quiet = len(body) and (body[0] in _READ_ONLY or (
            body[0] == _SIM_FAULT and self.hand is not None and not self.rec.dirty(self.hand)))
        if self.hand is not None and not quiet:
            # what the command did, and its reply, reach the flash before the reply leaves
            if not self._commit(reply=(seq, reply, authed) if seq else None):
                reply = wire.encode_reply_error(wire.FAULT, self._latch_text())
        if seq == 0 and authed:
            self.zero = (self.sessions.number, counter, reply)
        if seq:
            self.replies.append((seq, reply, authed))
            if len(self.replies) > wire.REPLY_CACHE:
                self.replies.pop(0)
        return reply

    def _internal(self, body, e):
        """The FAULT reply to an unexpected exception in a handler. A command that may have
        changed the hand latches the shoe (Klipper's shutdown; 25 CFR 547.10: no play while a
        fault that may affect the outcome is present); a read-only one changed nothing."""
        self.hal.log("command failed: %r" % (e,))
        if len(body) and body[0] in _READ_ONLY:
            return wire.encode_reply_error(wire.FAULT, "internal fault: %r" % (e,))
        self._latch("internal fault: %r" % (e,))
        return wire.encode_reply_error(wire.FAULT, self._latch_text())

    def _commit(self, feeding=-1, reply=None):
        """Commit the hand to the journal; a write that fails latches the shoe (False). What
        was not written stays in RAM and is written by the next commit that succeeds."""
        try:
            self.rec.commit(self.hand, feeding, reply)
            return True
        except Exception as e:  # (a PowerCut is a BaseException: the power went, no latch)
            self.hal.log("journal write failed: %r" % (e,))
            self._latch("journal write failed: %r" % (e,))
            return False

    def _latch(self, why):
        """Latch a fault: nothing more is dealt until the floor ends the hand (end or misdeal
        from a maintenance session, or the panel with the floor key turned)."""
        self.hal.log("latched: " + why)
        if self.latched is not None:
            return
        self.latched = why
        h = self.hand
        if h is not None and h.status == DEALING:
            h.note_fault(F.LATCHED_CODE)  # an event: the host and the history see it
        try:
            self.hal.store.write(_LATCH_KEY, why)
            self.audit.add(self.actor(), "fault latched", "hand %d: %s" % (self.hand_no, why))
        except Exception as e:  # the latch holds in RAM; the store is failing too
            self.hal.log("latch not stored: %r" % (e,))

    def _latch_text(self):
        return "fault latched (%s): nothing is dealt until the floor ends the hand (end or " \
               "report misdeal from a maintenance session, or the floor key)" % self.latched

    def _latch_check(self, name, args):
        """What a latched shoe refuses: every dealing command; and ending the hand (end, a
        misdeal) to anyone but the floor."""
        ending = _ends_hand(name, args)
        if name not in _LATCH_REFUSES and not ending:
            return False
        if not ending:
            raise CommandError(wire.FAULT, self._latch_text())
        if self.role < wire.ROLE_MAINTENANCE and self.local_actor != "panel+floor":
            raise CommandError(wire.DENIED, "fault latched (%s): only the floor ends this "
                                            "hand: a maintenance session (facedown login "
                                            "--role maintenance) or the floor key" %
                               self.latched)
        return True

    def _unlatch(self):
        why = self.latched
        self.latched = None
        self.hal.store.write(_LATCH_KEY, "")
        self.audit.add(self.actor(), "fault cleared", "hand %d ended: %s" % (self.hand_no, why))

    def local(self, name, args, actor):
        """One command run by the shoe itself (the front panel, panel.py) as the table's role:
        (0, "") or (the wire status code, the message), as run() would answer; committed the
        same way, without a reply to cache (no host sent it)."""
        self.role = wire.ROLE_TABLE
        self.local_actor = actor
        code, message = wire.OK, ""
        try:
            self.execute(wire.COMMAND_IDS[name], args)
        except (CommandError, AuthError) as e:
            code, message = e.code, e.message
        except Exception as e:  # a fault in the shoe itself: latched as from the wire
            self.hal.log("%s (panel) failed: %r" % (name, e))
            self._latch("internal fault: %r" % (e,))
            code, message = wire.FAULT, self._latch_text()
        finally:
            self.role = wire.ROLE_PUBLIC
            self.local_actor = None
        if self.hand is not None and not self._commit():
            code, message = wire.FAULT, self._latch_text()
        return code, message

    def local_refusal(self, name):
        """Why the shoe would refuse `name` from its panel before running it (no key yet, or
        locked: the table role's checks), as a CommandError; None if it would not."""
        self.role = wire.ROLE_TABLE
        try:
            self._allowed(wire.COMMAND_IDS[name], name)
        except CommandError as e:
            return e
        finally:
            self.role = wire.ROLE_PUBLIC
        return None

    def actor(self):
        """Who is running the command, for the audit log: the session, or the panel."""
        return self.local_actor or self.sessions.actor()

    def indication(self):
        """What the front panel's status LED shows: "locked" (the firmware check failed),
        "attention" (a stopping fault, a failed random source or a card to recover: the
        operator must act), "dealing" (a hand in progress) or "idle"."""
        if self.locked:
            return "locked"
        if self.fault is not None or self.entropy is not None or self.recovery is not None \
                or self.latched is not None:
            return "attention"
        h = self.hand
        if h is not None and h.status == DEALING:
            return "dealing"
        return "idle"

    def indicate(self):
        """Tell the hardware layer when the indication changes (after each command)."""
        show = self._show
        if show is None:
            return
        state = self.indication()
        if state != self.shown:
            self.shown = state
            show(state)

    def poll_panel(self):
        """The front panel's presses since the last poll, run one by one (panel.py). Called by
        the link between commands; True if any press came."""
        self.mech.between()  # the path's idle time: two decks load the next deck (decks_rp2.py)
        presses = self._presses
        if presses is None:
            return False
        pressed = presses()
        if not pressed:
            return False
        import panel

        for button in pressed:
            try:
                panel.press(self, button, self.hal.floor_key())
            except Exception as e:  # a fault in the shoe itself: logged, the shoe goes on
                self.hal.log("panel: %s failed: %r" % (button, e))
        return True

    def _before_feed(self, route):
        """A card is about to move: what happened so far is committed first."""
        if self.hand is not None:
            self.collect()
            if not self._commit(feeding=route):  # no card moves that the flash does not know
                raise CommandError(wire.FAULT, self._latch_text())

    def execute(self, cid, args):
        """Run one decoded command; returns its reply values. Raises CommandError."""
        name = wire.COMMAND_NAMES[cid]
        fn = self.handlers.get(name)
        if fn is None:
            raise CommandError(wire.UNKNOWN_COMMAND, "unknown command %s" % name)
        if self.maintenance and name != "maintenance":
            raise CommandError(wire.WRONG_STATE, "maintenance: the shoe has left the protocol")
        self._allowed(cid, name)
        clears = self.latched is not None and self._latch_check(name, args)
        if clears and name == "end" and (self.hand is None or self.hand.status != DEALING):
            self._unlatch()  # no hand in progress: ending it is the floor's clearing alone
            return ()
        if name in _SIM_COMMANDS:
            self._sim()
        elif name in _DEALING:
            if self.recovery is not None:
                raise CommandError(wire.WRONG_STATE, "recovery: " + self.recovery)
            self._entropy_check(name, args)
            if self.hand is None or self.hand.interrupted is None:
                self.mech.begin_step()  # (a step a fault stopped goes on counting its cards)
        try:
            out = fn(*args)
            if name in _DEALING:
                self._invariants(name)
        except ShoeError as e:
            raise CommandError(wire.BAD_ARGUMENT if e.code == E_ARG else wire.WRONG_STATE,
                               e.message)
        except MechanismFault as e:  # the engine logged it; the card in flight is still out
            raise self._stopped(name, e.kind, e.message)
        except Exception as e:
            self.entropy = _entropy_why(e)
            if self.entropy is None:
                raise  # (run answers it as an internal fault)
            self.hal.log("random source: %s" % e)
            h = self.hand
            if name in _DEALING and h is not None and h.status == DEALING:
                h.note_fault(F.ENTROPY_CODE)
            raise self._stopped(name, F.ENTROPY, _entropy_text(self.entropy))
        finally:
            self.collect()
        if name in _DEALING and self.mech.feeds:
            self.fault = None  # a card came out: the fault was cleared
        if clears:
            self._unlatch()
        return out

    def _invariants(self, name):
        """After a dealing command: every card of the deck in exactly one zone (the engine's
        conservation invariant); a violation latches. The simulator's "internal" fault fails
        the sim_crash-th dealing command here, after its handler ran (a half-done command)."""
        h = self.hand
        if self.sim_crash:
            self.sim_crash -= 1
            if self.sim_crash == 0:
                raise RuntimeError("simulated fault in %s" % name)
        if h is None:
            return
        want = C.deck_size(G.GAMES[h.game][1])
        got = h.z.count()
        if got != want:
            self._latch("engine invariant: %d cards tracked of the deck's %d after %s" % (
                got, want, name))
            raise CommandError(wire.FAULT, self._latch_text())

    def _allowed(self, cid, name):
        """The role check: the command's least role against the session's; a shoe without a
        key (installation) or locked by its firmware check runs no hand."""
        need = wire.COMMAND_ROLE[cid]
        if need == wire.ROLE_PUBLIC:
            return
        if not self.sessions.provisioned():
            if name == "maintenance":
                return  # installation: the REPL is how the key gets there (facedown provision)
            raise CommandError(wire.DENIED, "%s: this shoe has no key; provision it (facedown "
                                            "provision), then log in" % name)
        if self.role < need and not (name == "maintenance" and self._key_switch()):
            raise CommandError(wire.DENIED, "%s needs a %s session: log in (facedown login)" % (
                name, wire.ROLES[need]))
        if self.locked and need == wire.ROLE_TABLE:
            raise CommandError(wire.DENIED, "locked: " + self.locked + "; deploy the firmware "
                                            "again (facedown deploy)")
        if self.locked and name == "config":
            raise CommandError(wire.DENIED, "locked: " + self.locked)

    def _key_switch(self):
        switch = getattr(self.hal, "maintenance_switch", None)
        return switch is not None and switch()

    def cmd_challenge(self, role):
        return self.sessions.cmd_challenge(role)

    def cmd_login(self, nonce, proof, time):
        return self.sessions.cmd_login(nonce, proof, time)

    def cmd_logout(self):
        self.sessions.logout()
        return ()

    def _stopped(self, name, kind, message):
        """A stopping fault ended the command: status shows it until a feed succeeds, the audit
        log records it, and the command answers MECHANISM with the kind and what the operator
        must do."""
        self.fault = {"kind": kind, "code": F.code(kind), "message": message, "command": name}
        self.hal.log("stopped (%s): %s: %s" % (name, kind, message))
        faults = self.counts.setdefault("faults", {})
        faults[kind] = faults.get(kind, 0) + 1
        self.audit.add(self.actor(), "fault", "%s during %s (hand %d)" % (
            kind, name, self.hand_no))
        return CommandError(wire.MECHANISM, "%s: %s" % (kind, message))

    def _entropy_check(self, name, args):
        """After the random source failed, nothing is dealt: it may have failed in the middle
        of a reshuffle. The hand can be ended (or declared a misdeal) and the shoe restarted; a
        hand whose log holds an entropy fault stays stopped after the restart too."""
        if _ends_hand(name, args):
            return
        why = self.entropy
        if why is None and self.hand is not None and self.hand.status == DEALING and \
                _logged(self.hand.z.log, OP_FAULT, F.ENTROPY_CODE):
            why = "the random source failed during this hand"
        if why is not None:
            raise _entropy_error(why)

    def cmd_identify(self, offset):
        return None  # the link answers identify itself (its reply is preformatted)

    def cmd_ping(self, token):
        return (token,)

    def profile(self):
        """The name of the house profile the table was configured from, or None."""
        return self.config[5] if self.config is not None and len(self.config) > 5 else None

    def cmd_hand(self, button, ending=False):
        """Start the next hand: shuffle (or the simulator's stacked deck), set the button.
        ending (the panel's DEAL, never from the wire): the hand in progress ends, once the
        new one is made (a hand refused leaves it as it was)."""
        if self.config is None:
            raise CommandError(wire.WRONG_STATE, "not configured: send config first")
        h = self.hand
        if h is not None and h.status == DEALING and h.z.log and not ending:
            raise CommandError(wire.WRONG_STATE, "the hand is in progress: end it first")
        if len(self.held) >= HELD_HANDS:
            raise CommandError(wire.BUSY, "events of %d hands await the host's ACK" % HELD_HANDS)
        game, seats, old, rules, house = self.config[:5]
        kind = G.GAMES[game][0]
        if button:
            if not (G.SEAT_MIN <= button <= G.SEAT_MAX):
                raise CommandError(wire.BAD_ARGUMENT, "button must be a seat 1..10")
        elif kind == G.STUD:
            button = None
        elif old:
            # the configured button for the first hand; an exact re-deal keeps it after a
            # misdeal (TDA 35-C); otherwise it moves to the next occupied seat
            button = old if h is None or h.status == MISDEAL else _next_seat(seats, old)
        else:
            button = seats[-1]
        if self.entropy is not None:
            raise _entropy_error(self.entropy)
        try:
            rng = self.hal.rng(self.sim_seed)
        except Exception as e:
            if _entropy_why(e) is not None:
                raise  # a failing entropy source stops dealing, never degrades (execute says so)
            raise CommandError(wire.FAULT, "the random source failed: %s" % (e,))
        order = self.sim_order if self.sim_order is not None else self.hal.deck
        if order is None:  # two decks: the next one lies shuffled already (SHUFFLER.md)
            order = self.mech.next_deck()
        hand = Hand(game, seats, button, rules, house, rng, self.mech, order)
        if H.BETTING in house:  # the table is bet: the engine loads now (docs/betting.md)
            from shoe.bets import Bets

            hand.bets = Bets(hand, house[H.BETTING])
        self.mech.gather(C.deck(hand.deck_kind), rng)  # the other deck loads while this is dealt
        # (a stacked deck the game refuses leaves all as it was) every card is gathered for the
        # shuffle: none waits outside, nothing to recover
        self.mech.delivered = []
        self.recovery = None
        self.sim_order = None
        self.sim_seed = None
        self.config[2] = hand.button
        if self.hand is not None and self.hand.status == DEALING:
            self.hand.end()
            self.collect()
            self.rec.commit(self.hand)
        self.hand = hand
        self.hand_no = self.hand_no % 0xFFFF + 1
        self.hal.store.write("counters", json.dumps(self.counts))  # once a hand: little wear
        self.logged = 0
        self.rec.begin(hand, self.hand_no, config_json(game, seats, hand.button, rules, house,
                                                       self.profile()))
        return ()

    def _hand(self):
        if self.hand is None:
            raise CommandError(wire.WRONG_STATE, "no hand: send hand to start one")
        return self.hand

    def cmd_deal(self, count):
        self._hand().deal(count or None)
        return ()

    def cmd_street(self):
        self._hand().street()
        return ()

    def cmd_draw(self, data):
        discards = {}
        for seat, codes in wire.unpack_discards(data):
            if seat in discards:
                raise CommandError(wire.BAD_ARGUMENT, "seat %d listed twice" % seat)
            for c in codes:
                if c >= C.NCODES:  # (a byte from the wire: the engine indexes by card code)
                    raise CommandError(wire.BAD_ARGUMENT, "unknown card code %d" % c)
            discards[seat] = codes
        self._hand().draw(discards)
        return ()

    def cmd_action(self, seat, kind):
        if kind >= len(ACTIONS):
            raise CommandError(wire.BAD_ARGUMENT, "unknown action kind %d" % kind)
        self._hand().action(seat, ACTIONS[kind])
        return ()

    def cmd_bet(self, seat, kind, amount):
        """An action with its amount (the table's betting checks it)."""
        h = self._hand()
        if h.bets is None:
            raise CommandError(wire.WRONG_STATE, "this table is not bet: configure its betting "
                               "(config's betting) or report actions without amounts")
        if kind & 0x7F >= len(ACTIONS):
            raise CommandError(wire.BAD_ARGUMENT, "unknown action kind %d" % kind)
        h.action(seat, ACTIONS[kind & 0x7F], None if amount == wire.NO_AMOUNT else amount,
                 bool(kind & 0x80))
        return ()

    def cmd_chips(self, seat, kind, amount, put, smallest, flags):
        """An action with the chips the seat put out (shoe.chips makes the action of them)."""
        if self._hand().bets is None:
            return self.cmd_bet(seat, kind, amount)  # (the same refusal)
        if kind & 0x7F >= len(ACTIONS):
            raise CommandError(wire.BAD_ARGUMENT, "unknown action kind %d" % kind)
        self.hand.action(seat, ACTIONS[kind & 0x7F], None if amount == wire.NO_AMOUNT else
                         amount, bool(kind & 0x80), (put, smallest, flags))
        return ()

    def cmd_stacks(self, data):
        """Every seat's stack at the start of this hand (before its first card)."""
        h = self._hand()
        if h.bets is None:
            return self.cmd_bet(0, 0, 0)  # (the same refusal: this table is not bet)
        try:
            stacks = wire.unpack_stacks(data)
        except wire.WireError as e:
            raise CommandError(wire.BAD_ARGUMENT, str(e))
        h.bets.set_stacks(stacks)
        return ()

    def cmd_report(self, what, seat, index):
        h = self._hand()
        if what == 1:
            h.expose(seat, index)
        elif what == 2:
            h.premature()
        elif what == 3:
            h.misdeal()
        else:
            raise CommandError(wire.BAD_ARGUMENT, "report: what is 1 exposed, 2 premature, "
                                                  "3 misdeal, not %d" % what)
        return ()

    def cmd_end(self):
        self._hand().end()
        return ()

    def cmd_status(self, offset):
        """The table (as the hand record without its log) in chunks; offset 0 takes a new one."""
        see = self.role >= wire.ROLE_TABLE
        if offset == 0 or self.status_cache is None or self.status_cache[0] != see:
            self.status_cache = (see, self.status_json(see))
        doc = self.status_cache[1]
        return (self.hand_no, self.event_next, doc[offset:offset + 160])

    def status_json(self, see=True):
        """The table as JSON; without see (no table session) the down cards are "??"."""
        out = {"hand": self.hand_no, "configured": self.config is not None,
               "events": self.event_next, "fault": self.fault, "latched": self.latched,
               "recovered": self.mech.recovered, "locked": self.locked,
               "session": wire.ROLES[self.role]}
        nd = self.mech.next_status()  # two decks: the next one's state, never its order
        if nd is not None:
            out["next_deck"] = nd
        if self.config is not None:
            out["config"] = {"game": self.config[0], "seats": self.config[1],
                             "button": self.config[2], "rules": self.config[3],
                             "house": self.config[4], "profile": self.profile()}
        if self.hand is not None:
            import gc

            gc.collect()
            rec = record(self.hand, log=False)
            del rec["log"]
            # why a seat holds nothing, without the log: folded, or its cards mucked (dead)
            rec["out"] = {str(s): _OUT[self.hand.state[s]] for s in self.hand.seats
                          if self.hand.state[s] in _OUT}
            if not see:
                _mask_record(rec)
            if self.hand.bets is not None:
                rec["betting"] = self.hand.bets.view()
            out["table"] = rec
        return json.dumps(out).encode()

    def _sim(self):
        if not self.hal.simulated:
            raise CommandError(wire.DENIED, "simulator commands are not available on a shoe")

    # ------------------------------------------------------------------ events

    def collect(self):
        """Number the hand's new log entries as events and keep them until ACKed."""
        h = self.hand
        if h is None:
            return
        log = h.z.log
        n = len(log) // 4
        if n <= self.logged:
            return
        new = log[self.logged * 4:]
        self._count(new)
        last = self.held[-1] if self.held else None
        if last is not None and last[1] == self.hand_no:
            last[2].extend(new)
        else:
            self.held.append([self.event_next, self.hand_no, bytearray(new)])
        self.event_next += n - self.logged
        self.logged = n

    def _count(self, entries, audit=True):
        """Telemetry counters (no card data) and audit records from new log entries."""
        c = self.counts
        for i in range(0, len(entries), 4):
            op = entries[i]
            if op == _OP_MOVE and entries[i + 2] == 0:
                c["cards"] += 1
            elif op == _OP_SHUFFLE:
                c["shuffles"] += 1
            elif op == _OP_PROC:
                c["procedures"] += 1
            elif op == _OP_STATUS and entries[i + 1] == MISDEAL:
                c["misdeals"] += 1
                if audit:
                    self.audit.add(self.actor(), "misdeal", "hand %d: %s" % (
                        self.hand_no, self.hand.reason or ""))

    def collect_now(self):
        """Mid-operation: number the new log entries and commit them, so they can be sent now.
        True if there were any."""
        before = self.event_next
        self.collect()
        if self.event_next != before:
            self.rec.commit(self.hand)
            return True
        return False

    def ack(self, number):
        """The host holds every event up to number: forget them. (Not saved: after a power cut
        the host is sent a few events again and drops them by number.)"""
        while self.held:
            first, hand, entries = self.held[0]
            count = len(entries) // 4
            if number >= first + count - 1:
                self.held.pop(0)
            elif number >= first:
                drop = number - first + 1
                self.held[0] = [number + 1, hand, entries[drop * 4:]]
                break
            else:
                break

    def events_from(self, number, limit):
        """(first, hand, entries bytes) of up to `limit` held events from number on, or None."""
        for first, hand, entries in self.held:
            count = len(entries) // 4
            if number < first:
                number = first
            if number < first + count:
                i = (number - first) * 4
                out = entries[i:i + limit * 4]
                if self.sessions.role < wire.ROLE_TABLE:
                    out = _mask_events(out)
                return number, hand, out
        return None

    def oldest(self):
        return self.held[0][0] if self.held else self.event_next

    # ------------------------------------------------------------------ power-up

    def cmd_history(self, number, offset):
        """A stored hand (or, for hand 0, the list of stored hands), read back from the journal
        one hand at a time and served in chunks."""
        cache = self.histories
        if cache is None or cache[0] != self.journal.writes or cache[1] != number:
            self.histories = cache = None  # (the heap holds one document at a time)
            if number == 0:
                numbers, problems = self.journal.scan(0)
                doc = _HandList(len(problems) + len(self.journal.problems), numbers)
            else:
                h, _ = self.journal.scan(number)
                if h is None:
                    raise CommandError(wire.BAD_ARGUMENT, "hand %d is not in the journal" %
                                       number)
                doc = _history_doc(h)
            cache = self.histories = (self.journal.writes, number, doc)
        doc = cache[2]
        if isinstance(doc, _HandList):
            return (len(doc), doc.chunk(offset, 180))
        return (len(doc), bytes(doc[offset:offset + 180]))


def _mask_record(rec):
    """What anyone at the table sees: face-up and board cards; the others as "??"."""
    for held in rec["seats"].values():
        for c in held:
            if not c["up"]:
                c["card"] = "??"
    for name in ("burns", "muck", "aside"):
        rec[name] = ["??"] * len(rec[name])


def _mask_events(entries):
    """Event entries as anyone may see them: a card that goes face down anywhere but the board
    travels as HIDDEN (the table session gets it)."""
    out = bytearray(entries)
    for i in range(0, len(out), 4):
        if out[i] == _OP_MOVE and not out[i + 3] & 0x80 and out[i + 3] != _BOARD:
            out[i + 1] = wire.HIDDEN
    return out

class _HandList:
    """history 0's document (the damaged areas, u16, then the stored hands' numbers, u16 each)
    served from the journal's runs of numbers, with no copy: a full journal of short hands holds
    1,500 of them, and after a power cut the unix port's heap had no 3 KB block for the copy."""

    def __init__(self, bad, numbers):
        self.bad = bad
        self.numbers = numbers

    def __len__(self):
        return 2 + 2 * len(self.numbers)

    def chunk(self, offset, n):
        out = bytearray()
        for i in range(offset, min(offset + n, len(self))):
            v = self.bad if i < 2 else self.numbers[(i - 2) >> 1]
            out.append((v >> 8) & 0xFF if i & 1 else v & 0xFF)
        return bytes(out)


def _history_doc(h):
    head = h["head"]
    flags = (1 if h["hash"] is not None else 0) | (2 if h["damaged"] else 0)
    first = h["first_event"]
    doc = bytearray((h["hand"] & 0xFF, h["hand"] >> 8, first & 0xFF, (first >> 8) & 0xFF,
                     (first >> 16) & 0xFF, first >> 24, flags))
    doc += h.get("prev") or bytes(32)
    doc += h["hash"] or bytes(32)
    doc.append(len(head))
    doc += head
    doc += h["entries"]
    return doc


_OP_MOVE = 1
_BOARD = 1
_OP_SHUFFLE = 2
_OP_PROC = 4
_OP_STATUS = 8
_SIM_COMMANDS = ("sim_fault", "sim_deck")
# the commands whose handlers are in rare.py (a function of the same name, taking the device)
_RARE = ("config", "audit", "telemetry", "raw", "maintenance", "resume", "recover") + _SIM_COMMANDS
_READ_ONLY = (wire.COMMAND_IDS["ping"], wire.COMMAND_IDS["status"],
              wire.COMMAND_IDS["identify"], wire.COMMAND_IDS["sim_deck"],
              wire.COMMAND_IDS["history"], wire.COMMAND_IDS["maintenance"],
              wire.COMMAND_IDS["challenge"], wire.COMMAND_IDS["login"],
              wire.COMMAND_IDS["logout"], wire.COMMAND_IDS["audit"],
              wire.COMMAND_IDS["telemetry"], wire.COMMAND_IDS["raw"])
_SIM_FAULT = wire.COMMAND_IDS["sim_fault"]
_DEALING = ("deal", "street", "draw", "action", "bet", "chips", "stacks", "report", "end")
# what a latched shoe refuses (and report, but for a misdeal); end and misdeal clear the latch
_LATCH_REFUSES = ("hand", "deal", "street", "draw", "action", "bet", "chips", "stacks",
                  "report", "config")
_LATCH_KEY = "latched"


class _Rare:
    """A handler in rare.py: the module is imported for the call and let go after it (a
    Pico holds a module's bytecode in its heap), so a hand never pays for it."""

    def __init__(self, dev, name):
        self.dev = dev
        self.name = name

    def __call__(self, *args):
        import rare

        try:
            return getattr(rare, self.name)(self.dev, *args)
        finally:
            release("rare")


class _NoRandom:
    def below(self, n):
        return 0


def _entropy_why(e):
    """What failed, if e is the random source's health-test failure (shoe.health.EntropyFault),
    else None. Imported when an exception comes: a shoe that does not test its own entropy (a
    seeded simulator) keeps the health tests' module out of its heap."""
    from shoe.health import EntropyFault

    if isinstance(e, EntropyFault):
        return "the random source failed its %s test" % e.test
    return None


def _entropy_text(why):
    return "%s: %s" % (why, F.advice(F.ENTROPY_CODE))


def _entropy_error(why):
    """The MECHANISM reply to dealing while the random source is failed."""
    return CommandError(wire.MECHANISM, "%s: %s" % (F.ENTROPY, _entropy_text(why)))


def _ends_hand(name, args):
    """end, or report misdeal: what a stopped or latched shoe still lets the table do."""
    return name == "end" or (name == "report" and args[0] == 3)


def _logged(log, op, a):
    """Does the compact log hold an entry (op, a, ...)?"""
    for i in range(0, len(log), 4):
        if log[i] == op and log[i + 1] == a:
            return True
    return False


def _next_seat(seats, button):
    for s in seats:
        if s > button:
            return s
    return seats[0]


def house_settings():
    return [row[0] for row in H.SETTINGS]
