"""The store's review tables: what people did about a report, and the labelled outcomes.

Written by ``worker.review.actions``; migration ``0006``. Times are naive UTC
in the database and aware UTC in Python (``UTCDateTime``).

- ``review_actions``: one row per action — acknowledge, assign, snooze,
  comment, resolve, run now — with who (``actor``: a user name,
  ``token:NAME`` or ``local``) and when. An action is taken on a run; when
  that run belongs to an incident (``alert_incidents``), ``incident_id`` is
  set too, so the action carries over to the incident's later runs. Rows are
  never updated or deleted: the review state is the fold of them.
- ``review_outcomes``: the label a resolve gives one run (``fixed``,
  ``expected``, ``no_action_needed``, ``false_positive``), beside a copy of what
  the run said when it was labelled — its finding, who decided it, and the
  decision model's answers — so the decision model can be measured against
  people's judgement later without re-reading the runs. One per run; a later
  resolve of the same run replaces the label.
- ``calibrations`` (migration ``0007``): the isotonic maps ``lookout calibrate``
  fits on those labels, one row per fit of one question of one decision model
  (``checks.opinion.calibration``); the newest row of each (backend, model,
  question) is the one applied. Rows are never updated: older fits stay as history.
- ``web_sessions``: the review page's logged-in sessions (migration ``0009``),
  by the SHA-256 of their id, so that logging out ends a session on the
  server: a copied cookie no longer works.
- ``list_rows`` (migration ``0019``): the review list's rows as the runs and
  incidents leave them — each automation's latest report and each open
  incident's newest run of its kind, with that run's list columns — kept by
  every writer of runs and incidents (``checks.store.list_rows``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from checks.store.run_tables import Base, UTCDateTime


class ReviewActionRow(Base):
    """One action a person (or token) took on a run.

    ``kind``: ``acknowledge``, ``assign`` (``assignee``; empty: unassigned),
    ``snooze`` (``until``), ``comment`` (``comment``), ``resolve`` (``reason``,
    optional ``comment``) or ``run_now`` (``queued_run_id``: the run it queued).
    """

    __tablename__ = "review_actions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    automation: Mapped[str] = mapped_column(String(64), index=True)
    incident_id: Mapped[int | None] = mapped_column(Integer, index=True)
    kind: Mapped[str] = mapped_column(String(16))
    actor: Mapped[str] = mapped_column(String(100))
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    assignee: Mapped[str | None] = mapped_column(String(100))
    until: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    reason: Mapped[str | None] = mapped_column(String(24))
    comment: Mapped[str | None] = mapped_column(Text)
    queued_run_id: Mapped[int | None] = mapped_column(Integer)


class ReviewOutcomeRow(Base):
    """A run labelled by a resolve, with the decision model's answers as they were.

    ``goal_met`` is P(goal met) from the second opinion (None: no valid answer);
    ``urgency`` its most probable urgency; ``flags`` the flags it set.
    """

    __tablename__ = "review_outcomes"

    run_id: Mapped[int] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    automation: Mapped[str] = mapped_column(String(64), index=True)
    incident_id: Mapped[int | None] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(String(24), index=True)
    comment: Mapped[str | None] = mapped_column(Text)
    labelled_by: Mapped[str] = mapped_column(String(100))
    labelled_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    status: Mapped[str] = mapped_column(String(16))
    finding: Mapped[str | None] = mapped_column(String(24))
    finding_source: Mapped[str | None] = mapped_column(String(16))
    backend: Mapped[str | None] = mapped_column(String(32))
    goal_met: Mapped[float | None] = mapped_column(Float)
    urgency: Mapped[str | None] = mapped_column(String(24))
    flags: Mapped[list[str]] = mapped_column(JSON)


class CalibrationRow(Base):
    """One fitted recalibration of one question of one decision model.

    ``points`` is ``{"xs": [...], "ys": [...]}`` (the map); ``scores`` what
    ``lookout calibrate`` measured when fitting (Brier, ECE, before and after).
    """

    __tablename__ = "calibrations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    backend: Mapped[str] = mapped_column(String(32), index=True)
    model: Mapped[str | None] = mapped_column(String(200))
    question: Mapped[str] = mapped_column(String(32))
    method: Mapped[str] = mapped_column(String(16))
    reviews: Mapped[int] = mapped_column(Integer)
    points: Mapped[dict[str, Any]] = mapped_column(JSON)
    scores: Mapped[dict[str, Any]] = mapped_column(JSON)
    fitted_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())


class WebSessionRow(Base):
    """One logged-in session of the review page; deleted at logout, refused after ``expires_at``.

    ``id`` is the SHA-256 hex of the session id the cookie carries (the store
    never holds a usable session id).
    """

    __tablename__ = "web_sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user: Mapped[str] = mapped_column(String(100), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), index=True)


class ListRow(Base):
    """One row the review list can show: an automation's latest report, or an open incident's run.

    ``incident_id`` is 0 for the automation's latest report (its newest
    completed or errored run; its newest skipped one when it has nothing
    else), else the open incident whose newest run of its kind (an error
    incident: a run in error; an attention one: a completed run that needs
    attention; among the runs since the one that opened it) ``run_id`` is.
    ``reported`` is 1 for a completed or errored run, 0 for a skipped one:
    what a newer run must beat, with ``scheduled_for``. The other columns are
    the run's own, copied when it ended (an ended run never changes):
    ``source`` is its service source, else the one its definition names;
    ``at`` when it finished, else its slot. Kept by ``checks.store.list_rows``.
    """

    __tablename__ = "list_rows"

    automation: Mapped[str] = mapped_column(String(64), primary_key=True)
    incident_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    # a run deleted by hand takes its row with it, as every table of a run's does
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    scheduled_for: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    reported: Mapped[int] = mapped_column(Integer)
    owner: Mapped[str | None] = mapped_column(Text)
    tags: Mapped[str] = mapped_column(Text)
    source: Mapped[str | None] = mapped_column(Text)
    flags: Mapped[str] = mapped_column(String(200))
    urgency: Mapped[str | None] = mapped_column(String(16))
    severity: Mapped[str | None] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    finding: Mapped[str | None] = mapped_column(String(24))
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
