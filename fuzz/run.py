"""The dedicated fuzzing run: the three atheris harnesses (codec, device, link) for a number of
inputs in all, on every core, with seed corpora made from valid frames; a report of the inputs
per target, time, executions per second, coverage and corpus size, and the invariant counters
(crashes, rejected_changes, disclosures, unauthenticated: all must be 0), printed and written
as JSON. Inputs that broke an invariant are kept in OUT/crashes (with a .txt saying why).

    .venv/bin/python fuzz/run.py --inputs 1000000            # make fuzz
    .venv/bin/python fuzz/run.py --inputs 15000 --out DIR    # the short run of make test
    .venv/bin/python fuzz/run.py --replay FILE               # one saved input, with the reason

Exit status: 0 when every counter is 0 and every harness process ended normally.
"""

import argparse
import json
import multiprocessing
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fuzzlib  # noqa: E402

TARGETS = ("codec", "device", "link")
# shares of the inputs: the codec is ~100x cheaper per input than a device pair, so it gets
# most of them; the device and link harnesses get the same number, enough to go deep
SHARES = {"codec": 0.70, "device": 0.15, "link": 0.15}
MAX_LEN = {"codec": 1024, "device": 1024, "link": 2048}
JOB = {"codec": 100000, "device": 10000, "link": 10000}  # inputs per harness process


# --- seed corpora from valid frames ------------------------------------------------------------
def seeds():
    """{target: [input bytes]}: every bundled scenario as the commands a host sends, framed for
    the link and the codec, as records for the device; with ACKs, NAKs, power cuts and the
    commands scenarios do not use."""
    import catalogue as K
    import wire as W

    plays = fuzzlib.scenario_commands()
    extra = fuzzlib.extra_commands()
    out = {t: [] for t in TARGETS}

    def records(bodies, op=0):
        return b"".join(bytes([op, len(b)]) + b for b in bodies)

    def stream(bodies, session=None):
        """The commands as a host sends them: SEQ 0 first, an ACK every third command; CMD
        frames, or ACMD frames sealed in session."""
        out = W.encode(W.CMD, 0, W.encode_command("ping", [0]))
        seq = 0
        for i, body in enumerate(bodies):
            seq = W.next_seq(seq)
            out += W.encode(W.CMD, seq, body) if session is None else \
                W.encode(W.ACMD, seq, session.frame_body(seq, body))
            if i % 3 == 2:
                out += W.encode(W.ACK, 0, W.encode_ack(seq * 4))
        return out

    # the link in the host's session too (as the host's client sends it; every harness device
    # opens the same session: fuzzlib.Session's seeded nonces), so that the commands above the
    # public role go deep through the link
    from facedown import keys

    base = fuzzlib.new_device().host.session
    for k, (_, bodies) in enumerate(plays):
        out["device"].append(records(bodies, 4 * (k & 1)))
        plain = stream(bodies)
        out["link"].append(bytes([k & 0xFF]) + plain)
        if k % 4 == 0:
            out["codec"].append(bytes([k & 0xFF]) + plain[:1023])
        session = keys.Session(base.device, base.role, base.skey, base.number)
        out["link"].append(bytes([(k + 128) & 0xFF]) + stream(bodies, session))
    # power cuts: armed for the next command's records, and between commands
    for at in (1, 2, 3, 5):
        cut = W.encode_command("sim_fault", ["power_cut", at, 0, 0])
        bodies = plays[at][1]
        out["device"].append(records(bodies[:3]) + records([cut]) + records(bodies[3:]))
        out["link"].append(b"\x07" + b"".join(W.encode(W.CMD, i + 1, b) for i, b in
                                              enumerate(bodies[:3] + [cut] + bodies[3:])))
    out["device"].append(records(plays[0][1][:5]) + b"\xff\x01\x00" + records(plays[0][1][5:]))
    # a power cut while a card is in flight, sensors blind (op bit 3): the operator's recover
    setup = [b for b in plays[0][1] if b[0] in (W.COMMAND_IDS["config"],
                                                W.COMMAND_IDS["hand"])][:2]
    for at, card in ((2, 255), (3, 255), (2, 0), (4, 51)):
        cut = W.encode_command("sim_fault", ["power_cut", at, 0, 0])
        out["device"].append(records(setup + [cut]) + records([W.encode_command("deal", [0])], 8)
                             + records([W.encode_command("status", [0]),
                                        W.encode_command("recover", [card]),
                                        W.encode_command("deal", [0])]))
    out["device"].append(records(extra))
    # the front panel (op 0xFE: button, floor key): hands dealt, burnt, reported by its buttons
    config = [W.encode_command("config", ["holdem", 0b1111111110, 9, "tda2024", ""])]
    for presses in ((0, 1, 2, 1, 3, 1, 1, 0, 4), (0, 4), (0, 2, 2, 0, 1, 1)):
        out["device"].append(records(config) + b"".join(
            bytes([0xFE, 2, p, 1 if p == 4 else 0]) for p in presses))
    out["link"].append(b"\x03" + b"".join(W.encode(W.CMD, i + 1, b) for i, b in
                                          enumerate(extra[:-4])))
    # the codec: every frame type, replies and events as a shoe sends them, garbage around
    frames = [W.encode(W.REPLY, 1, W.encode_reply_ok("I", [7])),
              W.encode(W.REPLY, 2, W.encode_reply_error(W.WRONG_STATE, "no hand")),
              W.event_frame(70000, 3, bytes([1, 34, 0, 0x91, 4, 3, 1, 0, 8, 1, 0, 0])),
              W.encode(W.ACK, 0, W.encode_ack(5)), W.encode(W.NAK, 0, b"\x01"),
              W.encode(W.REPLY, 3, K.identify_reply(0, "0.3.0", "fuzz-0001", 3)),
              W.encode(W.REPLY, 4, W.encode_reply_ok("Hy", [90, bytes(range(90))]))]
    for i, f in enumerate(frames):
        out["codec"].append(bytes([i]) + b"\x00\x7e\x05" + f + f[:-3] + frames[0])
    for body in extra:
        out["codec"].append(b"\x00" + W.encode(W.CMD, 1, body))
    return out


