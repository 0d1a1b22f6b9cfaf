"""Random and mutated frames against the real firmware: a virtual shoe (the MicroPython unix
port on a pseudo-terminal, facedown.virtualshoe) fed batches of frames, checked after each.

Frames: the commands of every bundled scenario in order (so hands go deep), the same with
fuzzed bodies under a good CRC, bad CRCs, truncations, splices of two frames, impossible LENs,
random bytes, ACKs and NAKs with any body, and frame types the shoe does not take. Never the
maintenance command (it hands the line to the REPL, where random bytes would be typed).

After each batch: the shoe is alive (a simulated power cut armed by a fuzzed sim_fault is a
reboot, counted) and answers ping and status; its journal verifies (history 0 reports no
damaged area, and the flash file read back verifies); if no command of the batch was carried
out (answered OK, or MECHANISM: run until the mechanism stopped, SPEC 6.5), the table and the
event counter are as before and no new event came; no reply was FAULT "internal fault" and the
shoe's log shows no traceback; no event or status chunk named a card that had not left the stub
(the cards named must have been seen leaving it, or be out of the stub in the table before or
after the batch); once wire.COMMAND_ROLE exists, no command above the public role is carried
out for a plain CMD (the probes are plain CMD frames; the scenario commands go as ACMD frames
in the host's session). One process holds the serial port: the checks go through the same
client, on SEQ 0 first (a new session: the fuzzed SEQs left in the reply cache do not answer
them).

    .venv/bin/python fuzz/shoe_frames.py --frames 100000 [--batch 40] [--seed 1] [--json F]
"""

import argparse
import json
import os
import random
import re
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fuzzlib  # noqa: E402

import wire as W  # noqa: E402
from facedown.client import Client, ShoeError  # noqa: E402
from facedown.virtualshoe import VirtualShoe  # noqa: E402

MAINTENANCE = W.COMMAND_IDS["maintenance"]
RAN = (bytes([W.OK]), bytes([W.MECHANISM]))  # reply statuses of a command that was carried out
NEUTRAL = {W.COMMAND_IDS[n] for n in ("ping", "status", "identify", "history", "resume",
                                        "sim_deck")}


def neutral(body):
    """Does this command, accepted, leave the table and the event counter as they are? (the
    simulator's faults and stacked deck wait for the next card or hand; not so a jam)"""
    if body[:1] and body[0] in NEUTRAL:
        return True
    try:
        cid, args = W.decode_command(body)
    except W.WireError:
        return False
    return W.COMMAND_NAMES[cid] == "sim_fault" and args[0] != "jam"
DRIVE = 25  # frames of a driving batch (valid commands)
FUZZ_SEQ = 0x8000  # the fuzzed frames' SEQs are 0 or from here on; the checks' are 1 and up
NAMES = re.compile(rb"(?<![0-9A-Za-z])([2-9TJQKA][cdhs])(?![0-9A-Za-z])")


class Mismatch(Exception):
    """A check's command had another command's reply."""


