"""The base of every settings section."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """A settings section: unknown keys are refused, so a typo never goes unnoticed."""

    model_config = ConfigDict(extra="forbid")
