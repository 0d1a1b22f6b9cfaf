"""The image each target ships (firmware/targets/*.py, facedown.build): a Pico's carries no
simulator code, the virtual shoe's no rp2 face, every firmware file ships somewhere, and no
shipped module imports one its target leaves out."""

import ast
import json
import os
import shutil

import pytest

from facedown import build
from facedown.build import PICO, SIM, TARGETS, build_image, manifest_files, source_files
from facedown.errors import UserError

SIM_ONLY = ("hal/sim.py", "hal/simmech.py", "hal/simstops.py", "hal/simcarousel.py",
            "scenario.py")
PICO_ONLY = ("hal/rp2.py", "hal/rp2mech.py", "hal/pinview.py", "hal/stepper_pio.py",
             "hal/led_pio.py", "hal/carousel_rp2.py", "board.py")


def test_the_pico_image_has_no_simulator_code(tmp_path):
    files = build_image(str(tmp_path / "pico"), "armv6m")  # armv6m: the Pico's target
    for rel in SIM_ONLY:
        assert rel[:-3] + ".mpy" not in files
    for rel in PICO_ONLY:
        assert rel[:-3] + ".mpy" in files
    assert "main.py" in files and "wire.mpy" in files and "board.mpy" in files
    assert not any(f.startswith("targets/") for f in files)  # the manifests never ship
    # the pin map is checked, and its budget worked out, on the host: the Pico reads board.py
    assert "pinmap.json" not in files and "hal/pins.mpy" not in files
    # the reader board's script runs on the OpenMV, not here (reader/manifest.json); the line's
    # declaration both sides import ships
    with open(os.path.join(build.ROOT, "reader", "manifest.json")) as f:
        reader = json.load(f)["files"]
    own = [k for k, v in reader.items() if v.startswith("reader/")]
    assert len(own) >= 5
    for rel in own:
        if rel == "main.py":  # both boot from a main.py: the Pico's is its own
            with open(os.path.join(str(tmp_path / "pico"), rel)) as f, \
                    open(os.path.join(build.ROOT, reader[rel])) as g:
                assert f.read() != g.read()
            continue
        assert rel not in files and rel[:-3] + ".mpy" not in files, rel
    assert not any(f.startswith("reader/") for f in files)
    assert "hal/readerline.mpy" in files


def test_the_board_module_is_the_checked_pin_map(tmp_path):
    """board.py holds the pin map the wiring reads (no prose) and the budget hal/pins.py works
    out from it; a pin map with problems builds no image, with the problems in one line."""
    import json

    from hal import pins

    with open(os.path.join(build.ROOT, "hardware", "pinmap.json")) as f:
        text = f.read()
    ns = {}
    exec(build.board_module(text), ns)
    data = json.loads(text)
    assert ns["BUDGET"] == pins.budget(data)
    pm = pins.PinMap(data)
    for name in pm.names():
        assert ns["MAP"]["signals"][pm.names().index(name)]["gpio"] == pm.gpio(name)
    assert "description" not in repr(ns["MAP"]) and "connector" not in repr(ns["MAP"])
    # the optional parts reach the Pico: a map with the gather tray (two decks) or revision D's
    # loader fitted has hal/rp2wire.py fit them (the build once dropped the gather tray)
    for part in ("gather_tray", "loader"):
        fitted = json.loads(text)
        fitted[part]["fitted"] = fitted["carousel_stepper"]["fitted"] = True
        ns = {}
        exec(build.board_module(json.dumps(fitted)), ns)
        assert ns["MAP"][part]["fitted"] is True, part
    data["signals"][0]["gpio"] = 99
    with pytest.raises(UserError) as e:
        build.board_module(json.dumps(data))
    assert "hardware/pinmap.json:" in str(e.value) and "99" in str(e.value)


def test_the_virtual_shoe_image_has_no_rp2_face():
    sim = manifest_files(SIM)
    assert set(SIM_ONLY) <= set(sim) and not set(PICO_ONLY) & set(sim)
    assert build.TARGETS[SIM] is None and build.TARGETS[PICO] == "armv6m"


def test_every_firmware_file_ships_in_some_target():
    shipped = set()
    for target in TARGETS:
        shipped.update(manifest_files(target))
    assert shipped | set(build.BUILD_ONLY) == set(source_files())


def _module_file(name, sources):
    path = name.replace(".", "/")
    for rel in (path + ".py", path + "/__init__.py"):
        if rel in sources:
            return rel
    return None


def _platform_branch(test):
    """An `if` on sys.platform: each branch imports its own target's face (main.py)."""
    return any(isinstance(n, ast.Attribute) and n.attr == "platform" and
               isinstance(n.value, ast.Name) and n.value.id == "sys" for n in ast.walk(test))


def _imports(tree):
    """(module name, line) of every import outside a sys.platform branch."""
    out = []

    def visit(node):
        if isinstance(node, ast.If) and _platform_branch(node.test):
            return
        if isinstance(node, ast.Import):
            out.extend((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.module, node.lineno))
            out.extend((node.module + "." + a.name, node.lineno) for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_no_shipped_module_imports_one_its_target_leaves_out(target):
    sources = source_files()
    shipped = set(manifest_files(target))
    missing = []
    for rel in sorted(shipped):
        if not rel.endswith(".py"):
            continue
        with open(sources[rel], encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for name, line in _imports(tree):
            dep = _module_file(name, sources)
            if dep is not None and dep not in shipped:
                missing.append("%s:%d imports %s" % (rel, line, name))
    assert not missing, missing


def _copy_sources(tmp_path):
    root = tmp_path / "root"
    for sub in ("firmware", "protocol", "hardware"):
        shutil.copytree(os.path.join(build.ROOT, sub), root / sub,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_a_module_in_no_manifest_is_refused(tmp_path):
    root = _copy_sources(tmp_path)
    (root / "firmware" / "hal" / "newface.py").write_text("X = 1\n")
    with pytest.raises(UserError) as e:
        build_image(str(tmp_path / "img"), root=str(root))
    assert "hal/newface.py in no target's manifest" in str(e.value)
    assert "firmware/targets/common.py" in e.value.hint


def test_a_manifest_naming_no_file_is_refused(tmp_path):
    root = _copy_sources(tmp_path)
    with open(root / "firmware" / "targets" / "pico.py", "a") as f:
        f.write('module("hal/gone.py")\n')
    with pytest.raises(UserError) as e:
        build_image(str(tmp_path / "img"), "armv6m", root=str(root))
    assert "firmware/targets/pico.py: module('hal/gone.py'): no such file" in str(e.value)
    with pytest.raises(UserError) as e:
        manifest_files("esp32", root=str(root))
    assert "unknown target 'esp32'" in str(e.value) and "pico, sim" in e.value.hint
