"""facedown deploy / verify end to end: the virtual shoe's REPL reached the way a Pico's is (the
maintenance command hands the serial line to it), the real mpremote copying and hashing files,
the soft reset ending the unix port, and the new firmware booting from the flash folder."""

import json
import os
import re
import subprocess

import pytest

from facedown import cli, deploy, keys
from facedown.build import ROOT, build_image
from facedown.client import Client, ShoeError
from facedown.virtualshoe import VirtualShoe

# One xdist worker takes the whole module, in order: its tests deploy to, verify and tamper
# with the module's shoes one after another (a test counts on the firmware the one before it
# left), ~1.5 minutes in all, started among the first (docs/testing.md "Running the suite")
pytestmark = [pytest.mark.xdist_group("deploy_shoe"), pytest.mark.slow]

VERSION = deploy.firmware_version()


def identify(shoe):
    c = Client(shoe.port, timeout=10).open()
    try:
        return c.identify()
    finally:
        c.close()


def facedown(capsys, *argv):
    """Run the facedown command in-process: (status, stdout, stderr)."""
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def reboot(shoe):
    """The soft reset ended the unix port (a Pico would reboot by itself): power it on again."""
    assert shoe.wait_exit(10) == 0
    shoe.start(ready_line="ready", timeout=20)


def flash_files(flash):
    out = {}
    for d, _, names in os.walk(flash):
        for n in names:
            out[os.path.relpath(os.path.join(d, n), flash).replace(os.sep, "/")] = \
                os.path.join(d, n)
    return out


@pytest.fixture(scope="module")
def shoe(tmp_path_factory):
    """A virtual shoe running an older firmware: source modules (no .mpy), another version."""
    flash = tmp_path_factory.mktemp("deploy") / "flash"
    # (compiling the sources at import needs more heap than a deployed shoe's bytecode)
    with VirtualShoe(flash=flash, compile=False, heapsize="384K") as s:
        s.key.save(keys.keystore_path(s.key.device))  # `facedown provision` left it there
        path = os.path.join(s.flash, "version.py")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:  # changed after the manifest was signed: the shoe locks
            f.write(re.sub(r'VERSION = "[^"]+"', 'VERSION = "0.0.1-old"', text))
        s.start(ready_line="ready", timeout=20)
        yield s


def test_deploy_replaces_the_firmware_and_the_shoe_boots_it(shoe, capsys):
    assert identify(shoe)["firmware"] == "0.0.1-old"
    # a firmware file changed after its manifest was signed: the shoe is locked
    c = shoe.connect(timeout=10)
    try:
        assert "version.py does not match" in c.status()["locked"]
        with pytest.raises(ShoeError, match="locked: version.py"):
            c.call("hand", 0)
    finally:
        c.close()
    code, out, err = facedown(capsys, "--port", shoe.port, "deploy")
    assert code == 0, err
    assert re.search(r"deployed firmware %s to .*verified, manifest signed.*reset" %
                     re.escape(VERSION), out)
    reboot(shoe)
    info = identify(shoe)
    assert info["firmware"] == VERSION and "CAP_SIM" in info["capabilities"]
    c = shoe.connect(timeout=10)
    try:  # the deploy left it unlocked, and logged: who, what, the check's result
        assert c.status()["locked"] is None
        from facedown.commands import fetch_audit

        records, problems = fetch_audit(c)
        assert problems == []
        dep = [r for r in records if r["what"] == "deploy"]
        assert dep and dep[-1]["actor"].startswith("maintenance#") and \
            ("firmware %s" % VERSION) in dep[-1]["detail"] and "verified" in dep[-1]["detail"]
        assert [r for r in records if r["what"] == "locked"]
    finally:
        c.close()
    # every file the manifest names is in the flash folder, byte for byte
    files = flash_files(shoe.flash)
    with open(files["manifest.json"]) as f:
        manifest = json.load(f)
    assert manifest["firmware"] == VERSION and manifest["march"] is None
    assert {"main.py", "wire.mpy", "pinmap.json", "device.mpy", "shoe/hand.mpy"} <= \
        set(manifest["files"])
    for rel, entry in manifest["files"].items():
        assert deploy.hash_file(files[rel]) == (entry["sha256"], entry["size"]), rel
    # the old source modules are gone (a stale device.py would shadow device.mpy)
    assert [f for f in files if f.endswith(".py")] == ["main.py"]
    # the shoe's own files survive: its id, its journal, its log
    assert {"device_id", "flash.bin", "shoe.log"} <= set(files)
    assert "maintenance: the REPL has the line" in shoe.log(this_boot=False)