def write_seeds(folder):
    made = {}
    for target, inputs in seeds().items():
        d = os.path.join(folder, target)
        os.makedirs(d, exist_ok=True)
        for i, data in enumerate(inputs):
            with open(os.path.join(d, "seed-%03d" % i), "wb") as f:
                f.write(data)
        made[target] = len(inputs)
    return made


# --- one harness process -----------------------------------------------------------------------
_STAT = re.compile(r"#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/(\S+)")


def job(args):
    target, runs, seed, out, seeds_dir = args
    corpus = os.path.join(out, "corpus", target)
    os.makedirs(corpus, exist_ok=True)
    crashes = os.path.join(out, "crashes")
    os.makedirs(crashes, exist_ok=True)
    stats = os.path.join(out, "stats", "%s-%d.json" % (target, seed))
    os.makedirs(os.path.dirname(stats), exist_ok=True)
    env = dict(os.environ, FUZZ_STATS=stats, FUZZ_RUNS=str(runs), FUZZ_CRASH_DIR=crashes)
    cmd = [sys.executable, os.path.join(HERE, "fuzz_%s.py" % target), "-runs=%d" % runs,
           "-seed=%d" % seed, "-max_len=%d" % MAX_LEN[target], "-timeout=60",
           "-rss_limit_mb=4096", "-print_final_stats=1",
           "-artifact_prefix=%s/%s-" % (crashes, target), corpus, seeds_dir]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    cov = None
    for m in _STAT.finditer(proc.stderr):
        cov = {"cov": int(m.group(2)), "ft": int(m.group(3)), "corpus": int(m.group(4))}
    try:
        with open(stats) as f:
            got = json.load(f)
    except (OSError, ValueError):
        got = None
    return {"target": target, "runs": runs, "seed": seed, "wall": wall, "rc": proc.returncode,
            "coverage": cov, "stats": got,
            "tail": "\n".join(proc.stderr.splitlines()[-30:]) if proc.returncode else ""}


def plan(total):
    jobs = []
    seed = 1
    for target in TARGETS:
        left = int(round(total * SHARES[target]))
        while left > 0:
            n = min(JOB[target], left)
            jobs.append((target, n, seed))
            left -= n
            seed += 1
    # the longest first, so that two cores finish together
    jobs.sort(key=lambda j: -j[1] * (100 if j[0] != "codec" else 1))
    return jobs


def run(total, out, cores):
    os.makedirs(out, exist_ok=True)
    seeds_dir = os.path.join(out, "seeds")
    made = write_seeds(seeds_dir)
    jobs = [(t, n, s, out, os.path.join(seeds_dir, t)) for t, n, s in plan(total)]
    t0 = time.monotonic()
    with multiprocessing.Pool(cores) as pool:
        results = pool.map(job, jobs, chunksize=1)
    wall = time.monotonic() - t0
    return report(results, wall, cores, made, out)


