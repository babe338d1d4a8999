"""Who may do what: the one check of a request's role, used by the pages and the API alike.

Every route that needs a login depends on ``requires(ROLE, WHAT)`` (or calls
``ensure`` when the role depends on the request's content, as the page's
action form, whose ``run_now`` button needs more than its other buttons).
The roles (``checks.settings.review.Role``) nest: ``viewer`` reads,
``reviewer`` also acts on runs, ``admin`` also runs automations now. A
request whose identity's role is too low gets 403 with a message naming the
role needed: JSON on the API, the error page on the pages (the app's
handlers). Templates only hide what a role cannot use (``can``); this check
is what counts.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import HTTPException, Request

from checks.settings.review import Role
from worker.web.auth import Identity, identity_of

READ = "reading the reports"
ACT = "acting on a run"
RUN_NOW = "running an automation now"


def ensure(identity: Identity, needed: Role, what: str) -> None:
    """Raise 403 unless ``identity``'s role includes ``needed``.

    Args:
        identity: who the request acts as.
        needed: the least role allowed.
        what: what is asked, for the message ("acting on a run").

    Raises:
        HTTPException: 403, ``WHAT needs the ROLE role; NAME has the ROLE role``.
    """
    if not identity.role.allows(needed):
        raise HTTPException(
            status_code=403,
            detail=f"{what} needs the {needed} role; {identity.name} has the {identity.role} role",
        )


def requires(needed: Role, what: str) -> Callable[[Request], Identity]:
    """Return a FastAPI dependency: the request's identity, once its role includes ``needed``.

    Nobody known: 401 on the API and ``/metrics``, the login page on the pages
    (``worker.web.auth.identity_of``); a role too low: 403 (``ensure``).
    """

    def dependency(request: Request) -> Identity:
        identity = identity_of(request)
        ensure(identity, needed, what)
        return identity

    dependency.__name__ = f"requires_{needed}"
    return dependency


def can(identity: Identity | None, needed: str) -> bool:
    """Whether ``identity`` may do what the role named ``needed`` may (templates hide buttons)."""
    return identity is not None and identity.role.allows(Role(needed))
