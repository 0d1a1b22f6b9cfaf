"""The host end of the protocol, over pyserial: commands with sequence numbers (retried until
answered, carried out once), and the shoe's event stream (acknowledged, de-duplicated, resumed
after a reconnect or a power cycle with no gap). The same code path for a real shoe on USB and
for a virtual shoe on a pseudo-terminal."""

import json
import os
import re
import sys
import time

import serial

from .engine import catalogue, wire
from .errors import UserError

W = wire()
PUBLIC_HANDSHAKE = ("identify", "challenge", "login")  # never sent as ACMD


CLI_NAME = {"bet": "action", "chips": "action"}  # the protocol's command a user gives with another name


class ShoeError(UserError):
    """The shoe answered a command with an error."""

    def __init__(self, code, message, command, port=None):
        command = CLI_NAME.get(command, command)
        if code == W.MECHANISM:  # one line: what stopped, what to do, and then
            UserError.__init__(self, "%s stopped by a mechanism fault (%s): %s; once it is "
                                     "cleared, send %s again" % (command, W.error_name(code),
                                                                 message, command))
            self.exit_code = 3
        else:
            UserError.__init__(self, "%s: %s (%s)" % (command, message, W.error_name(code)),
                               hint=self.hint_for(code, message, command, port))
        self.code = code
        self.message = message
        self.command = command
        self.port = port

    @staticmethod
    def hint_for(code, message, command, port):
        """What to do next, with the real port and command (no placeholders)."""
        on = "facedown --port %s " % port if port else "facedown "
        text = message if isinstance(message, str) else ""
        if code == W.WRONG_STATE:
            return "`%sstatus` shows where the hand is" % on
        if code == W.BAD_ARGUMENT:
            return "see `facedown %s --help`" % command
        if code == W.DENIED:
            if command.startswith("sim_"):
                return "%s works on a virtual shoe only, in a maintenance session" % command
            if " needs a " not in text:
                return None
            role = "maintenance" if "needs a maintenance" in text else "table"
            return "open a %s session first: %slogin --role %s" % (role, on, role)
        if code == W.SESSION:
            return "log in again: %slogin" % on
        if text.startswith("fault latched"):  # SPEC.md 6.6: only the floor clears it
            return "call the floor: `%slogin --role maintenance`, then `%send` (or `%sreport " \
                   "misdeal`) ends the hand and clears the fault" % (on, on, on)
        return None

    @property
    def fault(self):
        """The stopping fault's kind (MECHANISM replies), else None."""
        return self.message.split(":", 1)[0] if self.code == W.MECHANISM else None


class LinkDown(UserError):
    pass