class Frames:
    """The frame generator: (bytes, [(seq, body)] of the well-formed CMD frames in them)."""

    def __init__(self, rnd):
        self.rnd = rnd
        self.plays = [b for _, b in fuzzlib.scenario_commands()] + [fuzzlib.extra_commands()]
        self.play = []
        self.seq = FUZZ_SEQ
        self.counts = {}
        self.session = None  # the host's maintenance session: the scenarios' commands use it

    def _next_command(self):
        while not self.play:
            self.play = list(self.rnd.choice(self.plays))
        body = self.play.pop(0)
        return body if body[:1] != bytes([MAINTENANCE]) else b"\x0e\x00\x00\x00\x00"

    def _seq(self):
        self.seq = self.seq + 1 if self.seq < 0xFFFF else FUZZ_SEQ
        return self.seq

    def _mutate(self, body):
        r = self.rnd
        b = bytearray(body)
        for _ in range(r.randint(1, 3)):
            how = r.randrange(7)
            if how == 0 and b:
                b[r.randrange(len(b))] ^= 1 << r.randrange(8)
            elif how == 1 and b:
                b[r.randrange(len(b))] = r.choice((0, 1, 0x7E, 0x7F, 0x80, 0xFF, r.randrange(256)))
            elif how == 2:
                b.insert(r.randrange(len(b) + 1), r.randrange(256))
            elif how == 3 and b:
                del b[r.randrange(len(b))]
            elif how == 4:
                del b[r.randrange(len(b) + 1):]
            elif how == 5:
                b += bytes(r.randrange(256) for _ in range(r.randint(1, 20)))
            elif how == 6 and b:
                b[0] = r.randrange(1, 20)
        if b[:1] == bytes([MAINTENANCE]):
            b[0] = W.COMMAND_IDS["ping"]
        return bytes(b[:W.MAX_BODY])

    def one(self, probe=False):
        r = self.rnd
        x = r.random()
        x = 0.30 + x * 0.70 if probe else 0.0
        if x < 0.30:
            kind, body = "valid", self._next_command()
            seq = self._seq()
            if self.session is not None:  # as a host in its session sends it: an ACMD
                return kind, W.encode(W.ACMD, seq, self.session.frame_body(seq, body)), [
                    (seq, body, True)]
            return kind, W.encode(W.CMD, seq, body), [(seq, body, False)]
        if x < 0.55:
            body = self._mutate(self._next_command() if r.random() < 0.5 else
                                r.choice(r.choice(self.plays)))
            seq = self._seq() if r.random() < 0.9 else r.choice((0, r.randrange(FUZZ_SEQ,
                                                                                0x10000)))
            return "fuzzed_body", W.encode(W.CMD, seq, body), [(seq, body, False)]
        good = W.encode(W.CMD, self._seq(), self._mutate(self._next_command()))
        if x < 0.65:
            f = bytearray(good)
            f[r.randrange(1, len(f))] ^= 1 << r.randrange(8)
            return "bad_crc", bytes(f), []
        if x < 0.73:
            return "truncated", good[:r.randrange(1, len(good))], []
        if x < 0.80:
            other = W.encode(W.CMD, self._seq(), self._next_command())
            return "splice", good[:r.randrange(1, len(good))] + other[r.randrange(len(other)):], []
        if x < 0.85:
            n = r.randint(201, 255)
            return "oversize_len", bytes([0x7E, n, 1]) + bytes(r.randrange(256) for _ in range(
                r.randint(0, 60))), []
        if x < 0.90:
            junk = bytes(r.choice((0x7E, r.randrange(256))) for _ in range(r.randint(1, 60)))
            return "random_bytes", junk, []
        if x < 0.95:
            t = r.choice((W.ACK, W.ACK, W.NAK))
            body = W.encode_ack(r.randrange(1 << 32)) if r.random() < 0.5 else bytes(
                r.randrange(256) for _ in range(r.randint(0, 8)))
            return "ack_nak", W.encode(t, 0, body), []
        t = r.choice((W.REPLY, W.EVENT) + tuple(range(6, 16)))
        return "other_type", W.encode(t, self._seq(), bytes(r.randrange(256) for _ in range(
            r.randint(0, 12)))), []

    def batch(self, n, probe):
        data = b""
        cmds = []
        for _ in range(n):
            kind, frame, sent = self.one(probe)
            self.counts[kind] = self.counts.get(kind, 0) + 1
            data += frame
            cmds += sent
        return data, cmds


