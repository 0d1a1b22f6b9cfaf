"""Each shared constant has one home (issue 15): a fact the firmware's layers share (the
capability bits, the mechanism's routes, the flash's geometry, the key file's name, the front
panel's buttons...) is assigned in one module and imported by the others, never spelled again.
An AST scan of every module the shoe's image is built from: a module-level name assigned the
same constant value in two modules is a copy (and one of them will drift)."""

import ast
import os

from conftest import ROOT

# the same name and value in two modules that mean two different things (not one fact)
UNRELATED = {
    ("QUEUE", 4): "hal/stepper_pio.py's segments in the PIO's FIFO; link.py's commands held",
}


def _value(node):
    """The constant a module-level assignment gives (through micropython.const), else None."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "const" and \
            len(node.args) == 1:
        node = node.args[0]
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return None
    return value if isinstance(value, (int, str, bytes, tuple)) else None


def assignments():
    """{(name, repr(value)): [module files]} of the image's modules' top-level constants."""
    found = {}
    for top in ("firmware", "protocol"):
        base = os.path.join(ROOT, top)
        for folder, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if d not in ("targets", "__pycache__")]
            for name in sorted(files):
                if not name.endswith(".py"):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    tree = ast.parse(f.read())
                for node in tree.body:
                    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and
                            isinstance(node.targets[0], ast.Name)):
                        continue
                    target = node.targets[0].id
                    value = _value(node.value)
                    if target.upper() != target or value is None:
                        continue
                    key = (target, repr(value))
                    found.setdefault(key, []).append(os.path.relpath(path, ROOT))
    return found


def test_no_constant_is_spelled_in_two_modules():
    copies = {k: v for k, v in assignments().items()
              if len(v) > 1 and (k[0], ast.literal_eval(k[1])) not in UNRELATED}
    assert not copies, "constants spelled in more than one module (give each one home and " \
                       "import it): %s" % copies


def test_the_scan_sees_a_copy(tmp_path, monkeypatch):
    """The check is not blind: a copy of ROUTE_BURN in a second module is found."""
    import shutil

    import test_constants

    fw = tmp_path / "firmware"
    shutil.copytree(os.path.join(ROOT, "firmware"), fw)
    shutil.copytree(os.path.join(ROOT, "protocol"), tmp_path / "protocol")
    with open(fw / "hal" / "simmech.py", "a", encoding="utf-8") as f:
        f.write("\nROUTE_BURN = 1\n")
    monkeypatch.setattr(test_constants, "ROOT", str(tmp_path))
    found = test_constants.assignments()
    assert sorted(found[("ROUTE_BURN", "1")]) == [os.path.join("firmware", "hal", "simmech.py"),
                                                  os.path.join("firmware", "shoe", "faults.py")]