class Client:
    ACK_FRAMES = 4    # an ACK at least every this many event frames
    ACK_QUIET = 0.03  # or once the line has been quiet this long (seconds)
    ACK_DELAY = 0.02  # or when the oldest event frame not ACKed has waited this long
    # from the command table's flags (wire.COMMANDS): replies that never wait on the mechanism
    # (RTT samples), and commands that may move cards first (waited for longer)
    TIMED = W.commands_with(W.TIMED)
    MOVES = W.commands_with(W.MOVES)
    MOVE_WAIT = 0.3   # seconds before a command that moves cards is sent again
    def __init__(self, port, on_event=None, timeout=10.0, baud=W.BAUD):
        self.path = port
        self.baud = baud
        self.timeout = timeout           # give up on a command after this long
        self.on_event = on_event         # on_event(number, hand, entry)
        self.ser = None
        self.lock = None                 # portlock.Lock while the port is open
        self.waiting = None              # seq of the command awaiting its reply
        self.dec = W.Decoder()
        # A random first SEQ (as TCP's initial sequence number): a reply still on the line
        # for an earlier process's command (a retransmitted frame the shoe answered after that
        # process had gone) does not match this client's commands.
        self.seq = int.from_bytes(os.urandom(2), "little") % 0xFFFF
        self.rto = W.Rto()
        self.replies = {}
        self.last_event = 0              # highest event number received with no gap
        self.ack_due = False
        self.unacked = 0
        self.t_unacked = 0.0
        self.on_silence = None
        self.nak = False
        self.gap = False
        self.t_rx = 0.0
        self.info = None
        self.session = None              # keys.Session: commands go as ACMD frames
        self.credentials = None          # (keys.Key, role): log in again when a session ends
        self.on_session = None           # called after each ACMD (e.g. to save its counter)
        self.stats = {"frames_sent": 0, "frames_received": 0, "retries": 0, "events": 0,
                      "duplicate_events": 0, "bad_frames": 0, "fast_retries": 0, "gaps": 0, "bytes_sent": 0,
                      "bytes_received": 0, "reconnects": 0}

    # ------------------------------------------------------------------ line

    def open(self):
        from . import portlock

        if self.lock is None:  # one process per port ("PORT is in use by pid N")
            self.lock = portlock.hold(self.path)
        try:
            self.ser = serial.Serial(self.path, self.baud, timeout=0, write_timeout=2)
            self.ser.reset_input_buffer()  # what an earlier host left unread is not for us
        except (serial.SerialException, OSError) as e:
            raise LinkDown("cannot open %s: %s" % (self.path, e),
                           hint="check the port (facedown sim prints a virtual shoe's port)")
        return self

    def _close_port(self):
        if self.ser is not None:
            self.ser.close()
            self.ser = None

    def close(self):
        self._close_port()
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()

    def _reopen(self):
        self.stats["reconnects"] += 1
        self._close_port()  # (the port stays this process's meanwhile)
        time.sleep(0.05)
        try:
            self.open()
        except LinkDown:
            pass

    def _write(self, ftype, seq, body):
        data = W.encode(ftype, seq, body)
        if self.ser is None:  # the port went away (a shoe unplugged or powered off): again
            self._reopen()
            if self.ser is None:
                return  # nothing sent: the command's deadline says "does not answer"
        try:
            self.ser.write(data)
        except (serial.SerialException, OSError):
            self._reopen()
            return
        self.stats["frames_sent"] += 1
        self.stats["bytes_sent"] += len(data)

    def pump(self, wait=0.0):
        """Read what arrived (waiting up to `wait` seconds for something), handle the frames,
        acknowledge events. Returns the number of frames handled."""
        end = time.monotonic() + wait
        handled = 0
        while True:
            try:
                data = self.ser.read(4096) if self.ser is not None else b""
            except (serial.SerialException, OSError):
                self._reopen()
                data = b""
            now = time.monotonic()
            bad = self.dec.frames_bad
            if data:
                self.t_rx = now
                self.stats["bytes_received"] += len(data)
                frames = self.dec.feed(data)
            elif self.dec.pending() and now - self.t_rx > W.IDLE_TIMEOUT_MS / 1000.0:
                frames = self.dec.expire()  # the line went quiet inside a frame
            else:
                frames = ()
            for frame in frames:
                self._frame(*frame)
                handled += 1
            if self.dec.frames_bad != bad or self.gap:
                # something arrived damaged, or events skipped a number: the shoe sends its
                # held events again, and our command (if its reply was lost) goes again
                self.nak = self.dec.frames_bad != bad
                self.gap = False
                self._write(W.NAK, 0, bytes((self.dec.last_error,)))
            if self.ack_due and (self.unacked >= self.ACK_FRAMES or
                                 now - self.t_unacked >= self.ACK_DELAY or
                                 (not data and now - self.t_rx >= self.ACK_QUIET)):
                # one ACK covers several event frames: every ACK_FRAMES frames, or once the
                # line has been quiet for a moment
                self.ack_due = False
                self.unacked = 0
                self._write(W.ACK, 0, W.encode_ack(self.last_event))
            if handled or time.monotonic() >= end:
                self.stats["bad_frames"] = self.dec.frames_bad
                return handled
            time.sleep(0.0005)

    def _frame(self, ftype, seq, body):
        self.stats["frames_received"] += 1
        if ftype == W.NAK:
            self.nak = True
        elif ftype == W.REPLY:
            # one command at a time: a reply for any other seq is stale (a duplicate of an
            # earlier retry, or one left in the line by the previous host on this port) and
            # would be taken for a later command of the same number
            if seq == self.waiting:
                self.replies[seq] = body
            else:
                self.stats["stale_replies"] = self.stats.get("stale_replies", 0) + 1
        elif ftype == W.EVENT:
            try:
                first, hand, entries = W.decode_events(body)
            except W.WireError:
                return
            for i, entry in enumerate(entries):
                number = first + i
                if self.credentials is not None and number > self.last_event and \
                        _hidden_move(entry):
                    # sent while the shoe had no session for us (it restarted): not the stream
                    # this client logs in for; not acknowledged, taken again, whole, once it
                    # has logged in (resume)
                    self.stats["hidden_dropped"] = self.stats.get("hidden_dropped", 0) + 1
                    break
                if number <= self.last_event:
                    self.stats["duplicate_events"] += 1
                elif number == self.last_event + 1:
                    self.last_event = number
                    self.stats["events"] += 1
                    if self.on_event is not None:
                        self.on_event(number, hand, entry)
                else:
                    self.gap = True  # a gap: ask the shoe to go back to our last ACK
            if not self.ack_due:
                self.t_unacked = time.monotonic()
            self.ack_due = True
            self.unacked += 1

    # ------------------------------------------------------------------ commands

    def attach(self, backlog=False):
        """Start a session: seq 0 clears the shoe's reply cache (this host's numbering starts
        again), then the event stream is taken up: from the oldest event the shoe still holds
        (backlog) or from now on (the older ones are acknowledged)."""
        self.call("ping", 0, seq=0)
        first, nxt = self.call("resume", 0xFFFFFFFF if not backlog else 1)
        self.last_event = (first if backlog else nxt) - 1
        return self.last_event

    def call(self, name, *args, seq=None):
        """Send a command and wait for its reply (retransmitting on the RFC 6298 timer). Returns
        the reply's values; raises ShoeError for an error reply, LinkDown if the shoe is gone.
        With a session, the command goes as an ACMD; if the shoe has lost the session (it
        restarted) and this client holds the key, it logs in again and sends the same command
        (same seq: if it was carried out before, the shoe answers with the reply it had)."""
        if seq is None:
            self.seq = W.next_seq(self.seq)
            seq = self.seq
        body = W.encode_command(name, args)
        cid = W.command_id(name)
        relogged = False
        reconnects = self.stats["reconnects"]
        while True:
            session = self.session if name not in PUBLIC_HANDSHAKE else None
            frame = session.frame_body(seq, body) if session is not None else body
            if session is not None and self.on_session is not None:
                # the counter is kept before the frame leaves: a command that gets no answer
                # may still have reached the shoe, and the next one must not reuse its counter
                self.on_session(session)
            reply = self._exchange(W.ACMD if session is not None else W.CMD, seq, frame, name)
            try:
                code, values = W.decode_reply(reply, W.COMMAND_REPLY[cid])
            except W.WireError as e:
                raise ShoeError(W.BAD_FRAME, "unreadable reply: %s" % e, name, self.path)
            if session is not None and self.session is not session and code != W.OK:
                continue  # logged in again meanwhile (the shoe restarted): same seq, new tag
            if code == W.SESSION and session is not None and self.credentials is not None \
                    and not relogged:
                relogged = True
                self.login(*self.credentials)
                continue
            if code != W.OK:
                if self.stats["reconnects"] != reconnects:
                    self._same_shoe(name)
                raise ShoeError(code, values, name, self.path)
            return values

    LIMIT = 12  # a command the shoe keeps talking through gives up after timeout * LIMIT

    def _same_shoe(self, name):
        """After the port went away and came back: is the same shoe there? (A pseudo-terminal's
        name, or a USB port's, can come back on another device.) LinkDown if not."""
        if self.info is None or name in PUBLIC_HANDSHAKE:
            return
        known = self.info
        try:
            now = self.identify()["device_id"]
        except UserError:
            now = None
        finally:
            self.info = known
        if now != known["device_id"]:
            raise LinkDown("the shoe on %s does not answer (%s): the port went away%s" % (
                self.path, name, ", and another device (%s) answers there now" % now
                if now else ""), hint="check which shoe is on %s" % self.path)

    def _exchange(self, ftype, seq, body, name):
        start = time.monotonic()
        self.replies.pop(seq, None)
        outer, self.waiting = self.waiting, seq
        try:
            return self._exchange_wait(ftype, seq, body, name, start)
        finally:
            # a command sent while another waits (on_silence's resume after a restart) hands
            # the line back to the one still waiting for its reply
            self.waiting = outer

    def _exchange_wait(self, ftype, seq, body, name, start):
        tries = 0
        rto = self.rto.rto / 1000.0
        if name in self.MOVES:  # the shoe may be moving cards (and writing flash) first
            rto = max(rto, self.MOVE_WAIT)
        while True:
            self._write(ftype, seq, body)
            tries += 1
            sent = time.monotonic()
            self.nak = False
            heard = sent
            while seq not in self.replies and time.monotonic() - heard < rto and not self.nak:
                if self.pump(min(0.01, rto)):
                    heard = time.monotonic()  # the shoe is talking (dealing): keep waiting
            if seq in self.replies:
                if tries == 1 and name in self.TIMED:  # Karn; and not a reply that waited
                    self.rto.sample(int((time.monotonic() - sent) * 1000))
                break
            now = time.monotonic()
            # "does not answer": silent for the whole timeout (a shoe dealing a long hand on a
            # slow mechanism sends its cards' events meanwhile, and is waited for)
            if now - max(start, self.t_rx) > self.timeout or now - start > \
                    self.timeout * self.LIMIT:
                raise LinkDown("the shoe on %s does not answer (%s)" % (self.path, name),
                               hint="is it powered and connected? `facedown --port %s "
                                    "identify` checks the link" % self.path)
            if self.on_silence is not None:
                self.on_silence()  # e.g. a virtual shoe that lost power is restarted here
            if self.nak:  # something arrived damaged: send again at once
                self.stats["fast_retries"] += 1
            else:
                self.stats["retries"] += 1
                rto = min(rto * 2, W.RTO_MAX_MS / 1000.0)
        return self.replies.pop(seq)

    def login(self, key, role, keep=True):
        """Open a session of role ("table" or "maintenance") with key (keys.Key): challenge,
        proof, and the shoe's proof that it holds the key too. keep: remember the key to log
        in again by itself if the shoe restarts. Returns the session."""
        from . import keys as K

        number = K.ROLES.get(role)
        if number is None:
            raise UserError("a session's role is table or maintenance, not %r" % (role,))
        if self.info is None:
            self.identify()
        device = self.info["device_id"]
        if key.device and key.device != device:
            raise UserError("the key is for %s, but this shoe is %s" % (key.device, device),
                            hint="use that shoe's key file")
        rkey = key.for_role(number)
        self.session = None
        self.session = K.open_session(self.call, rkey, role, device, self.path)
        if keep:
            self.credentials = (key, role)
        return self.session

    def logout(self):
        if self.session is not None:
            try:
                self.call("logout")
            finally:
                self.session = None
                self.credentials = None

    def identify(self, catalogue=False, check=True):
        """The handshake: versions, device id, capabilities, and (if asked: it is several KB)
        the message catalogue. With check (all but deploy, which is how a shoe gets the
        matching firmware), a shoe whose catalogue differs from this host's for a command it
        sends is refused (check_catalogue): its first chunk's digest is compared, and only when
        it differs is the whole document read and compared row by row."""
        chunks = []
        offset = 0
        whole = catalogue  # read the whole document
        while True:
            version, firmware, device_id, caps, chunk = self.call("identify", offset)
            if version != W.PROTOCOL_VERSION:
                raise UserError("the shoe speaks protocol %d, this host %d" % (
                    version, W.PROTOCOL_VERSION), hint="update the host or deploy matching "
                                                      "firmware")
            if not chunk:
                break
            chunks.append(bytes(chunk))
            offset += len(chunk)
            if check and offset == len(chunk) and served_digest(chunk) != own_digest():
                whole = True  # (an older shoe's has no digest: compared too)
            if not whole:
                break
        served = json.loads(b"".join(chunks).decode()) if whole else None
        if check and served is not None:
            check_catalogue(served, firmware)
        self.info = {"protocol": version, "firmware": firmware, "device_id": device_id,
                     "capabilities": [row[1] for row in W.CAPABILITIES if caps & row[0]],
                     "catalogue": served if catalogue else None}
        return self.info

    def resume(self):
        """After a (re)connect: ask for every event after the last one received. If the shoe
        no longer holds some of them, the gap is counted and the stream goes on from what it
        has (the table is then re-read with status). A client that holds its key logs in again
        first (a restart ended the session; events sent without one hide the down cards)."""
        if self.credentials is not None:
            self.login(*self.credentials)
        first, nxt = self.call("resume", self.last_event + 1)
        start = min(max(self.last_event + 1, first), nxt)
        if start != self.last_event + 1:
            self.stats["gaps"] += 1
            self.last_event = start - 1
        return first, nxt

    def status(self):
        """The shoe's status document, read in chunks of one snapshot (offset 0 takes a new
        one on the shoe). On a lossy line a late copy of an earlier status 0 can make the shoe
        take a new snapshot while the chunks are read, and the pieces then do not join: read it
        again from the start (read-only; at most three times)."""
        for attempt in range(3):
            chunks = []
            offset = 0
            while True:
                hand, _next, chunk = self.call("status", offset)
                if not chunk:
                    break
                chunks.append(bytes(chunk))
                offset += len(chunk)
            try:
                return json.loads(b"".join(chunks).decode())
            except ValueError:
                self.stats["status_rereads"] = self.stats.get("status_rereads", 0) + 1
                if attempt == 2:
                    raise

    def sync(self, timeout=10.0):
        """Wait until every event the shoe has made so far has arrived. Returns the last number."""
        _hand, upto, _chunk = self.call("status", 0xFFFF)
        self.wait_events(upto - 1, timeout)
        return upto - 1

    def wait_events(self, upto, timeout=10.0):
        """Pump until every event up to number `upto` has arrived, and acknowledge them at once
        (the caller may not pump again for a while: the shoe would send them again)."""
        end = time.monotonic() + timeout
        while self.last_event < upto:
            if time.monotonic() > end:
                raise LinkDown("events up to %d did not arrive (have %d)" % (upto,
                                                                             self.last_event))
            self.pump(0.01)
        if self.ack_due:
            self.ack_due = False
            self.unacked = 0
            self._write(W.ACK, 0, W.encode_ack(self.last_event))