def test_verify_passes_on_the_deployed_shoe(shoe, capsys):
    code, out, err = facedown(capsys, "--port", shoe.port, "verify")
    assert code == 0, out + err
    assert re.search(r"verify .* against firmware %s: OK: \d+ match, 0 mismatch, 0 missing, "
                     r"0 extra; manifest authentic \(installed: firmware %s" % (
                         re.escape(VERSION), re.escape(VERSION)), out)
    reboot(shoe)
    assert identify(shoe)["firmware"] == VERSION


def test_verify_against_a_release_manifest(shoe, capsys, tmp_path):
    code, out, _ = facedown(capsys, "image", "--out", str(tmp_path / "rel"), "--march", "host")
    assert code == 0 and "manifest" in out
    code, out, err = facedown(capsys, "--port", shoe.port, "verify", "--json", "--manifest",
                              str(tmp_path / "rel" / "manifest.json"))
    assert code == 0, out + err
    r = json.loads(out)
    assert not (r["mismatches"] or r["missing"] or r["extra"]) and len(r["matches"]) > 20
    reboot(shoe)


def test_verify_reports_a_tampered_flash(shoe, capsys):
    files = flash_files(shoe.flash)
    with open(files["pinmap.json"], "a") as f:
        f.write(" ")  # one byte more: the shoe still boots, its files no longer match
    os.remove(files["hal/simstops.mpy"])
    with open(os.path.join(shoe.flash, "shoe", "stale.py"), "w") as f:
        f.write("X = 1\n")
    code, out, _ = facedown(capsys, "--port", shoe.port, "verify")
    assert code == 1
    assert "MISMATCH pinmap.json" in out and "MISSING  hal/simstops.mpy" in out
    assert "EXTRA    shoe/stale.py" in out
    assert re.search(r"FAILED: \d+ match, 1 mismatch, 1 missing, 1 extra", out)
    reboot(shoe)
    # deploy puts it right (and removes the stray module)
    code, out, err = facedown(capsys, "--port", shoe.port, "deploy")
    assert code == 0, err
    assert "1 stale removed" in out
    reboot(shoe)
    assert not os.path.exists(os.path.join(shoe.flash, "shoe", "stale.py"))
    code, out, _ = facedown(capsys, "--port", shoe.port, "verify", "--no-reset")
    assert code == 0 and "OK" in out
    # --no-reset left the REPL on the line: verify finds it there (no maintenance needed)
    assert shoe.alive()
    code, out, _ = facedown(capsys, "--port", shoe.port, "verify")
    assert code == 0
    reboot(shoe)


def test_maintenance_is_refused_mid_hand(shoe, capsys):
    c = shoe.connect(timeout=10)
    try:
        c.call("config", "holdem", sum(1 << s for s in range(1, 7)), 6, "tda2024", "")
        c.call("hand", 0)
        c.call("deal", 0)
        c.sync()
        with pytest.raises(ShoeError, match="hand is in progress"):
            c.call("maintenance")
    finally:
        c.close()
    code, _, err = facedown(capsys, "--port", shoe.port, "deploy")
    assert code == 2 and "a hand is in progress" in err
    c = shoe.connect(timeout=10)
    try:  # the shoe kept serving the protocol all along
        c.call("end")
        c.sync()
    finally:
        c.close()
    assert shoe.alive()


def test_deploy_repairs_a_shoe_whose_firmware_does_not_boot(shoe, capsys):
    shoe.stop()
    with open(os.path.join(shoe.flash, "link.mpy"), "wb") as f:
        f.write(b"not bytecode")
    # in production a firmware that fails never hands its REPL to the cable: it stops
    shoe.start()
    shoe.wait_for("Traceback", timeout=10)
    assert shoe.wait_exit(10) is not None and not shoe.alive()
    # the technician turns the maintenance key: then the failing firmware leaves the REPL
    keyswitch = os.path.join(shoe.flash, "keyswitch")
    open(keyswitch, "w").close()
    try:
        shoe.start()
        shoe.wait_for("Traceback", timeout=10)  # main.py failed: the REPL has the line
        assert shoe.alive()
        code, out, err = facedown(capsys, "--port", shoe.port, "deploy")
        assert code == 0, err
        reboot(shoe)
    finally:
        os.remove(keyswitch)
    assert identify(shoe)["firmware"] == VERSION


