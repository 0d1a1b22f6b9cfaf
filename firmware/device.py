# The shoe as the host sees it: the dispatch of each command by its row of the protocol's command
# table (wire.COMMANDS: the role it needs, what its flags say), the reply cache, the checks (a
# session's role, a latched fault, a stopping fault), the commit of each command to the flash
# journal before its reply or its events leave the device, and before the next card moves.
# By job: this file dispatches; events.py numbers and keeps the events until acknowledged;
# play.py holds the hand's commands; rare.py the rest (maintenance, configuration, the
# simulator's, the power-up) and history.py the history command, imported when one comes and
# let go after.
import json

import wire
from audit import Audit
from events import Events
from journal import Journal
from play import Play, CommandError, HELD_HANDS, _ends_hand, _entropy_error, _entropy_text, \
    _entropy_why, _logged, dealing  # noqa: F401  (CommandError, HELD_HANDS: the device's names too)
from shoe import cards as C
from shoe import games as G
from shoe.errors import ShoeError, E_ARG
from shoe import faults as F
from shoe.compat import release
from shoe.faults import MechanismFault
from session import Sessions, AuthError
from shoe.zones import OP_FAULT
from version import VERSION as FIRMWARE_VERSION  # the one version (firmware/version.py)

_CHECK = object()
_LATCH_KEY = "latched"


class Device(Events, Play):
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
        self.replies = []       # [(seq, reply body)], the last REPLY_CACHE
        self.zero = None        # (session, counter, reply) of the last SEQ 0 ACMD: its resend
        self.resend_from = 0    # set by resume: the link retransmits from here
        self.histories = None   # (journal writes, hands) read for history requests
        self.recovery = None    # set when a card's fate after a power cut needs the operator
        self.maintenance = False  # set by maintenance: the link hands the line to the REPL
        self.role = wire.ROLE_PUBLIC  # the role of the command being run
        self.local_actor = None  # "panel" while the front panel's command runs (local)
        self.shown = None  # the status LED's state, as last shown (indicate)
        # the hardware's LED and panel, bound once: the idle loop calls them all the time, and
        # a method bound at each call is an allocation each time
        self._show = hal.show
        self._presses = hal.presses
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
        self.locked = boot[0] or hal.journal_fault
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
        self._rec = None        # the recorder, made with the first hand (rec)
        self.mech.before = self._before_feed
        _on_demand(self, "restore")  # the power-up (rare.py)

    @property
    def rec(self):
        """The recorder between the hand and the journal, made (recorder.py imported) the
        first time a hand needs it: a new hand, the power-up's restore of one, a commit; a
        shoe that has dealt nothing since power-up does not hold it."""
        if self._rec is None:
            from recorder import Recorder

            self._rec = Recorder(self.journal)
        return self._rec

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
            reply = wire.encode_reply_ok(wire.COMMANDS[cid - 1][wire.C_REPLY],
                                         self.execute(cid, args))
        except wire.WireError as e:
            reply = wire.encode_reply_error(e.code, str(e))
        except (CommandError, AuthError) as e:
            reply = wire.encode_reply_error(e.code, e.message)
        except Exception as e:  # a fault in the shoe itself
            reply = self._internal(body, e)
        self.role = wire.ROLE_PUBLIC
        # read-only commands write nothing (no flash wear for a ping); nor does arming a
        # simulated fault, which changes only the mechanism
        flags = _flags(body)
        quiet = flags & wire.READ_ONLY or (
            flags & wire.SIM_ONLY and self.hand is not None and not self.rec.dirty(self.hand))
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
        if _flags(body) & wire.READ_ONLY:
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
        if dealing(h):
            h.note_fault(F.LATCHED_CODE)  # an event: the host and the history see it
        try:
            self.hal.store.write(_LATCH_KEY, why)
            self.audit.add(self.actor(), "fault latched", "hand %d: %s" % (self.hand_no, why))
        except Exception as e:  # the latch holds in RAM; the store is failing too
            self.hal.log("latch not stored: %r" % (e,))

    def _latch_text(self):
        return "fault latched (%s): nothing is dealt until the floor ends the hand (end or " \
               "report misdeal from a maintenance session, or the floor key)" % self.latched

    def _latch_check(self, name, flags, args):
        """What a latched shoe refuses: every dealing command; and ending the hand (end, a
        misdeal) to anyone but the floor."""
        ending = _ends_hand(name, args)
        if not flags & wire.PLAY:
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
            self.execute(wire.command_id(name), args)
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
            self._allowed(wire.command(wire.command_id(name)))
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
        if dealing(self.hand):
            return "dealing"
        return "idle"

    def indicate(self):
        """Tell the hardware layer when the indication changes (after each command)."""
        show = self._show
        state = self.indication()
        if state != self.shown:
            self.shown = state
            show(state)

    def poll_panel(self):
        """The front panel's presses since the last poll, run one by one (panel.py). Called by
        the link between commands; True if any press came."""
        self.mech.between()  # the path's idle time: two decks load the next deck (decks_rp2.py)
        pressed = self._presses()
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
        row = wire.command(cid)
        if row is None:
            raise CommandError(wire.UNKNOWN_COMMAND, "unknown command %d" % cid)
        name = row[wire.C_NAME]
        flags = row[wire.C_FLAGS]
        # the handler: the device's cmd_<name> (here, play.py), else rare.py's <name>
        fn = getattr(self, "cmd_" + name, None)
        if self.maintenance and name != "maintenance":
            raise CommandError(wire.WRONG_STATE, "maintenance: the shoe has left the protocol")
        self._allowed(row)
        clears = self.latched is not None and self._latch_check(name, flags, args)
        if clears and name == "end" and not dealing(self.hand):
            self._unlatch()  # no hand in progress: ending it is the floor's clearing alone
            return ()
        deals = flags & wire.DEALS
        if flags & wire.SIM_ONLY:
            self._sim()
        elif deals:
            if self.recovery is not None:
                raise CommandError(wire.WRONG_STATE, "recovery: " + self.recovery)
            self._entropy_check(name, args)
            if self.hand is None or not self.hand.can_resume():
                self.mech.begin_step()  # (a step a fault stopped goes on counting its cards)
        try:
            out = fn(*args) if fn is not None else _on_demand(self, name, args)
            if deals:
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
            if deals and dealing(h):
                h.note_fault(F.ENTROPY_CODE)
            raise self._stopped(name, F.ENTROPY, _entropy_text(self.entropy))
        finally:
            self.collect()
        if deals and self.mech.feeds:
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

    def _allowed(self, row):
        """The role check: the command's least role (its row of wire.COMMANDS) against the
        session's; a shoe without a key (installation) or locked by its firmware check runs no
        hand."""
        name = row[wire.C_NAME]
        need = row[wire.C_ROLE]
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
        return self.hal.maintenance_switch()

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
        if why is None and dealing(self.hand) and \
                _logged(self.hand.z.log, OP_FAULT, F.ENTROPY_CODE):
            why = "the random source failed during this hand"
        if why is not None:
            raise _entropy_error(why)

    def cmd_identify(self, offset):
        return None  # the link answers identify itself (its reply is preformatted)


