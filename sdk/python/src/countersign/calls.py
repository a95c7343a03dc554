"""Tool calls as Countersign hashes them: `{"name", "args"}`, canonical JSON
(RFC 8785, the `rfc8785` package) and SHA-256; and the arguments of a Python
function as such a call, and back."""

from __future__ import annotations

import hashlib
import inspect
import json
import math
from typing import Any, Callable

import rfc8785

RISK_TIERS = ("R0", "R1", "R2", "R3", "R4")

JsonObject = dict[str, Any]


def call_hash(name: str, args: JsonObject) -> str:
    """Lowercase hex SHA-256 of the call's canonical JSON: what a token's
    `toolCallHash` must equal for this call to run."""
    return hashlib.sha256(rfc8785.dumps({"name": name, "args": args})).hexdigest()


def check_risk(risk: str) -> str:
    """`risk` when it is a tier Countersign knows, else `ValueError`."""
    if risk not in RISK_TIERS:
        raise ValueError(f"risk {risk!r} is not a risk tier: choose one of {', '.join(RISK_TIERS)}")
    return risk


def check_json(name: str, value: Any) -> None:
    """`TypeError` naming the argument when `value` is not plain JSON (a
    dict with string keys, a list, a string, a finite number, a bool, None)."""
    problem = _not_json(value)
    if problem is not None:
        raise TypeError(f"argument `{name}` cannot be sent for review: {problem}")


def _not_json(value: Any) -> str | None:
    if value is None or isinstance(value, (bool, str)):
        return None
    if isinstance(value, int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value} is not a JSON number"
    if isinstance(value, (list, tuple)):
        for item in value:
            problem = _not_json(item)
            if problem is not None:
                return problem
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"a dict key {key!r} is not a string"
            problem = _not_json(item)
            if problem is not None:
                return problem
        return None
    return f"a {type(value).__name__} is not JSON"


def arguments(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> JsonObject:
    """A call's arguments by parameter name, defaults filled in: what the
    reviewer sees. `*args` become a list under their name, `**kwargs` their
    own entries. `TypeError` when they do not fit `fn` or are not JSON."""
    signature = inspect.signature(fn)
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    named: JsonObject = {}
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            for key, item in value.items():
                check_json(key, item)
                named[key] = item
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            check_json(name, list(value))
            named[name] = list(value)
        else:
            check_json(name, value)
            named[name] = value
    # What goes on the wire is JSON: tuples become lists, as the server sees them.
    loaded: JsonObject = json.loads(json.dumps(named))
    return loaded


def rebind(fn: Callable[..., Any], approved: JsonObject) -> tuple[list[Any], dict[str, Any]]:
    """The positional and keyword arguments that call `fn` with `approved`
    (the reviewer's edit, if any). `TypeError` when they do not fit `fn`."""
    signature = inspect.signature(fn)
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    rest = dict(approved)
    extra_keywords = None
    # Before `*args`, a parameter can only be given by position.
    by_position: set[inspect._ParameterKind] = {inspect.Parameter.POSITIONAL_ONLY}
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in signature.parameters.values()):
        by_position.add(inspect.Parameter.POSITIONAL_OR_KEYWORD)
    for name, parameter in signature.parameters.items():
        kind = parameter.kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            extra_keywords = name
            continue
        if name not in rest:
            continue
        value = rest.pop(name)
        if kind in by_position:
            positional.append(value)
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            if not isinstance(value, list):
                raise TypeError(f"argument `{name}` was approved as {value!r}, not a list")
            positional.extend(value)
        else:
            keywords[name] = value
    if rest and extra_keywords is None:
        raise TypeError(f"the approved call has arguments the function does not take: {', '.join(sorted(rest))}")
    keywords.update(rest)
    signature.bind(*positional, **keywords)
    return positional, keywords
