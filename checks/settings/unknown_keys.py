"""An unknown key of the config file: what it most likely meant, among the keys of its section.

``load_settings`` turns pydantic's "Extra inputs are not permitted" into
``unknown field 'x' (did you mean 'y'?)``, as automation files say it
(``checks.automation.validation_messages``). The section is found by walking
pydantic's error location through the settings' models, their mappings and
lists, and their unions (a tagged union's location holds the tag, ``duckdb``; a
plain union's the branch's class name). A model may name the keys people write
for one of its own (``MEANT``: ``path`` for a DuckDB source's ``database``),
which no spelling distance would find.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from checks.fields.rules import did_you_mean


def unknown_key_message(root: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """``unknown field 'path' (did you mean 'database'?)`` for an unknown key at ``loc``.

    Args:
        root: the model the whole file is validated as (``Settings``).
        loc: pydantic's location of the unknown key, the key last.
    """
    key = str(loc[-1])
    model = _model_at(root, loc[:-1])
    if model is None:
        return f"unknown field {key!r}"
    meant: Mapping[str, str] = getattr(model, "MEANT", {})
    if key in meant:
        return f"unknown field {key!r} (did you mean {meant[key]!r}?)"
    keys = [info.alias or name for name, info in model.model_fields.items()]
    return f"unknown field {key!r}{did_you_mean(key, keys)}"


def _model_at(root: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    current: Any = root
    for part in loc:
        current = _unwrap(current)
        origin = get_origin(current)
        if _is_model(current):
            field = _field(current, str(part))
            if field is None:
                return None
            current = field.annotation
        elif origin in (dict, Mapping):
            current = get_args(current)[1]
        elif origin in (list, tuple):
            current = get_args(current)[0]
        elif origin in (Union, types.UnionType):
            current = _branch(get_args(current), str(part))
            if current is None:
                return None
        else:
            return None
    current = _unwrap(current)
    return current if _is_model(current) else None


def _unwrap(annotation: Any) -> Any:
    """``Annotated[X, …]`` → ``X``; ``X | None`` → ``X`` (pydantic's location names neither)."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
            continue
        if origin in (Union, types.UnionType):
            members = [a for a in get_args(annotation) if a is not type(None)]
            if len(members) == 1:
                annotation = members[0]
                continue
        return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _field(model: type[BaseModel], key: str) -> FieldInfo | None:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info
    return None


def _branch(members: tuple[Any, ...], part: str) -> Any:
    """The union's member a location part names: by its class name, or by its ``type`` tag."""
    for member in members:
        member = _unwrap(member)
        if getattr(member, "__name__", None) == part:
            return member
        if _is_model(member) and "type" in member.model_fields:
            tag = member.model_fields["type"].annotation
            if get_origin(tag) is Literal and part in get_args(tag):
                return member
    return None