def _on_demand(dev, name, args=()):
    """A handler not resident: a function in a module of its own (_ON_DEMAND), else rare.py's
    function of that name. The module is imported for the call and let go after it (a Pico holds a
    module's bytecode in its heap), so a hand never pays for it."""
    module, kept = "rare", None
    for row in _ON_DEMAND:
        if row[0] == name:
            module, kept = row[1], row[2]
    import gc

    gc.collect()  # the module goes into the heap's low holes
    if kept is not None:  # what the command keeps loads first, beside the rest of the live
        __import__(kept)  # heap: not above the module, whose room would become a hole below
        # it (a Pico's largest block held at 40 KB after config)
    mod = __import__(module)
    try:
        fn = getattr(mod, name, None)
        if fn is None:
            raise CommandError(wire.UNKNOWN_COMMAND, "%s: no handler on this shoe" % name)
        return fn(dev, *args)
    finally:
        release(module)


# (command, its module, a module it keeps loaded) where not (command, "rare", None): history
# (history.py), challenge and login (login.py); config's dry run of a hand keeps the engine's table
_ON_DEMAND = (("history", "history", None), ("challenge", "login", None),
              ("login", "login", None), ("config", "rare", "shoe.hand"))


def _flags(body):
    """The flags of the command a CMD body carries (0 for none or an unknown id)."""
    row = wire.command(body[0]) if len(body) else None
    return row[wire.C_FLAGS] if row is not None else 0
