# The device end of the protocol: frames in and out, commands to the device once each, events
# out until acknowledged (retransmitted on the RFC 6298 timer, on a NAK, or on resume).
import wire
from device import FIRMWARE_VERSION
from shoe.compat import release

IDENTIFY = wire.command_id("identify")  # (wire.COMMAND_IDS would build all the derived maps)
QUEUE = 4  # commands held while one is being carried out
HOLD_MS = 30  # new events wait this long for company before they are sent
ACK_WAIT_MS = 100  # a host may hold its ACK a while (SPEC 6.2): no go-back-N before this
MAINT_QUIET_MS = 50  # after maintenance: the line must be this quiet before the REPL takes it
MAINT_MAX_MS = 1000  # (however chatty the host)


class Link:
    def __init__(self, port, device, clock, capabilities=0):
        self.port = port
        self.dev = device
        self.clock = clock
        self.caps = capabilities
        self.dec = wire.Decoder()
        self.inbuf = bytearray(64)
        # the events held from before this boot wait for the host to ask (resume, or an ACK or
        # NAK): sent now, they would go out before the host could log in again, with the down
        # cards hidden from a session that is gone
        self.sent = device.event_next - 1  # highest event number sent
        self.quiet = bool(device.held)
        self.rto = wire.Rto()
        self.t_sent = 0        # when events were last (re)transmitted
        self.t_rx = clock.ticks_ms()
        self.timed = 0         # event number whose ACK will give an RTT sample (Karn: 0 = none)
        self.t_new = 0         # when the oldest event not sent yet appeared (0: none waiting)
        self.busy = 0          # seq of the command being carried out
        self.queue = []
        device.indicate()      # the status LED from power-up
        self.frames_out = 0
        self.retransmits = 0

    # ---------------------------------------------------------------- the loop's work

    def service(self):
        """One round: read what arrived, answer commands, send events. True if it did work."""
        work = self.received(self.port.read_into(self.inbuf))
        while self.queue and not self.busy:
            seq, body, ftype = self.queue.pop(0)
            self.command(seq, body, ftype)
            work = True
        if not self.queue and self.dev.poll_panel():  # the front panel, between commands
            work = True
        if work:
            self.dev.indicate()  # the status LED follows the shoe's state
        return self.send_events() or work

    def idle(self):
        """Called by the mechanism while a card is in flight: keep the link alive and stream the
        events of the operation in progress (committed before they are sent). This runs at the
        bottom of the deepest stack the shoe makes (the link, a command, the engine, the feed,
        the reader's wait), and a Pico's C stack is 8 KB, each Python call level about 250 B of
        it (rp2040js lab): the port is read in line, by every caller of received()."""
        self.received(self.port.read_into(self.inbuf))
        if self.dev.collect_now():
            self.send_events(now=True)  # live: the card that just came out

    def received(self, n):
        """The n bytes read into inbuf (port.read_into, by the caller: one call level less on
        the stack the commands run on): their frames handled. True if there were any."""
        if not n:
            if self.dec.pending() and self.clock.ticks_diff(self.clock.ticks_ms(), self.t_rx) > \
                    wire.IDLE_TIMEOUT_MS:
                self.frames(self.dec.expire())
            return False
        self.t_rx = self.clock.ticks_ms()
        bad = self.dec.frames_bad
        self.frames(self.dec.feed(memoryview(self.inbuf)[:n]))
        if self.dec.frames_bad != bad:  # a frame was damaged on the way: ask for it again
            self.send(wire.NAK, 0, bytes((self.dec.last_error,)))
        return True

    def frames(self, frames):
        for ftype, seq, body in frames:
            if ftype == wire.CMD or ftype == wire.ACMD:
                if self.busy:
                    if seq != self.busy and len(self.queue) < QUEUE and \
                            not [q for q in self.queue if q[0] == seq]:
                        self.queue.append((seq, body, ftype))
                else:
                    self.command(seq, body, ftype)
            elif ftype == wire.ACK:
                try:
                    self.acked(wire.decode_ack(body))
                except wire.WireError:
                    self.send(wire.NAK, 0, b"")
            elif ftype == wire.NAK:
                self.retransmit()

    def command(self, seq, body, ftype=wire.CMD):
        if ftype == wire.CMD and len(body) == 3 and body[0] == IDENTIFY:
            caps = self.caps | (wire.CAP_AUTH if self.dev.sessions.provisioned() else 0)
            import catalogue  # (for the call: its bytecode leaves the heap after it)

            try:
                reply = catalogue.identify_reply(body[1] | (body[2] << 8), FIRMWARE_VERSION,
                                                 self.dev.hal.device_id, caps)
            finally:
                release("catalogue")
        else:
            self.busy = seq or 0x10000
            try:
                reply = self.dev.run(seq, body, ftype)
            finally:
                self.busy = 0
            if self.dev.resend_from:
                self.quiet = False
                self.sent = self.dev.resend_from - 1
                self.dev.resend_from = 0
                self.timed = 0
        self.send(wire.REPLY, seq, reply)

    # ---------------------------------------------------------------- events

    def acked(self, number):
        self.quiet = False
        if self.timed and number >= self.timed:
            self.rto.sample(self.clock.ticks_diff(self.clock.ticks_ms(), self.t_sent))
            self.timed = 0
        self.dev.ack(number)
        if self.sent < number:
            self.sent = number

    def send_events(self, now=False):
        """Send held events not sent yet, within the window. New events wait up to HOLD_MS so
        that one frame carries several (a command's events usually follow its reply within a
        few ms); `now` sends at once. True if any went out."""
        dev = self.dev
        limit = dev.oldest() - 1 + wire.EVENT_WINDOW * wire.MAX_EVENTS
        did = False
        waiting = dev.event_next - 1 - self.sent
        if waiting > 0 and not now and waiting < wire.MAX_EVENTS // 2:
            t = self.clock.ticks_ms()
            if not self.t_new:
                self.t_new = t or 1
            if self.clock.ticks_diff(t, self.t_new) < HOLD_MS:
                waiting = 0
        if waiting <= 0:
            return self._maybe_retransmit()
        self.t_new = 0
        while self.sent + 1 < dev.event_next and self.sent < limit:
            got = dev.events_from(self.sent + 1, wire.MAX_EVENTS)
            if got is None:
                break
            first, hand, entries = got
            self.send(wire.EVENT, first & 0xFFFF, wire.encode_events(first, hand, entries))
            self.sent = first + len(entries) // 4 - 1
            if not self.timed:
                self.timed = self.sent
            self.t_sent = self.clock.ticks_ms()
            did = True
        return did or self._maybe_retransmit()

    def _maybe_retransmit(self):
        dev = self.dev
        if self.quiet:
            return False
        if dev.held and self.sent >= dev.oldest() and \
                self.clock.ticks_diff(self.clock.ticks_ms(), self.t_sent) > \
                max(self.rto.rto, ACK_WAIT_MS):
            # the ACK may be in the line already, unread while a command kept the shoe busy
            # (a stop waits for the mechanism for a second or more): read it first
            self.received(self.port.read_into(self.inbuf))
            if not (dev.held and self.sent >= dev.oldest()):
                return True
            self.retransmit()
            self.rto.backoff()
            return True
        return False

    def retransmit(self):
        """Go back to the oldest event not acknowledged."""
        self.quiet = False
        if self.dev.held:
            self.sent = self.dev.oldest() - 1
            self.timed = 0
            self.retransmits += 1
            self.t_sent = self.clock.ticks_ms()
            self.send_events(now=True)

    def send(self, ftype, seq, body):
        self.port.write(wire.encode(ftype, seq, body))
        self.frames_out += 1

    async def run(self):
        import asyncio
        import gc

        quiet = 0
        while not self.dev.maintenance:
            if self.service():
                quiet = 0
                await asyncio.sleep_ms(0)
            else:
                quiet += 1
                if quiet == 20:  # the line has gone quiet: tidy the heap while nothing waits
                    gc.collect()
                await asyncio.sleep_ms(1)
        # maintenance: the reply is out. Until the host has been quiet for MAINT_QUIET_MS, keep
        # answering (a retried maintenance gets its cached reply) so that no protocol byte
        # reaches the REPL (an ACK holds 0x04, Ctrl-D); then the loop ends and main returns.
        t0 = t = self.clock.ticks_ms()
        while True:
            now = self.clock.ticks_ms()
            if self.clock.ticks_diff(now, t) >= MAINT_QUIET_MS or \
                    self.clock.ticks_diff(now, t0) >= MAINT_MAX_MS:
                return
            if self.received(self.port.read_into(self.inbuf)):
                t = self.clock.ticks_ms()
            await asyncio.sleep_ms(1)
