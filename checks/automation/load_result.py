"""What a load of automation files gives: the good automations, every problem, and places.

The places (where each value is in its file) are found only when asked, from
the file's bytes kept with each good automation: ``lookout validate`` points
into the SQL with them, and no other caller pays for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from checks.automation.model import Automation
from checks.errors import AutomationError
from checks.fields.yaml_places import Place, PlaceFields, place_fields
from checks.fields.yaml_tree import Loc, YamlTree


@dataclass(frozen=True)
class Written:
    """One automation's file as it was read, and where the automation is in it.

    Attributes:
        raw: the file's bytes (shared by every automation of the file).
        prefix: the automation's location in the file's data: ``()`` for a
            file of one automation, ``("automations", i)`` otherwise.
    """

    raw: bytes
    prefix: Loc


def _places_in(tree: YamlTree, prefix: Loc) -> dict[Loc, PlaceFields]:
    """Where the automation at ``prefix`` has values: itself, ``source``, ``notify``, checks'."""
    depth = len(prefix)
    return {
        loc[depth:]: found
        for loc, node in tree.values.items()
        if loc[:depth] == prefix
        and loc[depth : depth + 1] in (("checks",), ("source",), ("notify",), ())
        and (found := place_fields(node, tree.lines)) is not None
    }


@dataclass
class LoadResult:
    """What ``load_automations`` found.

    Attributes:
        automations: the automations with no problem, in file then position order.
        errors: every problem in every file, each with path, line, column and field.
        warnings: lines to show that do not stop anything (e.g. goal-only automations).
        written: for each good automation (by name), its file as read and
            where the automation is in it (``()``, or ``("automations", i)``),
            so that ``place_of`` can find its values without every load
            keeping every value's position. Empty when loaded with
            ``positions=False``.
        places: for each good automation (by name) whose places were asked
            for, where its checks' values are in its file, keyed by location
            under the automation (``("checks", 0, "sql")``), as the fields of
            a ``Place``; filled by ``place_of`` from ``written``, one file at a
            time (``lookout validate`` points into the SQL with them).

    """

    automations: list[Automation] = field(default_factory=list)
    errors: list[AutomationError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    written: dict[str, Written] = field(default_factory=dict)
    places: dict[str, dict[Loc, PlaceFields]] = field(default_factory=dict)
    _last_tree: tuple[bytes, YamlTree] | None = field(default=None, repr=False, compare=False)

    def place_of(self, automation: Automation, loc: Loc) -> Place:
        """Where ``loc`` (under ``automation``) is, or the nearest enclosing place known."""
        known = self._places(automation.name)
        while loc and loc not in known:
            loc = loc[:-1]
        found = known.get(loc)
        return Place(*found) if found is not None else Place(automation.line, 1)

    def _places(self, name: str) -> dict[Loc, PlaceFields]:
        """The places of one automation, found (for every automation of its file) when asked."""
        known = self.places.get(name)
        if known is not None:
            return known
        written = self.written.get(name)
        if written is None:
            return {}
        # The file as it was read, composed again: the same nodes, so the same places. The
        # last file's tree is kept: its other automations are usually asked about next.
        last = self._last_tree
        if last is None or last[0] is not written.raw:
            last = self._last_tree = (written.raw, YamlTree.parse(written.raw))
        known = self.places[name] = _places_in(last[1], written.prefix)
        return known

    def by_name(self, name: str) -> Automation:
        """Return the automation called ``name``.

        Raises:
            KeyError: no good automation has that name.

        """
        for automation in self.automations:
            if automation.name == name:
                return automation
        raise KeyError(name)
