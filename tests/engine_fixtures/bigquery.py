"""A BigQuery source on the local fake of BigQuery's REST wire (``bigquery_wire``).

The real ``google-cloud-bigquery`` client and ``sqlalchemy-bigquery`` dialect reach it
as they reach BigQuery: a service account's key file (a fresh RSA key, its ``token_uri``
the fake's), and ``BIGQUERY_EMULATOR_HOST``, the client's own setting for another host.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_fixtures.bigquery_wire import BigQueryServer, FakeBigQuery

PROJECT = "shop-project"
DATASET = "shop"

ORDERS = [
    ("order_id", "INTEGER"),
    ("amount", "NUMERIC"),
    ("status", "STRING"),
    ("created_at", "TIMESTAMP"),
]
"""The fake's ``orders`` table: (name, BigQuery type)."""


def key_file(folder: Path, token_uri: str) -> Path:
    """A service account key file whose token exchange goes to ``token_uri``."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    path = folder / "service-account.json"
    info = {
        "type": "service_account",
        "project_id": PROJECT,
        "private_key_id": "lookout-test",
        "private_key": pem,
        "client_email": f"lookout@{PROJECT}.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": token_uri,
    }
    path.write_text(json.dumps(info), encoding="utf-8")
    return path


@pytest.fixture
def bigquery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeBigQuery, str]]:
    """The fake BigQuery with ``orders``, and the source URL that reaches it."""
    state = FakeBigQuery(PROJECT, DATASET, tables={"orders": ORDERS})
    with BigQueryServer(state) as server:
        monkeypatch.setenv("BIGQUERY_EMULATOR_HOST", server.url)
        credentials = key_file(tmp_path, f"{server.url}/token")
        yield state, f"bigquery://{PROJECT}/{DATASET}?credentials_path={credentials}"