def _hidden_move(entry):
    """A move event whose card is hidden (sent to a link without a table session)."""
    kind, fields = W.event_fields(entry)
    return kind == "move" and fields["card"] == W.HIDDEN


_DIGEST = []


def own_digest():
    """The digest of this host's catalogue (catalogue.catalogue_digest), as a shoe's opens with."""
    if not _DIGEST:
        _DIGEST.append(json.loads(catalogue().catalogue_json())["digest"])
    return _DIGEST[0]


def served_digest(first_chunk):
    """The digest a catalogue document's first chunk names (None: an older shoe's, without)."""
    m = re.search(rb'"digest": "([0-9a-f]+-[0-9]+)"', first_chunk)
    return m.group(1).decode() if m else None


def _row_text(row):
    fmt, names = row[3], row[4]
    return "id %d, %s %s" % (row[0], "format %r" % fmt if fmt else "no fields",
                            "(%s)" % ", ".join(names) if names else "")


def _flag_names(bits, table):
    """A command's flags as text, named by a catalogue's "flags" table ([bit, name] rows)."""
    names = [name for bit, name in table if bits & bit]
    rest = bits & ~sum(bit for bit, _name in table)
    return ", ".join(names + (["0x%x" % rest] if rest else [])) or "none"


def _command_text(row, table):
    """A catalogue's command row [id, name, role, flags] as "role table, flags deals, play"."""
    return "role %s, flags %s" % (row[2], _flag_names(row[3], table))


