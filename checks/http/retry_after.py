"""The HTTP ``Retry-After`` header (RFC 9110 §10.2.3), read as seconds to wait.

One reading for every caller: the LLM client (``checks.agent.chat_client``,
which reads OpenAI's ``retry-after-ms`` first) and the chat channels
(``worker.alerts.channel``, which falls back to Discord's JSON ``retry_after``).
Each caller keeps its own extra source and its own ceiling.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import re

_DELTA_SECONDS = re.compile(r"[0-9]+")  # RFC 9110 §10.2.3: delta-seconds = 1*DIGIT (ASCII)
_OWS = " \t"  # RFC 9110 §5.5: a field value carries no leading or trailing SP / HTAB


def parse_retry_after(value: str | None, now: dt.datetime | None = None) -> float | None:
    """Return the seconds a ``Retry-After`` value asks to wait, or None when it says nothing usable.

    Args:
        value: the header's value as received (None when the header is absent).
        now: the moment a date is measured from (timezone-aware); the current
            UTC time when None.

    Returns:
        Seconds (>= 0.0), or None. The rule (RFC 9110 §10.2.3, ``Retry-After =
        HTTP-date / delay-seconds``; dates per §5.6.7):

        - delta-seconds, a non-negative integer of ASCII digits, with surrounding
          SP/HTAB ignored: ``"120"`` → 120.0, ``" 5 "`` → 5.0. A value too large
          for a float gives ``inf``; the caller's ceiling decides what that means.
        - an HTTP-date in any of the three forms a recipient must accept
          (IMF-fixdate, RFC 850, asctime), read with ``email.utils``; a date
          without a zone is UTC, as HTTP-dates are: seconds until then, and
          0.0 for a date now or in the past.
        - anything else gives None: absent, empty, ``"-3"``, ``"1.5"``,
          ``"+5"``, ``"1e3"``, ``"soon"``, an impossible date.

        A fraction such as ``"1.5"`` is not delta-seconds, so it is not honoured
        (None), as urllib3's ``Retry.parse_retry_after`` refuses it and
        slack_sdk's ``int()`` fails on it; the ``openai`` client's
        ``_parse_retry_after_header`` accepts it as a float ("allowing
        nonstandard floats"), but OpenAI sends sub-second waits in
        ``retry-after-ms``, which the LLM client reads first. A negative value
        is None too: RFC 9110 has no sign, and ``openai`` discards a negative
        wait (``0 < retry_after``) and falls back to its backoff.

    Raises:
        Nothing: a malformed value is None, never an error.
    """
    if value is None:
        return None
    text = value.strip(_OWS)
    if _DELTA_SECONDS.fullmatch(text):
        return float(text)  # a digit string never fails: at worst it is inf
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    start = now if now is not None else dt.datetime.now(dt.UTC)
    return max(0.0, (when - start).total_seconds())