def test_manifest_is_reproducible_and_compare_sorts_files(tmp_path):
    a = deploy.build(str(tmp_path / "a"), "armv6m")
    b = deploy.build(str(tmp_path / "b"), "armv6m")
    assert a["files"] == b["files"] and a["target"] == "rp2040"
    assert os.path.isfile(tmp_path / "a" / "manifest.json")
    host = build_image(str(tmp_path / "h"), None)
    assert "wire.mpy" in host and "pinmap.json" in host and "main.py" in host
    dev = {rel: (e["size"], e["sha256"]) for rel, e in a["files"].items()}
    dev["device.mpy"] = (dev["device.mpy"][0], "0" * 64)
    del dev["wire.mpy"]
    dev["old.py"] = (3, "1" * 64)
    dev["shoe.log"] = (10, None)
    dev["manifest.json"] = (100, None)
    matches, mismatches, missing, extra = deploy.compare(a, dev)
    assert mismatches == ["device.mpy"] and missing == ["wire.mpy"] and extra == ["old.py"]
    assert len(matches) == len(a["files"]) - 2
    assert deploy.march_for(["CAP_SIM", "CAP_JOURNAL"]) is None
    assert deploy.march_for(["CAP_JOURNAL"]) == "armv6m"
    assert os.path.isdir(os.path.join(ROOT, "firmware"))


def test_the_shoe_s_wire_module_is_the_codec_without_the_prose(tmp_path):
    """The image's wire.py is protocol/wire.py as it is (no source rewriting: issue 15): its
    command table carries names, formats, roles and flags but no prose (facedown.spec keeps
    it, by name), nor the SPEC generator; the catalogue it serves is the host's, byte for
    byte."""
    import types

    import catalogue
    import wire as W

    from facedown import spec

    with open(os.path.join(ROOT, "protocol", "wire.py"), encoding="utf-8") as f:
        src = f.read()
    ns = {"__name__": "shoe_wire"}
    exec(compile(src, "wire.py", "exec"), ns)
    cat = {"__name__": "shoe_catalogue"}  # protocol/catalogue.py over the shoe's tables
    with open(os.path.join(ROOT, "protocol", "catalogue.py"), encoding="utf-8") as f:
        exec(compile(f.read(), "catalogue.py", "exec"), cat)
    cat["W"] = types.SimpleNamespace(**ns)
    assert cat["catalogue_json"]() == catalogue.catalogue_json()
    assert ns["COMMANDS"] == W.COMMANDS and ns["EVENTS"] == W.EVENTS
    assert "catalogue_markdown" not in ns and "update_spec" not in ns
    for _cid, _name, _way, _fmt, doc in spec.MESSAGES:  # no sentence of the prose is there
        text = doc.split(": ", 1)[-1]
        assert len(text) < 20 or text[:40] not in src, text
    build_image(str(tmp_path / "img"), None)
    assert not os.path.exists(tmp_path / "img" / "wire.py")
    assert os.path.exists(tmp_path / "img" / "wire.mpy")
    lay_out_dir = tmp_path / "lay"
    from facedown.build import lay_out

    lay_out(str(lay_out_dir), target="sim")
    with open(lay_out_dir / "wire.py", encoding="utf-8") as f:
        assert f.read() == src


@pytest.fixture(scope="module")
def rom_shoe(tmp_path_factory):
    """A virtual shoe whose MicroPython has a 192 KB ROMFS partition (the shoe's custom build)."""
    flash = tmp_path_factory.mktemp("deploy-romfs") / "flash"
    with VirtualShoe(flash=flash, romfs=192 * 1024) as s:
        s.key.save(keys.keystore_path(s.key.device))
        s.start(ready_line="ready", timeout=20)
        yield s


