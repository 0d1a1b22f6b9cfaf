"""Where the firmware, protocol and data the host drives are, and the one loader that imports
the firmware into the host's process.

ROOT is the one place the host computes a root: a tree laid out as the repository is
(firmware/, protocol/, hardware/pinmap.json, profiles/, tests/scenarios/). In a checkout
(an editable install, or host/ on the path) it is the checkout; in an installed wheel it is
the package's own copy, facedown/_repo/, which pyproject.toml maps from the same folders (the
repository's folders are the only source: nothing is copied into it). FACEDOWN_FIRMWARE and
FACEDOWN_PROTOCOL still point the host at other firmware/ or protocol/ folders.

The firmware keeps its flat module names (device, session, wire, shoe, hal...): they are the
names at littlefs's root on a shoe. In the host's process they are not global names: the
firmware's module `wire` is `facedown.fw.wire`, `shoe.cards` is `facedown.fw.shoe.cards`, and
a firmware module's own `import wire` or `from shoe import cards` resolves to those (its
`__import__` is the namespace's, set in the builtins it runs with). Nothing is put on
sys.path; a host module named like a firmware module (facedown.audit, facedown.sim) and the
firmware's (facedown.fw.audit) never meet.

    from facedown.firmware import load
    wire = load("wire")                  # protocol/wire.py
    cards = load("shoe.cards")           # firmware/shoe/cards.py

The test bootstrap (tests/conftest.py) alone imports the firmware by its flat names and has
load() give those (share_flat_names).
"""

import builtins
import importlib
import importlib.machinery
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_BUNDLED = os.path.join(HERE, "_repo")
# the wheel's copy when there is one (an installed package), else the checkout around host/
ROOT = _BUNDLED if os.path.isdir(os.path.join(_BUNDLED, "firmware")) else \
    os.path.dirname(os.path.dirname(HERE))
FIRMWARE = os.environ.get("FACEDOWN_FIRMWARE", os.path.join(ROOT, "firmware"))
PROTOCOL = os.environ.get("FACEDOWN_PROTOCOL", os.path.join(ROOT, "protocol"))
SCENARIOS = os.path.join(ROOT, "tests", "scenarios")
VERSION_FILE = "version.py"  # firmware/version.py: the one version of host, firmware, protocol

NAMESPACE = "facedown.fw"
_PREFIX = NAMESPACE + "."


def version(firmware=None):
    """The release's version, as firmware/version.py says (read, not imported: pyproject.toml's
    build reads the same line)."""
    path = os.path.join(firmware or FIRMWARE, VERSION_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            m = re.search(r'^VERSION\s*=\s*"([^"]+)"', f.read(), re.M)
    except OSError:
        return "unknown"
    return m.group(1) if m else "unknown"


def _top_names(folders):
    """The firmware's top-level module and package names (its littlefs root)."""
    names = set()
    for folder in folders:
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for name in entries:
            if name.endswith(".py"):
                names.add(name[:-3])
            elif os.path.isfile(os.path.join(folder, name, "__init__.py")):
                names.add(name)
    return frozenset(names)


_TOP = _top_names((FIRMWARE, PROTOCOL))
_import = builtins.__import__


def _firmware_import(name, globals=None, locals=None, fromlist=(), level=0):
    """`__import__` inside firmware modules: the firmware's flat names to the namespace's."""
    top = name.partition(".")[0]
    if level or top not in _TOP:
        return _import(name, globals, locals, fromlist, level)
    module = _import(_PREFIX + name, globals, locals, fromlist, 0)
    return module if fromlist else sys.modules[_PREFIX + top]


_BUILTINS = dict(builtins.__dict__, __import__=_firmware_import)


class _Loader(importlib.machinery.SourceFileLoader):
    """A firmware source file, run with the namespace's builtins."""

    def exec_module(self, module):
        module.__builtins__ = _BUILTINS
        super().exec_module(module)


class _Finder:
    """Finds facedown.fw.<name> in the firmware's and protocol's folders (the namespace's
    __path__) and nowhere else."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_PREFIX):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec
        spec.loader = _Loader(spec.loader.name, spec.loader.path)
        return spec


def _namespace():
    module = sys.modules.get(NAMESPACE)
    if module is None:
        spec = importlib.machinery.ModuleSpec(NAMESPACE, None, is_package=True)
        spec.submodule_search_locations = [FIRMWARE, PROTOCOL]
        module = importlib.util.module_from_spec(spec)
        sys.modules[NAMESPACE] = module
        sys.modules["facedown"].fw = module
        sys.meta_path.insert(0, _Finder())
    return module


_FLAT = []


def share_flat_names():
    """For the test bootstrap (tests/conftest.py, and fuzz/fuzzlib.py for the fuzzing
    processes) alone, which puts the firmware's and the protocol's folders on sys.path so that
    tests import the firmware by its flat names, as on the device: from then on load() gives
    those same modules (one copy of each in the process, so a test's `scenario.ScenarioError`
    is the one the host raises). The `facedown` command, its subprocesses and an installed
    package never call it."""
    if NAMESPACE in sys.modules:  # two copies of the firmware in one process: refused
        raise RuntimeError("share_flat_names() after the firmware was loaded as %s" % NAMESPACE)
    _FLAT[:] = [True]


def firmware_dir():
    """FIRMWARE, or one line saying it is not there."""
    from .errors import UserError

    if not os.path.isdir(os.path.join(FIRMWARE, "shoe")):
        raise UserError("firmware not found at %s" % FIRMWARE,
                        hint="reinstall facedown, or set FACEDOWN_FIRMWARE to the firmware/ "
                             "folder of a Facedown checkout")
    return FIRMWARE


def load(name):
    """The firmware's (or protocol's) module `name` ("wire", "scenario", "shoe.cards"),
    imported once into the namespace."""
    from .errors import UserError

    if _FLAT:
        return importlib.import_module(name)
    _namespace()
    try:
        return importlib.import_module(_PREFIX + name)
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith(_PREFIX):
            raise
        raise UserError("the firmware's module %s was not found in %s" % (
            e.name[len(_PREFIX):], " or ".join((FIRMWARE, PROTOCOL))),
            hint="reinstall facedown, or set FACEDOWN_FIRMWARE and FACEDOWN_PROTOCOL to the "
                 "firmware/ and protocol/ folders of a Facedown checkout") from None