class Run:
    def __init__(self, shoe, seed):
        self.shoe = shoe
        self.rnd = random.Random(seed)
        self.gen = Frames(self.rnd)
        self.c = {"frames": 0, "batches": 0, "crashes": 0, "rejected_changes": 0,
                  "disclosures": 0, "unauthenticated": None if not fuzzlib.roles_live() else 0}
        self.extra = {"power_cuts": 0, "accepted": 0, "stopped": 0, "rejected": 0, "replies": 0,
                      "events": 0, "probe_batches": 0, "checked_batches": 0, "check_retries": 0}
        self.findings = []
        self.last_mismatch = None
        self.seen_seqs = set()  # every seq the probes used so far (a reuse is a retry)
        self.left = {}  # hand number -> cards seen leaving the stub
        self.got = []
        self.client = None
        self.connect()
        self.table = self.check_point()

    def find(self, kind, what):
        self.c[kind] += 1
        if len(self.findings) < 20:
            self.findings.append({"kind": kind, "what": what[:2000]})

    def connect(self):
        if self.client is not None:
            self.client.close()
        self.client = Client(self.shoe.port, timeout=20).open()
        # the host's maintenance session (a power cut ends it: connect() comes again after one)
        self.client.identify()
        self.client.call("ping", 0, seq=0)
        self.client.login(self.shoe.key, "maintenance", keep=False)
        self.gen.session = self.client.session
        plain = self.client._frame

        def frame(ftype, seq, body):
            self.got.append((ftype, seq, body))
            return plain(ftype, seq, body)

        self.client._frame = frame

    def check_point(self):
        """A new session (SEQ 0), ping, the whole table, the journal: the status document. A
        power cut a fuzzed sim_fault armed may strike during the check's own commands (resume
        writes the journal): the shoe reboots and the check starts again."""
        from facedown.client import LinkDown

        for _ in range(4):
            try:
                return self._check_point()
            except ShoeError as e:
                if e.code == W.FAULT:  # the shoe failed the check's own command
                    self.find("crashes", "check: %s; log: %s" % (e, self.shoe.log_tail(5)))
                    self.shoe.restart(ready_line="ready", timeout=20)
                    self.connect()
                    continue
                self.mismatch(e)
            except Mismatch as e:
                self.mismatch(e)
            except LinkDown as e:
                if not self.power_cut():
                    self.find("crashes", "the shoe stopped answering (%s); alive: %s; log: %s"
                              % (e, self.shoe.alive(), self.shoe.log_tail(15)))
                    self.shoe.restart(ready_line="ready", timeout=20)
                    self.connect()
        # the shoe keeps failing its checks from this flash: keep the flash and the log for
        # the report, and go on from a blank flash
        self.extra["blank_flash"] = self.extra.get("blank_flash", 0) + 1
        keep = os.path.join(HERE, "out", "shoe-flash-%d" % self.extra["blank_flash"])
        os.makedirs(keep, exist_ok=True)
        self.shoe.stop()
        for name in ("flash.bin", "shoe.log", "world.txt"):
            src = os.path.join(self.shoe.flash, name)
            if os.path.exists(src):
                shutil.copy(src, keep)
        os.remove(os.path.join(self.shoe.flash, "flash.bin"))
        self.find("crashes", "the shoe fails its checks after every power cycle (last: %s); "
                             "its flash is kept in %s" % (self.last_mismatch, keep))
        self.shoe.start(ready_line="ready", timeout=20)
        self.connect()
        return self._check_point()

    def mismatch(self, e):
        """A late reply of a fuzzed frame with SEQ 0 took the place of the check's own (the
        check opens its session with SEQ 0 too): read on, and check again. (A check that
        fails every time is a finding: check_point keeps the flash and goes on from a blank
        one; the run goes on.)"""
        self.extra["check_retries"] += 1
        self.last_mismatch = str(e)
        self.client.pump(0.1)
        self.client.replies.clear()

    def power_cut(self):
        """Did the shoe die of a simulated power cut? Then it is powered on again."""
        if self.shoe.alive() or "PowerCut" not in self.shoe.log():
            return False
        self.extra["power_cuts"] += 1
        self.shoe.start(ready_line="ready", timeout=20)
        self.connect()
        return True

    def _check_point(self):
        c = self.client
        c.seq = 0
        c.replies.clear()
        c.attach()
        token = self.rnd.randrange(1 << 32)
        if c.call("ping", token) != [token]:
            raise Mismatch("ping answered with another token")
        doc = c.status()
        size, chunk = c.call("history", 0, 0)
        damaged = chunk[0] | chunk[1] << 8 if len(chunk) >= 2 else 0
        if damaged:
            self.find("crashes", "the journal reports %d damaged areas" % damaged)
        problems = self.verify_flash()
        if problems:
            self.find("crashes", "the flash does not verify: %r" % problems)
        return doc

    def verify_flash(self):
        from hal.flashdev import RamFlash, BLOCK
        from journal import Journal

        with open(os.path.join(self.shoe.flash, "flash.bin"), "rb") as f:
            image = bytearray(f.read())
        return Journal(RamFlash(len(image) // BLOCK, image)).verify()

    @staticmethod
    def out_cards(doc):
        t = doc.get("table")
        if not t:
            return set()
        cards = {c["card"] for held in t["seats"].values() for c in held}
        for k in ("board", "burns", "muck", "aside", "removed"):
            cards |= set(t[k])
        return cards

    def drain(self, limit=3.0):
        end = time.monotonic() + limit
        quiet = time.monotonic()
        while time.monotonic() < end:
            if self.client.pump(0.02):
                quiet = time.monotonic()
            elif time.monotonic() - quiet > 0.03:
                break

    def batch(self, n):
        from shoe import cards as C

        # batches take turns: a few commands of the scenarios (the hands go on), then a probe
        # of broken and fuzzed frames, checked for state changes when it had none accepted
        probe = self.c["batches"] % 2 == 1
        n = n if probe else min(n, DRIVE)
        data, cmds = self.gen.batch(n, probe)
        self.got = []
        self.client.ser.write(data)
        self.drain()
        self.c["frames"] += n
        self.c["batches"] += 1
        boots = self.shoe.boots
        if not self.shoe.alive() and not self.power_cut():
            self.find("crashes", "the shoe died: %s" % self.shoe.log_tail(15))
            self.shoe.start(ready_line="ready", timeout=20)
            self.connect()
        before = self.table
        # the check's commands follow the batch on the line: every reply and event of the
        # batch has come when their replies have (frames of both are in self.got)
        self.table = self.check_point()
        if self.shoe.boots != boots:
            return  # the shoe rebooted (its stub reshuffled): nothing to compare
        sent = {}
        plain_seqs = set()  # seqs used once in this batch, by a plain CMD, and never before
        seen = self.seen_seqs
        for seq, body, authed in cmds:
            sent.setdefault(seq, []).append(body)
            if not authed and seq not in seen and len(sent[seq]) == 1:
                plain_seqs.add(seq)
            elif seq in plain_seqs:
                plain_seqs.discard(seq)
        seen.update(sent)
        accepted = False
        new_events = 0
        named = []
        for ftype, seq, body in self.got:
            if ftype == W.REPLY and seq not in sent and seq < FUZZ_SEQ:
                continue  # the check's own command
            if ftype == W.REPLY:
                self.extra["replies"] += 1
                if fuzzlib.internal_fault(body):
                    self.find("crashes", "internal fault: %r to %r" % (body, sent.get(seq)))
                bodies = sent.get(seq)
                # OK, or MECHANISM: the command ran until the mechanism stopped it (SPEC 6.5: a
                # fault event, the fault in the status, maybe cards moved before the stop)
                if body[:1] in RAN:
                    self.extra["accepted" if body[:1] == b"\x00" else "stopped"] += 1
                    if fuzzlib.roles_live() and bodies and seq in plain_seqs and all(
                            b[:1] and W.COMMAND_ROLE.get(b[0], 0) > 0 for b in bodies):
                        # sent without the session (plain CMD frames only with this seq)
                        self.find("unauthenticated", "%r answered %r without a session" % (
                            bodies, body[:1]))
                    if bodies is None or not all(neutral(b) for b in bodies):
                        if not accepted and probe:
                            why = "by:" + (W.COMMAND_NAMES.get(bodies[0][0], "?") if bodies and
                                           bodies[0] else "unknown frame")
                            self.extra[why] = self.extra.get(why, 0) + 1
                        accepted = True
                    if bodies and all(b[:1] == bytes([W.COMMAND_IDS["status"]]) for b in bodies):
                        named += NAMES.findall(body)
                else:
                    self.extra["rejected"] += 1
            elif ftype == W.EVENT:
                try:
                    first, hand, entries = W.decode_events(body)
                except W.WireError:
                    self.find("crashes", "an EVENT body that does not decode: %r" % body)
                    continue
                left = self.left.setdefault(hand, set())
                for i, e in enumerate(entries):
                    self.extra["events"] += 1
                    if first + i >= before.get("events", 1):
                        new_events += 1
                    if e[0] in (1, 6) and e[1] < 52:
                        if e[0] == 1 and e[2] == 0:
                            left.add(C.name(e[1]))
                        else:
                            named.append(C.name(e[1]).encode())
        if "PowerCut" in self.shoe.log() or "Traceback" in self.shoe.log():
            self.find("crashes", "the shoe's log: %s" % self.shoe.log_tail(15))
        self.extra["probe_batches"] += probe
        if not accepted:
            self.extra["checked_batches"] += 1
            if new_events:
                self.find("rejected_changes", "no command accepted, yet %d new events came" %
                          new_events)
            if self.table != before:
                self.find("rejected_changes", "no command accepted, yet the table went from %s "
                                              "to %s" % (json.dumps(before)[:800],
                                                         json.dumps(self.table)[:800]))
        known = self.out_cards(before) | self.out_cards(self.table)
        for s in self.left.values():
            known |= s
        for name in named:
            if isinstance(name, bytes):
                name = name.decode()
            if name not in known:
                self.find("disclosures", "%s was named before it left the stub" % name)


def run(frames, batch, seed, keep=False):
    with VirtualShoe(keep=keep) as shoe:
        shoe.start(ready_line="ready", timeout=20)
        t0 = time.monotonic()
        r = Run(shoe, seed)
        shown = 0
        while r.c["frames"] < frames:
            r.batch(min(batch, frames - r.c["frames"]))
            if r.c["frames"] - shown >= 10000:
                shown = r.c["frames"]
                print("%d frames, %.0f s: %s" % (shown, time.monotonic() - t0, json.dumps(
                    {k: r.c[k] for k in fuzzlib.INVARIANTS})), flush=True)
        wall = time.monotonic() - t0
        r.client.close()
    return {"frames": r.c["frames"], "wall_seconds": round(wall, 1),
            "frames_per_s": round(r.c["frames"] / wall, 1), "batch": batch, "seed": seed,
            "invariants": {k: r.c[k] for k in fuzzlib.INVARIANTS},
            "batches": r.c["batches"], "kinds": r.gen.counts, "extra": r.extra,
            "findings": r.findings}


def ok(rep):
    return all(not v for v in rep["invariants"].values())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--frames", type=int, default=100000)
    p.add_argument("--batch", type=int, default=60)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", default=os.path.join(HERE, "out", "shoe_frames.json"))
    args = p.parse_args(argv)
    rep = run(args.frames, args.batch, args.seed)
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(rep, f, indent=1)
    print("virtual shoe: %d frames in %.1f s (%.0f frames/s), %d batches" % (
        rep["frames"], rep["wall_seconds"], rep["frames_per_s"], rep["batches"]))
    print("  frames: " + ", ".join("%s %d" % kv for kv in sorted(rep["kinds"].items())))
    print("  " + ", ".join("%s %s" % kv for kv in sorted(rep["extra"].items())))
    for k, v in rep["invariants"].items():
        print("  %-18s %s" % (k, "n/a (no roles in this firmware)" if v is None else v))
    for f in rep["findings"][:5]:
        print("  %s: %s" % (f["kind"], f["what"][:600]))
    print("report: %s" % args.json)
    return 0 if ok(rep) else 1


if __name__ == "__main__":
    sys.exit(main())