def test_deploy_to_the_romfs_partition_and_back(rom_shoe, capsys):
    """On a shoe with a ROMFS partition the modules go there (they run from flash), main.py and
    the pin map to the filesystem; the boot check hashes the ROMFS too (a changed byte there
    locks the shoe); --romfs no clears it, so no old module comes first on sys.path."""
    shoe = rom_shoe
    assert "modules in the ROMFS" not in shoe.log()
    code, out, err = facedown(capsys, "--port", shoe.port, "deploy")  # auto: it has one
    assert code == 0, err
    assert re.search(r"verified, manifest signed, modules in the ROMFS \(\d+ bytes\)", out), out
    reboot(shoe)
    assert "ready: hand 0, events up to 0 (modules in the ROMFS)" in shoe.log()
    files = flash_files(shoe.flash)
    assert not [f for f in files if f.endswith(".mpy")], "no module left on the filesystem"
    with open(files["manifest.json"]) as f:
        manifest = json.load(f)
    assert "/rom/device.mpy" in manifest["files"] and "main.py" in manifest["files"]
    c = shoe.connect(timeout=20)
    try:
        assert c.status()["locked"] is None
        c.call("config", "holdem", 0b1110, 3, "tda2024", "{}")
        c.call("hand", 0)
        c.call("deal", 0)
        assert len(c.status()["table"]["seats"]["1"]) == 2
        c.call("end")
    finally:
        c.close()
    code, out, err = facedown(capsys, "--port", shoe.port, "verify")
    assert code == 0 and "OK" in out and "/rom/shoe/hand.mpy" in out, out + err
    reboot(shoe)
    # a byte of a module in the partition changes (one the boot does not import: a changed
    # module it imports may fail to load, and a shoe in production then stops): it locks
    with open(os.path.join(shoe.flash, "romfs.bin"), "rb") as f:
        rom = bytearray(f.read())
    at = rom.index(b"scenario.mpy") + 400
    rom[at] ^= 0x01
    with open(os.path.join(shoe.flash, "romfs.bin"), "wb") as f:
        f.write(rom)
    shoe.stop()
    shoe.start(ready_line="ready", timeout=20)
    c = shoe.connect(timeout=20)
    try:
        assert "/rom/scenario.mpy does not match" in c.status()["locked"]
    finally:
        c.close()
    # back to the filesystem: the ROMFS is cleared, the shoe boots the filesystem's modules
    code, out, err = facedown(capsys, "--port", shoe.port, "deploy", "--romfs", "no")
    assert code == 0 and "the ROMFS cleared" in out, out + err
    reboot(shoe)
    assert "modules in the ROMFS" not in shoe.log()
    c = shoe.connect(timeout=20)
    try:
        assert c.status()["locked"] is None
    finally:
        c.close()


def test_deploy_romfs_needs_a_partition(shoe, capsys):
    code, out, err = facedown(capsys, "--port", shoe.port, "deploy", "--romfs", "yes",
                              "--no-reset")
    assert code != 0 and "has no ROMFS partition" in err
    deploy.Maintenance(shoe.port).reset()  # it stopped at the REPL: back to the protocol
    reboot(shoe)
    assert identify(shoe)["firmware"] == VERSION


def test_modules_too_big_for_the_partition_change_nothing(tmp_path, capsys):
    """A partition smaller than the modules' ROMFS image: deploy stops before it writes."""
    with VirtualShoe(flash=tmp_path / "flash", romfs=64 * 1024) as s:
        s.key.save(keys.keystore_path(s.key.device))
        s.start(ready_line="ready", timeout=20)
        before = flash_files(s.flash)
        code, out, err = facedown(capsys, "--port", s.port, "deploy", "--no-reset")
        assert code != 0 and re.search(r"ROMFS image \(\d+ bytes\) does not fit the 65536-byte "
                                       r"partition", err), err
        def program(files):
            return {f: deploy.hash_file(p) for f, p in files.items()
                    if f.endswith((".py", ".mpy", ".json"))}

        assert program(flash_files(s.flash)) == program(before)
        with open(os.path.join(s.flash, "romfs.bin"), "rb") as f:
            assert f.read() == b"\xff" * 64 * 1024, "the partition was written"
        deploy.Maintenance(s.port).reset()
        reboot(s)
        assert "ready" in s.log()


# ---------------------------------------------------------------------------------------------
# a virtual shoe whose filesystem is littlefs, as a Pico's (VirtualShoe(littlefs=blocks))

def lfs_bytes(shoe):
    with open(os.path.join(shoe.flash, "lfs.bin"), "rb") as f:
        return f.read()


