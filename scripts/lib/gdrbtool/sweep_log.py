"""gdrb sweep's children: probes captured, benchmarks stopped, and what each said in the logs."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import common
from .common import say, shell_join


def capture(cmd: Sequence[str], timeout: float, env: Optional[Dict[str, str]] = None) -> Tuple[int, str, str]:
    """Run CMD with no input: (exit status, stdout, stderr); 124 when it ran past TIMEOUT (as
    timeout(1) says), 127 when it cannot be started."""
    try:
        p = subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
    except OSError as e:
        return 127, "", "%s: %s" % (cmd[0], e.strerror)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        rc = 124
    return (128 - rc if rc < 0 else rc), out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line), "")


def exit_line(rc: int, why: str = "") -> str:
    """The last line of a child's log in logs/: its exit status, as a shell says it."""
    return "# exit status %d%s\n" % (rc, " (%s)" % why if why else "")


def log_entry(cmd: Sequence[str], rc: int, err: str, timeout: float = 0) -> str:
    """A child run by capture() as a log says it: its command line, its stderr, its exit status."""
    if err and not err.endswith("\n"):
        err += "\n"
    why = "stopped after %d s" % timeout if rc == 124 and timeout else ""
    return "# %s\n%s%s" % (shell_join(cmd), err, exit_line(rc, why))


def log_append(path: str, text: Union[str, bytes]) -> None:
    """TEXT appended to the log PATH as far as it fits: a log that cannot be written costs the
    log, never the sweep (an output that cannot be written is said by the stage that lost it)."""
    data = common.encode(text) if isinstance(text, str) else text
    try:
        with common.open_append(path) as f:
            f.write(data)
    except OSError:
        pass


def stop_child(child: subprocess.Popen) -> None:
    """End a running benchmark and everything it started (its own process group)."""
    def kill(sig: int) -> None:
        try:
            os.killpg(child.pid, sig)
        except OSError:
            try:
                child.send_signal(sig)
            except OSError:
                pass
    kill(signal.SIGTERM)
    try:
        child.wait(timeout=10)
    except subprocess.TimeoutExpired:
        kill(signal.SIGKILL)
        child.wait()


def new_log(path: str, text: str) -> None:
    """The log PATH started anew with TEXT (an earlier one replaced, a link refused: lost, as
    a log that cannot be written is)."""
    try:
        with common.open_new(path) as f:
            f.write(common.encode(text))
    except OSError:
        pass


def run_child(cmd: List[str], stdout: str, log: str, stopped: Callable[[], Optional[str]],
              on_tick: Optional[Callable[[], None]] = None, timeout: float = 0) -> int:
    """CMD in a session of its own (Ctrl-C reaches this tool only, which then stops the
    whole benchmark, launcher and ranks, and keeps what it measured). Its exit status, as a
    shell says it (128+N for signal N); 124 past TIMEOUT. STOPPED says the signal that
    interrupted the sweep, None while none has."""
    out = err = None
    try:
        out = common.open_new(stdout)
        err = common.open_append(log)
    except OSError as e:
        if err is None and out is not None:
            out.close()
        say("cannot write %s: %s" % (log if out else stdout, e.strerror))
        return 127
    try:
        with out, err:
            child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                     start_new_session=True)
    except OSError as e:
        log_append(log, "%s: cannot run %s: %s\n%s" % (common.prog, cmd[0], e.strerror, exit_line(127)))
        return 127
    start = time.monotonic()
    ticked = start
    why = ""
    while True:
        try:
            rc = child.wait(timeout=0.1)
            break
        except subprocess.TimeoutExpired:
            pass
        signal_name = stopped()
        if signal_name is not None or (timeout and time.monotonic() - start > timeout):
            stop_child(child)
            if signal_name is not None:
                rc, why = child.returncode, "stopped: the sweep was interrupted by " + signal_name
            else:
                rc, why = 124, "stopped after %d s" % timeout
            break
        if on_tick and time.monotonic() - ticked >= 1:
            ticked = time.monotonic()
            on_tick()
    rc = 128 - rc if rc < 0 else rc
    log_append(log, exit_line(rc, why))
    return rc
