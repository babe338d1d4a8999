"""Time shell commands round-robin under GNU ``time -v``: paired ratios, CPU time, peak RSS, load.

``roundrobin.py N REFERENCE_LABEL 'label|command' …``

Each command runs once untimed (warm-up), then N rounds run every command once in turn, so a
burst of load from elsewhere falls on every command alike. For each command: wall median
(min–max), CPU (user + system of the command and the children it waited for, median), the
largest peak RSS of one process over the rounds, and the median over rounds of its wall (and CPU)
divided by the reference command's in the same round. The load average (``/proc/loadavg``) is
written at the start, every round and at the end. A command must exit 0; its output goes to a
temporary file, shown when it fails.

With ``ROUNDROBIN_PG_CPU=1``, a column more: the CPU the local PostgreSQL server's processes
spent while each command ran (their user + system time from ``/proc``, the exited backends' and
parallel workers' through the postmaster's reaped children's time), median. It counts every
session on that server, other users' included: read it on a quiet server.

Standard library only (runs with any Python 3.11).
"""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def _pg_cpu() -> float:
    """CPU seconds of the ``postgres`` processes so far, their exited children's included."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        if comm != "postgres":
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
        if fields[1] == "1" or not Path(f"/proc/{fields[1]}").exists():  # the postmaster
            total += int(fields[13]) + int(fields[14])  # cutime, cstime: reaped backends
    return total / tick


def _seconds(text: str) -> float:
    total = 0.0
    for part in text.strip().split(":"):
        total = total * 60 + float(part)
    return total


PG_CPU = os.environ.get("ROUNDROBIN_PG_CPU") == "1"
PG_SPENT: list[float] = []  # the last _timed call's PostgreSQL CPU


def _timed(gnu_time: str, command: str, scratch: Path) -> tuple[float, float, int]:
    """Run ``command`` once under GNU time; return wall s, CPU s (user + sys), max RSS in KB."""
    out, report = scratch / "out.txt", scratch / "time.txt"
    pg_before = _pg_cpu() if PG_CPU else 0.0
    with out.open("wb") as sink:
        done = subprocess.run(
            [gnu_time, "-v", "-o", str(report), "bash", "-c", command],
            stdout=sink,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode != 0:
        sys.stderr.write(out.read_text(errors="replace")[-3000:])
        raise SystemExit(f"FAILED (exit {done.returncode}): {command}")
    fields = {}
    for line in report.read_text().splitlines():
        key, _, value = line.strip().rpartition(": ")
        fields[key] = value
    if PG_CPU:
        PG_SPENT[:] = [_pg_cpu() - pg_before]
    wall = _seconds(fields["Elapsed (wall clock) time (h:mm:ss or m:ss)"])
    cpu = float(fields["User time (seconds)"]) + float(fields["System time (seconds)"])
    return wall, cpu, int(fields["Maximum resident set size (kbytes)"])


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        sys.stderr.write(__doc__ or "")
        return 2
    rounds, reference = int(argv[0]), argv[1]
    commands = [entry.split("|", 1) for entry in argv[2:]]
    labels = [label for label, _ in commands]
    if reference not in labels:
        raise SystemExit(f"the reference {reference!r} is none of the labels")
    gnu_time = shutil.which("time")
    if gnu_time is None:
        raise SystemExit("needs GNU time (Debian package 'time')")
    loads = [_load()]
    cpu_model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.machine(),
    )
    when = time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())
    print(
        f"round-robin, {rounds} rounds after 1 warm-up, {when}"
        f"; nproc {os.cpu_count()}, {cpu_model}; Python {platform.python_version()}"
        f"; load at start {loads[0]:.2f}",
        flush=True,
    )
    walls: dict[str, list[float]] = {label: [] for label in labels}
    cpus: dict[str, list[float]] = {label: [] for label in labels}
    rss: dict[str, int] = dict.fromkeys(labels, 0)
    pg: dict[str, list[float]] = {label: [] for label in labels}
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        for _, command in commands:
            _timed(gnu_time, command, scratch)
        for n in range(rounds):
            for label, command in commands:
                wall, cpu, peak = _timed(gnu_time, command, scratch)
                walls[label].append(wall)
                cpus[label].append(cpu)
                rss[label] = max(rss[label], peak)
                pg[label].extend(PG_SPENT)
            loads.append(_load())
            print(f"round {n + 1}/{rounds} done, load {loads[-1]:.2f}", file=sys.stderr, flush=True)
    print(
        f"load: {loads[-1]:.2f} at the end, {statistics.median(loads):.2f} median over rounds"
        f" ({min(loads):.2f}-{max(loads):.2f})"
    )
    print()
    head = f"{'command':<56} {'wall s':>7} {'(min-max)':>13} {'CPU s':>6} {'RSS MB':>7}"
    print(head + f" {'wall/ref':>8} {'CPU/ref':>8}" + (f" {'PG CPU s':>8}" if PG_CPU else ""))
    for label in labels:
        w, c = walls[label], cpus[label]
        ratio = statistics.median(a / b for a, b in zip(w, walls[reference], strict=True))
        cpu_ratio = statistics.median(
            a / b for a, b in zip(c, cpus[reference], strict=True) if b > 0
        )
        print(
            f"{label[:56]:<56} {statistics.median(w):7.2f} {f'({min(w):.2f}-{max(w):.2f})':>13}"
            f" {statistics.median(c):6.2f} {rss[label] / 1024:7.0f} {ratio:8.2f} {cpu_ratio:8.2f}"
            + (f" {statistics.median(pg[label]):8.2f}" if PG_CPU else "")
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
