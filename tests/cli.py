"""Test helper: the `facedown` command as a user runs it, in subprocesses: `facedown sim` in
the background (its port read from what it prints) and commands against it."""

import os
import re
import signal
import subprocess
import sys
import time

FACEDOWN = os.path.join(os.path.dirname(sys.executable), "facedown")


def env(**extra):
    e = dict(os.environ)
    e.pop("FACEDOWN_PORT", None)
    e.update(extra)
    return e


def run(*argv, timeout=60, input=None, **extra):
    """`facedown ARGV...`: a CompletedProcess (returncode, stdout, stderr as text)."""
    return subprocess.run([FACEDOWN] + [str(a) for a in argv], capture_output=True, text=True,
                          timeout=timeout, env=env(**extra), input=input)


class Sim:
    """`facedown sim ARGS...` running in the background: .port, .lines (what it printed so
    far), .proc; stop() ends it as Ctrl-C does."""

    def __init__(self, *argv, timeout=30, extra_env=None):
        self.argv = [str(a) for a in argv]
        self.proc = subprocess.Popen([FACEDOWN, "sim"] + self.argv, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     env=env(**(extra_env or {})),
                                     start_new_session=True)
        self.lines = []
        self.port = None
        end = time.monotonic() + timeout
        while self.port is None:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError("facedown sim ended before its port:\n" +
                                     "".join(self.lines))
            self.lines.append(line)
            m = re.search(r" on (/dev/\S+)", line)
            if m:
                self.port = m.group(1)
            if time.monotonic() > end:
                raise AssertionError("no port from facedown sim:\n" + "".join(self.lines))
        self.flash = re.search(r"\(flash (\S+?)[;,]", self.lines[-1]).group(1)
        self.device = re.search(r"virtual shoe (\S+) on", self.lines[-1]).group(1)

    def alive(self):
        return self.proc.poll() is None

    def output(self):
        """Everything it printed (after it ended)."""
        rest = self.proc.stdout.read() if self.proc.poll() is not None else ""
        return "".join(self.lines) + rest

    def stop(self, sig=signal.SIGINT, timeout=20):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        return self.proc.returncode

    def kill(self):
        """A power cut of the whole sim (the process and its MicroPython child)."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        self.proc.stdout.close()
