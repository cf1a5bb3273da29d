"""Run a profile of gdrbench benchmarks and collect everything in one results directory.

  gdrb sweep [options]

With no options: this host, 2 ranks, the quick profile: every point-to-point benchmark that
applies here from 8 B to 1 GiB (device memory where nvidia-smi lists a GPU, the verbs
benchmarks where /sys/class/infiniband lists an RDMA device, binaries that are built).
Inside a Slurm allocation (SLURM_JOB_ID set) it launches with srun on the allocated nodes.
Writes results/<UTC date>-<label>/ (in the source tree's results/ when run from a writable
source tree, else under the current directory, never into an installed prefix):
  results.csv   every row (schema: results/README.md), plus a 'failed' row for each size a
                failing benchmark did not measure; complete after Ctrl-C too
  meta.json     hosts, kernel, GPU driver, CUDA, MPI, rdma-core and gdrbench versions, GPUs
                and NICs with PCI ids, port rates, every command line and each step's outcome
  logs/         per step: NN-<bench>-<mem>.log (command line, stderr, exit status), .out (the
                table); the same for the doctor, the environment probes and the stages after
                the steps: doctor.log, node-info.log, plot.log, accept.log, report.log
  plots/        gdrb-plot's figures (PNG and SVG)
  summary.md, report.html   gdrb-report: environment, a table per benchmark with both paths
                side by side, the figures embedded in the HTML, the verdict on top
  verdict.json, verdict.xml when the profile has rules (gdrb-accept; JUnit XML for CI)
  doctor.json   gdrb_doctor --json (gdrb_doctor_mpi: once on every node), where the profile
                names it and it is built
  results.counters.csv   every step's NIC and PCIe counters, each rank's first and last readings
                (docs/counters.md); not rows of results
  pairs.csv, pairs-ranks.csv, pairs-[lat-]<mem>-<size>-<path>.csv   an all-pairs benchmark's
                (gdrb_mpi_pairs) rows, rank table and matrices (docs/pairs.md); its rows are
                not in results.csv
Progress on stderr: [3/24] gdrb_write_bw mem=device 8B..1GiB  41 s  ETA 3 min

Options:
  --profile P        quick (default), full, a shipped acceptance profile (gdr-effectiveness,
                     nccl-gdr, ib-ndr400, ib-hdr200, roce-200g, roce-400g, pairs) or a
                     profile file
  --sku NAME         accept one node of a SKU (a100, h100, h200, b200; docs/skus.md): its node
                     profile hgx-NAME, and before the first benchmark gdrb inventory on the
                     doctor's report: a part that differs ends the sweep (exit 1)
  --launcher L       mpirun or srun (default srun inside a Slurm allocation, else mpirun)
  --hosts A,B        hosts, optionally with slots (A:8,B:8); rank i pairs with rank i+N/2,
                     so with N ranks spread evenly each pair crosses hosts
  --hostfile F       hosts from a file (Open MPI or Slurm format; first word of each line)
  --np N             ranks (default 2; even)
  --launcher-args S  more arguments for mpirun or srun, split at spaces (e.g. "--mpi=pmix")
  --mem LIST         only these memory kinds of the profile (the binaries' own, e.g. host,device)
  --bench LIST       only these benchmarks (mpi_bw, write_lat, ... or binary names; the MPI
                     point-to-point ones also as latency, bw, bibw)
  --sizes SPEC       sizes for every benchmark instead of the profile's (e.g. 8,64K or 8:1M)
  --time-per-size S  time budget per size instead of the profile's (-t)
  --validate         check every byte (-c) in every benchmark
  --label TEXT       run label (default: the profile name)
  --out DIR          results directory (default results/<UTC date>-<label>)
  --bin-dir DIR      look for the binaries in DIR (and DIR/mpi, DIR/bench, DIR/nccl) first;
                     then the build tree next to this script, then PATH (may be given more
                     than once)
  --link-rate GBITS  port rate for "% of link" rules instead of the one read from sysfs
  --repeat-failed N  measure again, up to N times (0..10; default: the profile's
                     repeat-failed, else 2), each step whose rows fail a rule, at those
                     sizes only, before the rule fails; the repeat's rows are appended
                     with "attempt K" in their note, and a check passes when one attempt
                     passes (docs/sweeps.md, "Repeats")
  --dry-run          print what would run and why anything is skipped; run nothing
  -h, --help         this help
Exit: 0 every step ok or unsupported here (and the verdict passes), 1 a step failed (and
was not measured again whole by a repeat), a row is failed or invalid-data, the verdict fails or is INVALID, or an output (meta.json, the
plots, the verdict, summary.md, report.html) could not be written (said once; the results
already written stay, and the last line names only the files written), or a step's rows
could not be appended to results.csv (the sweep stops: they stay in its logs/ file, named),
2 bad usage (one line naming the option and the accepted form), 130 interrupted (the CSV
holds every row measured until then).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import replace
from typing import Dict, List, Optional, Set, Tuple

from . import accept, common, pairs as pairs_mod, profile as profile_mod
from .common import (EXIT_FAIL, EXIT_INTERRUPTED, GDRB, TREE, Stop, duration, failure, say, shell_join,
                     size_fmt, write_all)
from .sweep_launch import Host, Placement, find_bin, placement, probe
from .sweep_log import capture, exit_line, first_line, log_append, log_entry, new_log, run_child
from .sweep_meta import jn, js, link_rate_of, meta_text, read_nodes
from .sweep_options import Options, parse_args
from .sweep_plan import Plan, Skip, Step, dry_run, estimate, is_pairs, plan, step_command
from .sweep_results import (append_atomically, claim_results_dir, counters_path, keep_counters, keep_pairs,
                            make_dir, merge_rows)

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


# --- the sweep --------------------------------------------------------------------------------

class Sweep:
    def __init__(self, o: Options, p: Plan, host: Host, where: Placement, command: str,
                 rules: Optional[List[profile_mod.Rule]] = None, repeat: int = 0):
        self.o, self.p, self.host, self.where, self.command = o, p, host, where, command
        self.rules, self.repeat = rules or [], repeat
        self.csv_lines = 1           # results.csv's lines: its header, then each step's rows
        self.spans: List[Tuple[int, int, Step, int]] = []   # (first line, last line, first attempt's step, attempt)
        self.failed_steps: Set[int] = set()            # steps failed (or invalid-data) and not repeated ok
        self.interrupted = False
        self.stop_signal = ""       # the signal that interrupted the sweep: SIGINT, SIGTERM or SIGHUP
        self.meta_failed = False
        self.meta: Dict[str, object] = {}
        self.tty = sys.stderr.isatty()
        self.out = self.csv = ""
        self.stage_logs: List[Tuple[str, bytes]] = []   # written after the last stage

    def log_path(self, name: str) -> str:
        return os.path.join(self.out, "logs", name)

    def probed(self, cmd: List[str], timeout: float) -> Tuple[int, str, str]:
        """capture() of a probe of the environment, kept in logs/node-info.log."""
        rc, out, err = capture(cmd, timeout)
        log_append(self.log_path("node-info.log"), log_entry(cmd, rc, err, timeout))
        return rc, out, err

    # Ctrl-C (or SIGTERM, SIGHUP) ends the sweep cleanly: the step running is stopped, its
    # complete rows are kept, and meta.json, the plots and the summary are still written.
    def _on_signal(self, signum, frame) -> None:
        self.interrupted = True
        # The first one names the interruption: a scheduler's SIGTERM is not a Ctrl-C.
        self.stop_signal = self.stop_signal or signal.Signals(signum).name

    def trap_signals(self) -> None:
        for sig in STOP_SIGNALS:
            # A signal ignored when the sweep started stays ignored (as a shell's trap leaves it).
            if signal.getsignal(sig) != signal.SIG_IGN:
                signal.signal(sig, self._on_signal)

    def results_dir(self) -> None:
        self.out = claim_results_dir(self.o.out, self.p.label)
        self.csv = os.path.join(self.out, "results.csv")

    def command_line(self, line: str) -> None:
        """LINE appended to commands.txt, as far as it can be (log_append)."""
        log_append(os.path.join(self.out, "commands.txt"), line + "\n")

    def write_meta(self) -> None:
        """meta.json, whole or not at all; a failure is said once, and the sweep then exits 1."""
        try:
            # Said once: the first failure is the one to fix.
            write_all([(os.path.join(self.out, "meta.json"), meta_text(self.meta))], quiet=self.meta_failed)
        except Stop:
            self.meta_failed = True

    def stopped(self) -> Optional[str]:
        return self.stop_signal if self.interrupted else None

    def skip(self, binary: str, mem: str, reason: str) -> None:
        self.p.skipped.append(Skip(binary, mem, reason))
        self.meta["skipped"] = self.skipped_json()

    def skipped_json(self) -> List[Dict[str, Optional[str]]]:
        return [{"binary": js(k.binary), "mem": js(k.mem), "reason": js(k.reason)} for k in self.p.skipped]

    def doctor(self) -> None:
        d = self.p.doctor
        dbin = find_bin(d.binary, self.o.bin_dirs)
        if not dbin:
            self.skip(d.binary, "", "not built here (not in the build tree or on PATH)")
            return
        cmd = [dbin, "--json"] + d.args.split()
        if os.path.basename(dbin) == "gdrb_doctor_mpi":
            # The doctor on every node of the job, once each (docs/doctor.md): what the
            # report's doctor table and the suspects' causes read.
            cmd = self.where.per_node(cmd)
        self.command_line(shell_join(cmd))
        report = os.path.join(self.out, "doctor.json")
        log = os.path.join(self.out, "logs", "doctor.log")
        new_log(log, "# %s\n" % shell_join(cmd))
        drc = run_child(cmd, report, log, self.stopped, timeout=300)
        if not os.path.islink(report) and os.path.isfile(report) and os.path.getsize(report) > 0:
            self.meta["doctor"] = {"binary": dbin, "exit": drc, "file": "doctor.json"}
            say("gdrb_doctor: exit %d%s, kept as doctor.json" % (drc, " (a check fails)" if drc == 1 else ""))
        else:
            try:
                os.unlink(report)
            except OSError:
                pass
            self.meta["doctor"] = {"binary": dbin, "exit": drc, "file": None}
            say("gdrb_doctor wrote nothing (exit %d); see logs/doctor.log" % drc)
        self.write_meta()

    def inventory(self) -> bool:
        """The node's parts against --sku, from doctor.json, before anything is measured: the
        parts on stdout; False where one differs or there is no report to judge."""
        from . import inventory
        report = os.path.join(self.out, "doctor.json")
        if not (self.meta.get("doctor") or {}).get("file"):
            say("inventory --sku %s: no doctor report to judge (see logs/doctor.log): nothing measured" % self.o.sku)
            return False
        try:
            c = inventory.check(inventory.sku(self.o.sku), inventory.read_doctor(report))
        except Stop as e:
            say("inventory --sku %s: %s: nothing measured" % (self.o.sku, e.message))
            return False
        sys.stdout.write(c.text())
        sys.stdout.flush()
        self.meta["inventory"] = {"sku": self.o.sku, "verdict": "FAIL" if c.failed else "PASS",
                                  "differs": [js("%s: %s" % (p.what, p.text)) for p in c.failed]}
        if c.failed:
            say("inventory --sku %s: %d part(s) differ from the SKU: nothing measured" % (self.o.sku, len(c.failed)))
        return not c.failed

    def progress(self, text: str, final: bool) -> None:
        """A progress line on stderr: refreshed in place on a terminal, one line each otherwise."""
        if self.tty:
            sys.stderr.write("\r\033[K" + text + ("\n" if final else ""))
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def steps(self, gpu_name: str, run_start: float, steps: Optional[List[Step]] = None) -> Tuple[int, bool]:
        """Run every step (or STEPS: a repeat's); (the index of the first step not run, whether
        one failed)."""
        steps = self.p.steps if steps is None else steps
        total = len(steps)
        est_done = 0
        i = 0
        for k, s in enumerate(steps, start=1):
            if self.interrupted:
                return i, bool(self.failed_steps)
            i = s.n
            log = os.path.join(self.out, "logs", s.base + ".log")
            part = os.path.join(self.out, "logs", s.base + ".csv")
            if is_pairs(s):
                # Its rank table and matrices are written beside its CSV: a directory of its own.
                make_dir(os.path.join(self.out, "logs", s.base))
                part = os.path.join(self.out, "logs", s.base, pairs_mod.PAIRS_CSV)
            cmd = step_command(s, part, self.p.label, self.where, self.o.np)
            cmdline = shell_join(cmd)
            self.command_line(cmdline)
            new_log(log, "# %s\n" % cmdline)

            elapsed = int(time.monotonic() - run_start)
            # Scale the remaining estimate by how the finished steps compared with theirs.
            remaining = self.p.estimate - est_done
            if est_done > 0 and elapsed > 0:
                remaining = remaining * elapsed // est_done
            step_start = time.monotonic()

            def line(remaining=remaining) -> str:
                now = time.monotonic()
                left = max(remaining - int(now - step_start), 0)
                return "[%d/%d] %s %s  %d s  ETA %s" % (k, total, s.title, s.range, int(now - run_start),
                                                        duration(left))

            self.progress(line(), False)
            rc = run_child(cmd, os.path.join(self.out, "logs", s.base + ".out"), log, self.stopped,
                                on_tick=(lambda: self.progress(line(), False)) if self.tty else None)
            secs = int(time.monotonic() - step_start)
            est_done += s.estimate

            ranks = int(s.np or self.o.np)
            step_hosts = min(len(self.where.names), ranks)
            if s.launch == "local":
                ranks = step_hosts = 1
            reason = self.reason(log, s.name)
            if self.interrupted:
                fill, note, status = "none", "", "interrupted"
            elif rc == 77:
                fill, status = "unsupported", "unsupported"
                note = "unsupported here: " + (reason or "see logs/%s.log" % s.base)
            else:
                fill = "failed"
                note = "gdrb-sweep: %s exited %d without a row for this size; %ssee logs/%s.log" % (
                    s.name, rc, reason + "; " if reason else "", s.base)
                status = "failed" if rc != 0 else "ok"
            if s.attempt > 1:
                note += "; " + accept.attempt_note(s.attempt)    # the rows it fills are the repeat's too
            if is_pairs(s):
                # Its counter file first: keeping the pairs files removes the step's folder.
                counters = keep_counters(part, self.out)
                rows, dropped = keep_pairs(os.path.dirname(part), s.mem, self.out)
                filled = 0
                if status == "ok" and not rows:
                    status = "failed"
            else:
                m = merge_rows(part, s, fill, note, ranks, step_hosts, gpu_name, self.p.version)
                why = append_atomically(self.csv, m.rows + m.filled)
                if why:
                    # The step file is the only copy of what was measured: kept, and the sweep
                    # stops (the next steps would meet the same disk).
                    raise failure("cannot append the rows of step %d (%s) to %s: %s; %s" % (
                        s.n, s.title, self.csv, why,
                        "its rows stay in %s (%d measured)" % (part, len(m.rows)) if os.path.isfile(part)
                        else "nothing of it is left to keep"))
                try:
                    os.unlink(part)
                except OSError:
                    pass
                rows, filled, dropped = len(m.rows), len(m.filled), m.dropped
                if rows + filled:
                    origin = next((x for _, _, x, _ in self.spans if x.n == s.n), s) if s.attempt > 1 else s
                    self.spans.append((self.csv_lines + 1, self.csv_lines + rows + filled, origin, s.attempt))
                    self.csv_lines += rows + filled
                # The NIC and PCIe counters read around its sizes: beside results.csv, never in it.
                counters = keep_counters(part, self.out)
            counter_rows, why = counters
            if why:
                say("the counter rows of step %d (%s) stay in %s: %s" % (s.n, s.title, counters_path(part), why))
            if status in ("ok", "unsupported") and filled and (status == "ok" or rows):
                status = "failed"
            if status == "ok" and not is_pairs(s) and any(",invalid-data," in r for r in m.rows):
                status = "invalid-data"
            if status in ("failed", "invalid-data"):
                self.failed_steps.add(s.n)
            elif s.attempt > 1 and status == "ok":
                self.failed_steps.discard(s.n)     # measured again, whole

            detail = "%s, %d row%s" % (status, rows, "" if rows == 1 else "s")
            if filled:
                detail += ", %d missing rows written as %s" % (filled, fill)
            if dropped:
                detail += ", %d incomplete rows dropped" % dropped
            if status != "ok":
                detail += " (exit %d; logs/%s.log)" % (rc, s.base)
            self.progress("[%d/%d] %s: %s, %d s" % (k, total, s.title, detail, secs), True)
            self.show_table(os.path.join(self.out, "logs", s.base + ".out"))

            self.meta["steps"].append({
                "n": s.n, "attempt": s.attempt, "binary": js(s.name), "args": js(s.args), "benchmark": js(s.bench), "mem": js(s.mem),
                "sizes": js(s.sizes), "command": js(cmdline), "exit": rc, "status": status, "rows": rows,
                "filled": filled, "dropped": dropped, "counter_rows": counter_rows, "seconds": secs,
                "log": "logs/%s.log" % s.base})
            self.write_meta()
            i = s.n + 1
        return i, bool(self.failed_steps)

    # --- repeats -----------------------------------------------------------------------------

    def repeats(self, gpu_name: str, run_start: float) -> bool:
        """The steps whose rows fail a rule, measured again at those sizes, up to self.repeat
        times, while a check fails on every attempt (docs/sweeps.md, "Repeats"); whether a step
        failed and was not measured again whole."""
        for attempt in range(2, self.repeat + 2):
            again = [] if self.interrupted else self.to_repeat(attempt)
            if not again:
                break
            say("repeat %d of %d: %s: rows that fail a rule, measured again" % (attempt - 1, self.repeat, "; ".join(
                "step %d (%s) at %s" % (s.n, s.name + (" mem=" + s.mem if s.mem else ""),
                                        ", ".join(size_fmt(int(x)) for x in s.sizes.split(","))) for s in again)))
            self.steps(gpu_name, run_start, again)
        return bool(self.failed_steps)

    def to_repeat(self, attempt: int) -> List[Step]:
        """The steps (attempt ATTEMPT) of the rows whose checks fail on every attempt so far,
        each at its failed sizes, in the order of the first attempt."""
        try:
            rows = list(common.read_csv(self.csv))
        except Stop:
            say("no repeat: %s cannot be read again (said above)" % self.csv)
            return []
        spans = {n: (origin.n, a) for first, last, origin, a in self.spans for n in range(first, last + 1)}
        judge = accept.Judge(self.rules, self.csv, float(self.o.link_rate) if self.o.link_rate else None,
                             None, self.out, spans if any(a > 1 for _, _, _, a in self.spans) else {})
        judge.read(iter(rows))
        lines = judge.failed_lines()
        size_of = {n: f[common.schema().index["size_bytes"]] for n, f in rows if n in lines}
        sizes: Dict[int, Set[int]] = {}
        for first, last, origin, _ in self.spans:
            hit = [int(size_of[n]) for n in range(first, last + 1)
                   if n in size_of and common.integer(size_of[n]) is not None]
            if hit and not is_pairs(origin):
                sizes.setdefault(origin.n, set()).update(hit)
        again = [replace(s, attempt=attempt, sizes=",".join(str(x) for x in sorted(sizes[s.n])))
                 for s in self.p.steps if s.n in sizes]
        for s in again:
            estimate(s, int(s.np or self.o.np))
        return again

    def stage(self, name: str, cmd: List[str], keep_stdout: bool = False) -> Tuple[int, bytes]:
        """A stage after the steps (gdrb-plot, gdrb-accept, gdrb-report): its stderr on the
        terminal and, with its command line and exit status, in logs/NAME.log (written after the
        last stage). (exit status, its stdout when KEEP_STDOUT; else that goes to the terminal,
        or nowhere for the report)"""
        text = [("# %s\n" % shell_join(cmd)).encode("utf-8", "surrogateescape")]
        stdout = b""
        sink = subprocess.PIPE if keep_stdout else (subprocess.DEVNULL if name == "report" else None)
        sys.stderr.flush()
        try:
            proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.PIPE)
        except OSError as e:
            proc = None
            line = "%s: cannot run %s: %s\n" % (common.prog, cmd[0], e.strerror)
            sys.stderr.write(line)
            text.append(line.encode("utf-8", "surrogateescape"))
            rc = 127
        if proc and keep_stdout:
            # A short stderr: said whole once the stage ends, before its stdout is shown.
            stdout, err = proc.communicate()
            text.append(err)
            sys.stderr.buffer.write(err)
        elif proc:
            for line in proc.stderr:       # as it comes
                text.append(line)
                sys.stderr.buffer.write(line)
                sys.stderr.flush()
            proc.stderr.close()
        if proc:
            rc = proc.wait()
            rc = 128 - rc if rc < 0 else rc
        sys.stderr.flush()
        if text[-1] and not text[-1].endswith(b"\n"):
            text.append(b"\n")
        text.append(exit_line(rc).encode())
        self.stage_logs.append((self.log_path(name + ".log"), b"".join(text)))
        return rc, stdout

    @staticmethod
    def reason(log: str, name: str) -> str:
        """The binary's own word on why: its first "NAME: ..." line on stderr."""
        try:
            with open(log, encoding="utf-8", errors="replace") as f:
                for line in f:
                    line = line.rstrip("\n")
                    if not line.startswith("#") and line.startswith(name + ":"):
                        return re.sub(r"^[^:]*: ", "", line, count=1)
        except OSError:
            pass
        return ""

    @staticmethod
    def show_table(path: str) -> None:
        try:
            with open(path, "rb") as f:
                table = f.read()
        except OSError:
            return
        if table:
            show(table + b"\n")

    def run(self) -> int:
        p, o = self.p, self.o
        self.results_dir()
        say("profile %s: %d steps, about %s; results in %s" % (p.profile_name, len(p.steps),
                                                              duration(p.estimate), self.out))
        # What planning ran (nvidia-smi -L, scontrol) before the results directory existed.
        log_append(self.log_path("node-info.log"), "".join(self.host.log + self.where.log))
        self.trap_signals()
        launcher = self.where.launcher
        git = ""
        if TREE and os.path.exists(os.path.join(str(TREE), ".git")):
            rc, git, _ = self.probed(["git", "-C", str(TREE), "describe", "--always", "--dirty"], timeout=60)
            git = first_line(git) if rc == 0 else ""
        lv = ""
        if launcher in self.host.launchers:
            lv = first_line(self.probed([launcher, "--version"], timeout=60)[1])
        self.meta = {
            "schema": "gdrbench-meta-1", "gdrbench_version": js(p.version), "gdrbench_git": js(git),
            "label": js(p.label), "profile": js(p.profile_name), "profile_file": js(p.profile_file),
            "profile_description": js(p.description), "sweep_command": js(self.command),
            "status": "running", "exit_status": None,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "finished": None,
            "launcher": launcher, "launcher_version": js(lv), "launcher_args": js(o.launcher_args),
            "np": int(o.np), "hosts": list(self.where.names), "repeat_failed": self.repeat,
            "slurm_job_id": js(os.environ.get("SLURM_JOB_ID", "")), "link_rate_gbps": None,
            "capabilities": {"gpu": self.host.gpu, "rdma": self.host.rdma},
            "nodes": [], "node_info_error": None, "doctor": None, "steps": [], "skipped": self.skipped_json()}

        nodes, error = read_nodes(self.where, self.host, self.probed)
        self.meta["nodes"], self.meta["node_info_error"] = nodes, js(error)
        self.meta["link_rate_gbps"] = jn(o.link_rate) if o.link_rate else (link_rate_of(nodes[0]) if nodes else None)
        self.write_meta()

        if p.doctor and not self.interrupted:
            self.doctor()
        if o.sku and not self.interrupted and not self.inventory():
            self.meta["status"], self.meta["exit_status"] = "inventory", EXIT_FAIL
            self.write_meta()
            return EXIT_FAIL

        gpu_name = ""
        if self.host.gpu:
            gpu_name = first_line(self.probed(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                              timeout=60)[1])
        run_start = time.monotonic()
        i, failed = self.steps(gpu_name, run_start)
        if self.repeat and self.rules and not self.interrupted:
            failed = self.repeats(gpu_name, run_start)
        return self.finish(i, failed, run_start)

    def finish(self, i: int, failed: bool, run_start: float) -> int:
        p, o, out = self.p, self.o, self.out
        self.meta["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        if self.interrupted:
            self.meta["status"] = "interrupted"
            self.meta["interrupted_by"] = self.stop_signal
            for s in p.steps[max(i, 1) - 1:]:
                self.skip(s.name, s.mem, "not run: the sweep was interrupted by " + self.stop_signal)
            say("interrupted by %s: %s keeps every row measured so far" % (self.stop_signal, self.csv))
        else:
            self.meta["status"] = "complete"
        exit_status = EXIT_FAIL if failed else 0
        if not p.steps:
            say("nothing ran: every line of profile %s was skipped here (reasons in %s/summary.md)"
                % (p.profile_name, out))
            exit_status = EXIT_FAIL
        if self.interrupted:
            exit_status = EXIT_INTERRUPTED
        self.meta["exit_status"] = exit_status
        self.write_meta()

        # Each stage says itself what it could not write; an output lost is a failed sweep.
        sys.stdout.flush()
        lost = False
        if shutil.which("gnuplot"):
            lost = self.stage("plot", [str(GDRB), "plot", out])[0] != 0
        else:
            text = "gnuplot not found: no plots (install gnuplot-nox; then gdrb plot %s)" % out
            say(text)
            self.stage_logs.append((self.log_path("plot.log"), ("# %s\n" % text).encode()))
        if p.has_rules:
            cmd = [str(GDRB), "accept"] + (["--link-rate", o.link_rate] if o.link_rate else [])
            vrc, verdict = self.stage("accept", cmd + [out, p.profile_file], keep_stdout=True)
            show(verdict)
            # 1: a rule fails (or the verdict could not be written: it said so); 3: INVALID values.
            if vrc in (1, 3):
                exit_status = EXIT_INTERRUPTED if self.interrupted else EXIT_FAIL
            if vrc == 2 or vrc > 3 or vrc < 0:
                say("no verdict (gdrb-accept exit %d)" % (128 - vrc if vrc < 0 else vrc))
            if verdict:
                try:
                    write_all([(os.path.join(out, "verdict.txt"), verdict)])
                except Stop:
                    lost = True
            self.write_meta()
        if self.stage("report", [str(GDRB), "report", out])[0] != 0:
            lost = True
        # The stages' logs last: on a full disk an output gets the space before a log does.
        for path, text in self.stage_logs:
            log_append(path, text)
        if (lost or self.meta_failed) and exit_status == 0:
            exit_status = EXIT_FAIL
        # Name only what is there: a stage that could not write said so above.
        written = [os.path.join(out, f) for f in ("summary.md", "report.html")
                   if os.path.isfile(os.path.join(out, f)) and os.path.getsize(os.path.join(out, f)) > 0]
        say("done in %s: %s" % (duration(time.monotonic() - run_start),
                                ", ".join(written) or self.csv + " (no summary.md or report.html: see above)"))
        return exit_status


def show(data: bytes) -> None:
    """DATA on stdout, a copy of what the results directory holds: a reader that went away
    (gdrb sweep | head) costs the copy, never the sweep. stdout then goes to /dev/null, for the
    stages after the steps too."""
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except OSError:
            pass


def main(argv: List[str]) -> int:
    # Until the results directory exists, Ctrl-C just ends the tool (no traceback).
    if signal.getsignal(signal.SIGINT) == signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    o = parse_args(argv)
    if o.help:
        common.print_help(__doc__)
        return 0
    profile_file = common.resolve_profile(o.profile)
    prof = profile_mod.load(profile_file)
    this_host = socket.gethostname()
    where = placement(o, dict(os.environ), this_host)
    host = probe(os.environ.get("GDRB_SYSFS", "/sys"))
    p = plan(o, prof, profile_file, host, where.launcher)
    if o.dry_run:
        dry_run(p, where, o)
        return 0
    command = shell_join([sys.argv[0], "sweep"] + list(argv))
    repeat = int(o.repeat_failed) if o.repeat_failed else (
        prof.repeat_failed if prof.repeat_failed is not None else profile_mod.REPEAT_DEFAULT)
    return Sweep(o, p, host, where, command, prof.rules, repeat).run()