def report(results, wall, cores, made, out):
    per = {}
    for r in results:
        t = per.setdefault(r["target"], {"inputs": 0, "cpu_seconds": 0.0, "processes": 0,
                                         "abnormal_exits": 0, "seeds": made.get(r["target"]),
                                         "coverage": None, "counters": {}, "extra": {},
                                         "findings": []})
        t["processes"] += 1
        t["cpu_seconds"] += r["wall"]
        if r["rc"] != 0 or r["stats"] is None:
            t["abnormal_exits"] += 1
            t["findings"].append({"kind": "harness exit %s" % r["rc"], "what": r["tail"]})
        if r["coverage"] and (t["coverage"] is None or
                              r["coverage"]["ft"] > t["coverage"]["ft"]):
            t["coverage"] = r["coverage"]
        s = r["stats"] or {"counters": {}, "extra": {}, "findings": []}
        for k, v in s["counters"].items():
            if v is None:
                t["counters"][k] = None
            else:
                t["counters"][k] = (t["counters"].get(k) or 0) + v
        for k, v in s["extra"].items():
            t["extra"][k] = t["extra"].get(k, 0) + v
        t["findings"] += s["findings"][:5]
        t["inputs"] += s["counters"].get("inputs", 0)
    totals = {k: 0 for k in fuzzlib.INVARIANTS}
    for name, t in per.items():
        t["exec_per_s"] = round(t["inputs"] / t["cpu_seconds"], 1) if t["cpu_seconds"] else 0
        t["corpus_files"] = len(os.listdir(os.path.join(out, "corpus", name)))
        for k in fuzzlib.INVARIANTS:
            if k not in t["counters"]:
                continue  # no stats from this target (its processes exited abnormally)
            v = t["counters"][k]
            if v is None:
                totals[k] = None
            elif totals[k] is not None:
                totals[k] += v
    inputs = sum(t["inputs"] for t in per.values())
    rep = {"inputs": inputs, "wall_seconds": round(wall, 1), "cores": cores,
           "exec_per_s": round(inputs / wall, 1) if wall else 0, "invariants": totals,
           "abnormal_exits": sum(t["abnormal_exits"] for t in per.values()), "targets": per}
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(rep, f, indent=1)
    return rep


def show(rep, out):
    print("fuzz run: %d inputs in %.1f s on %d cores (%.0f inputs/s)" % (
        rep["inputs"], rep["wall_seconds"], rep["cores"], rep["exec_per_s"]))
    print("  %-8s %9s %9s %8s %6s %6s %7s" % ("target", "inputs", "cpu s", "exec/s", "cov",
                                              "ft", "corpus"))
    for name in TARGETS:
        t = rep["targets"].get(name)
        if t is None:
            continue
        cov = t["coverage"] or {}
        print("  %-8s %9d %9.1f %8.1f %6s %6s %7d" % (name, t["inputs"], t["cpu_seconds"],
                                                      t["exec_per_s"], cov.get("cov", "?"),
                                                      cov.get("ft", "?"), t["corpus_files"]))
    for k, v in rep["invariants"].items():
        print("  %-18s %s" % (k, "n/a (no roles in this firmware)" if v is None else v))
    if rep["abnormal_exits"]:
        print("  abnormal harness exits: %d" % rep["abnormal_exits"])
    for name, t in rep["targets"].items():
        for f in t["findings"][:3]:
            print("  %s %s: %s" % (name, f["kind"], f["what"][:600]))
    print("report: %s" % os.path.join(out, "report.json"))


def ok(rep):
    return not rep["abnormal_exits"] and all(not v for v in rep["invariants"].values())


def replay(path):
    """Run one saved input on its harness, stopping with the reason at the first finding."""
    name = os.path.basename(path)
    target = name.split("-")[0]
    os.environ["FUZZ_RAISE"] = "1"
    mod = __import__("fuzz_%s" % target)
    with open(path, "rb") as f:
        mod.TestOneInput(f.read())
    print("%s: no finding" % name)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--inputs", type=int, default=1000000, help="inputs in all (default 1e6)")
    p.add_argument("--out", default=os.path.join(HERE, "out"), help="corpora, crashes, report")
    p.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    p.add_argument("--replay", metavar="FILE", help="run one saved input")
    args = p.parse_args(argv)
    if args.replay:
        return replay(args.replay)
    rep = run(args.inputs, os.path.abspath(args.out), args.cores)
    show(rep, args.out)
    return 0 if ok(rep) else 1


if __name__ == "__main__":
    sys.exit(main())
