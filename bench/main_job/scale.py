"""Write the comparison checks K times over, for the per-check growth of the main-job benchmark.

``lookout DIR K same|distinct``: the three automations of ``bench/main_job/automations`` with every
check repeated K times (names ``… copy N``). ``same`` keeps each copy's SQL as it is, so a run
finds identical queries (Soda computes one metric for identical checks too); ``distinct`` wraps
copy N in ``SELECT * FROM (…) AS copy_N``, so every copy is a query of its own.

``soda FILE K``: Soda v3's ``checks.yml`` with every check repeated K times (names ``… copy N``).

Standard library only.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _items(body: str) -> list[str]:
    """The list items of one block (``  - …`` and their indented lines), comments dropped."""
    body = re.sub(r"(?m)^\s*#.*\n", "", body)
    return [
        item.rstrip("\n") for item in re.split(r"(?m)^(?=  - )", body) if item.startswith("  - ")
    ]


def lookout(folder: Path, copies: int, mode: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for path in sorted((HERE / "automations").glob("*.yaml")):
        head, _, body = path.read_text(encoding="utf-8").partition("checks:\n")
        out = [head + "checks:"]
        for n in range(copies):
            for item in _items(body):
                item = re.sub(r"(?m)^(  - name: )(.*?)(\s+#.*)?$", rf"\g<1>\g<2> copy {n}", item)
                if mode == "distinct":
                    sql = re.search(r"(?ms)^    sql: (\|\n)?(.*?)\n    expect:", item + "\n")
                    assert sql is not None, item
                    text = " ".join(sql.group(2).split())
                    item = item.replace(
                        sql.group(0),
                        f"    sql: SELECT * FROM ({text}) AS copy_{n}\n    expect:",
                    )
                out.append(item)
        (folder / path.name).write_text("\n".join(out) + "\n", encoding="utf-8")


def soda(target: Path, copies: int) -> None:
    source = Path(sys.argv[4]) if len(sys.argv) > 4 else None
    text = (source or target).read_text(encoding="utf-8")
    parts = re.split(r"(?m)^(checks for \w+:)\n", text)
    out = []
    for title, body in zip(parts[1::2], parts[2::2], strict=True):
        out.append(title)
        for n in range(copies):
            for item in _items(body):
                out.append(re.sub(r"(?m)^(      name: )(.*)$", rf"\g<1>\g<2> copy {n}", item))
    target.write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    kind, where, count = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    if kind == "lookout":
        lookout(where, count, sys.argv[4])
    else:
        soda(where, count)