def _refuse(firmware, what, theirs, ours):
    raise UserError(
        "the shoe's firmware %s does not match this host for %s: the shoe has %s, this host "
        "%s" % (firmware, what, theirs, ours),
        hint="deploy the firmware matching this host to the shoe (facedown deploy), or use "
             "the facedown release that matches firmware %s" % firmware)


def check_catalogue(served, firmware="?"):
    """Klipper's format check: every command this host sends (its arguments and its reply, its
    role and its flags) and every event kind it decodes must be the same in the shoe's served
    catalogue: the same id, format and field names, the same role and flags. A shoe that lacks
    one, or has it otherwise, is refused with one line naming the first that differs and what
    differs (a command the host does not know is no matter)."""
    theirs = {}
    for row in served.get("messages") or ():
        theirs[(row[1], row[2])] = row
    own = json.loads(catalogue().catalogue_json())
    for row in own["messages"]:
        name, way = row[1], row[2]
        other = theirs.get((name, way))
        if other is not None and list(other[:1]) + list(other[3:5]) == [row[0]] + row[3:5]:
            continue
        what = {"cmd": "the command %s" % name, "reply": "the reply to %s" % name,
                "event": "the event %s" % name}[way]
        _refuse(firmware, what, _row_text(other) if other else "none", _row_text(row).strip())
    # the role a command needs and what its flags say (read-only, deals, play, simulator
    # only, moves cards, timed): the host classifies its replies and refusals by them
    served_flags = served.get("flags") or own["flags"]
    commands = {row[1]: row for row in served.get("commands") or ()}
    for row in own["commands"]:
        other = commands.get(row[1])
        if other is not None and list(other[:4]) == row[:4]:
            continue
        ours = _command_text(row, own["flags"])
        if other is None:
            mine = "no role or flags for it"
        elif other[0] != row[0]:
            mine, ours = "id %d" % other[0], "id %d" % row[0]
        elif other[2] != row[2]:
            mine, ours = "role %s" % other[2], "role %s" % row[2]
        else:
            mine = "flags %s" % _flag_names(other[3], served_flags)
            ours = "flags %s" % _flag_names(row[3], own["flags"])
        _refuse(firmware, "the command %s" % row[1], mine, ours)