def test_an_image_that_does_not_fit_changes_nothing(tmp_path, capsys):
    """A 192 KB littlefs (48 blocks, as the old docs' _boot.py made): the image's 43 files need
    more blocks than it has (34 of them fill it), so deploy refuses before it copies a byte,
    with one line; the shoe's filesystem is as it was. On the stock layout it fits."""
    with VirtualShoe(flash=tmp_path / "small", littlefs=48) as s:
        deploy.Maintenance(s.port).at_repl(2.0)  # (the REPL is up: a fresh Pico)
        before = lfs_bytes(s)
        code, out, err = facedown(capsys, "--port", s.port, "deploy")
        assert code == 2 and len(err.strip().splitlines()) == 2, err  # the line and its hint
        assert re.search(r"error: the firmware does not fit the filesystem on \S+: it needs "
                         r"\d+ blocks of 4096 bytes, the shoe has 46 \(46 free of 48", err), err
        assert lfs_bytes(s) == before, "deploy wrote to the shoe's filesystem"
        assert s.alive()
    with VirtualShoe(flash=tmp_path / "stock", littlefs=352) as s:
        code, out, err = facedown(capsys, "--port", s.port, "deploy")
        assert code == 0, err
        reboot(s)
        assert "ready: hand 0" in s.log()


def test_the_rp2_romfs_partition_is_found_and_walked_once(tmp_path, capsys):
    """littlefs over the storage region and a 192 KB ROMFS partition, as a MicroPython built
    with one has them: vfs.rom_ioctl(2, 0) gives the partition's rp2.Flash object (no len()),
    the ROMFS is mounted at /rom inside /. deploy finds the partition and puts the modules
    there; provision signs them; the shoe boots unlocked from the ROMFS (its boot check walks
    each module once); verify lists each once."""
    with VirtualShoe(flash=tmp_path / "flash", littlefs=304, romfs=192 * 1024) as s:
        m = deploy.Maintenance(s.port)
        assert m.at_repl(2.0)
        out = m.exec("import vfs\nd = vfs.rom_ioctl(2, 0)\nprint('O', hasattr(d, 'ioctl'), "
                     "d.ioctl(4, 0) * d.ioctl(5, 0), vfs.rom_ioctl(3, 0, 4096))\n"
                     "try:\n    len(d)\nexcept TypeError as e:\n    print('T', e)\n")
        assert "O True 196608 -22" in out and "T object of type 'Flash' has no len()" in out
        code, out, err = facedown(capsys, "--port", s.port, "deploy")
        assert code == 0 and "modules in the ROMFS" in out, err
        reboot(s)
        code, out, err = facedown(capsys, "--port", s.port, "provision")
        assert code == 0, err
        reboot(s)
        assert "(modules in the ROMFS)" in s.log() and "locked" not in s.log()
        device = re.search(r"provisioned (\S+):", out).group(1)
        c = Client(s.port, timeout=10).open()
        try:
            c.login(keys.find_key(device), "maintenance")
            assert c.status()["locked"] is None
        finally:
            c.close()
        code, out, err = facedown(capsys, "--port", s.port, "verify")
        assert code == 0 and re.search(r"OK: \d+ match, 0 mismatch, 0 missing, 0 extra", out)
        assert out.count("/rom/device.mpy") == 1 and "rom/device.mpy\n" not in \
            out.replace("/rom/device.mpy", "")
        reboot(s)


def test_provision_keeps_no_key_the_shoe_did_not_confirm(tmp_path, capsys, monkeypatch):
    """The shoe does not hold the key it was sent (here its confirmation differs): provision
    stops with one line, the host's key store is untouched, and the shoe is back to having no
    key (provision can run again, and then keeps the key)."""
    with VirtualShoe(flash=tmp_path / "flash", littlefs=352) as s:
        assert facedown(capsys, "--port", s.port, "deploy")[0] == 0
        reboot(s)
        store = os.path.join(os.environ["FACEDOWN_HOME"], "keys")
        before = sorted(os.listdir(store)) if os.path.isdir(store) else []
        monkeypatch.setattr(deploy.Maintenance, "sha256", lambda self, rel: "0" * 64)
        code, out, err = facedown(capsys, "--port", s.port, "provision")
        assert code == 2 and "did not keep the key it was given: nothing was saved" in err, err
        after = sorted(os.listdir(store)) if os.path.isdir(store) else []
        assert after == before
        reboot(s)
        monkeypatch.undo()
        m = deploy.Maintenance(s.port)
        m.enter()  # a shoe without a key: maintenance is open
        assert m.device()[1] is False
        code, out, err = facedown(capsys, "--port", s.port, "provision")
        assert code == 0, err
        device = re.search(r"provisioned (\S+):", out).group(1)
        assert keys.find_key(device) is not None
        reboot(s)


