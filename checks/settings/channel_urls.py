"""A channel URL's secrets, and the Apprise plugin (Slack, Discord) it would be sent with."""

from __future__ import annotations

import base64
from urllib.parse import parse_qsl, unquote, urlsplit

# Hosts and schemes Apprise would route to its Slack / Discord plugins.
_APPRISE_REFUSED_SCHEMES = {"slack": "slack", "discord": "discord"}
_APPRISE_REFUSED_HOSTS = {
    "hooks.slack.com": "slack",
    "discord.com": "discord",
    "discordapp.com": "discord",
    "canary.discord.com": "discord",
    "ptb.discord.com": "discord",
}


# Apprise schemes whose plugin connects to the URL's host (the rest name a hosted
# service and carry tokens where the host goes).
APPRISE_HOST_SCHEMES = frozenset(
    f"{base}{tls}"
    for base in ("json", "xml", "form", "mailto", "mmost", "rocket", "gotify", "ntfy", "matrix")
    for tls in ("", "s")
)


def url_secrets(url: str) -> list[str]:
    """Return ``url`` and the parts of it that work as credentials.

    Query values (``key=``, ``token=``, ``sig=``…), long path segments (the
    tokens inside Slack and Discord webhook paths) and the user-info (user,
    password, both decoded, and their HTTP Basic form) are returned too, so
    that a URL shown re-encoded or in pieces is still hidden by ``redact``.
    """
    parts = urlsplit(url)
    found = [url]
    found += [v for _, v in parse_qsl(parts.query) if len(v) >= 8]
    found += [seg for seg in parts.path.split("/") if len(seg) >= 16]
    if parts.password:
        found += [parts.password, unquote(parts.password)]
    if parts.username:  # user-info is a credential as a whole (``token@host``)
        found += [parts.username, unquote(parts.username)]
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        found.append(base64.b64encode(pair.encode()).decode())  # as HTTP Basic sends it
    return found


def refused_apprise_service(url: str) -> str | None:
    """Return ``"slack"`` or ``"discord"`` when Apprise would send ``url`` with that plugin."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in _APPRISE_REFUSED_SCHEMES:
        return _APPRISE_REFUSED_SCHEMES[scheme]
    if scheme in ("http", "https"):
        return _APPRISE_REFUSED_HOSTS.get((parts.hostname or "").lower())
    return None