def connect(port, key=None, role="maintenance", backlog=False, cls=Client, stored=False,
            find=True, catalogue=False, **kwargs):
    """A Client on port: opened, identified, in a session and attached to the event stream.
    The session: logged in with key (keys.Key); or, with stored, the one `facedown login`
    opened for this port (dropped, with a word on stderr, when the shoe no longer has it),
    else, with find, a new one with the shoe's key from $FACEDOWN_KEY_FILE, $FACEDOWN_KEY or
    the key store; with none of these, none (what anyone on the link may see). catalogue:
    identify reads the whole catalogue document."""
    from . import keys

    client = cls(port, **kwargs).open()
    try:
        device = client.identify(catalogue)["device_id"]
        client.call("ping", 0, seq=0)  # our own numbering: no reply cached for another host
        if key is None and stored:
            session = keys.load_session(port)
            held = session is not None and session.device == device and \
                _holds(client, session, port)
            if not held and find:
                key = keys.find_key(device)
        if key is not None:
            client.login(key, role)
        client.attach(backlog)
    except BaseException:
        client.close()
        raise
    return client


def _holds(client, session, port):
    """Take up the stored session if the shoe still has it (a ping in it); else drop it."""
    from . import keys

    client.session = session
    client.on_session = lambda s: keys.save_session(port, s)
    try:
        client.call("ping", 0)
        return True
    except ShoeError as e:
        if e.code not in (W.SESSION, W.DENIED):  # (ping is public: DENIED = not this session's
            raise                                # tag, one that has gone)
    keys.drop_session(port)
    client.session = None
    client.on_session = None
    print("facedown: the %s session ended (the shoe restarted, it expired, or another login "
          "replaced it): going on without one" % session.role, file=sys.stderr)
    return False


def connect_port(port, role="maintenance", backlog=False, cls=Client, **kwargs):
    """connect() to a shoe given by its port, with the session there is for it (stored)."""
    return connect(port, None, role, backlog, cls, stored=True, **kwargs)