FRAGMENTED = r'''
import gc, sys
src = open(sys.argv[1]).read()
code = compile(src, "script", "exec")
src = None
gc.collect()
# the heap as a maintenance leaves a Pico's: room, but in holes of under 1 KB
hold = []
try:
    while True:
        hold.append(bytearray(700))
except MemoryError:
    pass
for i in range(0, len(hold), 2):
    hold[i] = None
gc.collect()
exec(code)
'''


@pytest.mark.parametrize("which", ["read", "hash"])
def test_the_read_scripts_need_no_big_block(tmp_path, which):
    """deploy's scripts that read the shoe's files (a file's bytes, the hashes and the
    manifest) run in a heap whose free room lies in holes of under 1 KB (after maintenance a
    Pico's largest free block was a few KB, and one hexlify of the manifest asked for 5 KB)."""
    from facedown.virtualshoe import find_micropython

    folder = tmp_path / "shoe"
    (folder / "hal").mkdir(parents=True)
    manifest = {"files": {"hal/m%02d.mpy" % i: {"sha256": "%064x" % i, "size": 4000}
                          for i in range(60)}}
    text = json.dumps(manifest, indent=1)
    assert len(text) > 6000
    (folder / "manifest.json").write_text(text)
    for i in range(3):
        (folder / "hal" / ("m%02d.mpy" % i)).write_bytes(bytes(range(256)) * 16)
    script = {"read": deploy._READ % {"path": "manifest.json"},
              "hash": deploy._HASH % {"skip": deploy.DATA_FILES, "manifest": "manifest.json"}}
    (tmp_path / "script.py").write_text(script[which])
    (tmp_path / "frag.py").write_text(FRAGMENTED)
    proc = subprocess.run([find_micropython(), "-X", "heapsize=48K", str(tmp_path / "frag.py"),
                           str(tmp_path / "script.py")], cwd=str(folder), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout[-500:] + proc.stderr
    lines = proc.stdout.splitlines()
    if which == "read":
        assert b"".join(bytes.fromhex(x[2:]) for x in lines if x.startswith("X ")) == \
            text.encode() and "Z" in lines
    else:
        assert len([x for x in lines if x.startswith("F ")]) == 4
        got = [x for x in lines if x.startswith("M ")][0][2:]
        assert json.loads(got) == manifest


def _heap(session):
    """(bytes live after gc.collect(), of them in interned-string pools, the largest free
    block) at the shoe's REPL."""
    out = session.exec("import gc, micropython\ngc.collect()\nprint('A', gc.mem_alloc())\n"
                       "micropython.qstr_info()\nmicropython.mem_info()\n")
    live = int(re.search(r"^A (\d+)", out, re.M).group(1))
    pools = int(re.search(r"n_total_bytes=(\d+)", out).group(1))
    block = int(re.search(r"max free sz: (\d+)", out).group(1)) * 32  # 32-byte GC blocks here
    return live, pools, block


def test_maintenance_gives_the_heap_back(tmp_path):
    """After maintenance the firmware leaves the heap (main.py's release(): the HAL and the
    port, every module, asyncio's queues): what stays live at the REPL is the bare REPL's and
    the interned strings (MicroPython keeps its qstr pools until a soft reset: py/qstr.c frees
    none), so mpremote's scripts have the room. It kept 225 KB (of a 320 KB heap) before."""
    bare_main = tmp_path / "bare.py"
    bare_main.write_text("import asyncio\n")
    with VirtualShoe(main=str(bare_main), repl=True, provision=False) as s:
        m = deploy.Maintenance(s.port)
        m.enter()
        bare, _, _ = _heap(m)
    with VirtualShoe(flash=tmp_path / "flash", ready_line="ready") as s:
        c = s.connect(timeout=10)
        try:
            c.call("config", "holdem", 0b1110, 3, "tda2024", "{}")
            c.call("hand", 0)
            c.call("deal", 0)
            c.call("end")
        finally:
            c.close()
        m = deploy.Maintenance(s.port, key=s.key)
        m.enter()
        live, pools, block = _heap(m)
    print("bare REPL %d B live; after maintenance %d B, %d B of it interned strings; largest "
          "free block %d B" % (bare, live, pools, block))
    assert live - bare - pools <= 8 * 1024, (live, bare, pools)
    assert block >= 16 * 1024, block
