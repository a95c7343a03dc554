"""Arguments of Python functions as calls, and back."""

from __future__ import annotations

from typing import Any

import pytest

from countersign.calls import arguments, call_hash, rebind


def shapes(a: int, /, b: str, *rest: int, c: bool = False, **more: Any) -> None:
    pass


def test_arguments_name_every_parameter_with_defaults_filled_in() -> None:
    asked = arguments(shapes, (1, "x", 7, 8), {"d": [1, 2]})
    assert asked == {"a": 1, "b": "x", "rest": [7, 8], "c": False, "d": [1, 2]}
    positional, keywords = rebind(shapes, asked)
    assert (positional, keywords) == ([1, "x", 7, 8], {"c": False, "d": [1, 2]})
    shapes(*positional, **keywords)


def test_an_edit_that_does_not_fit_the_function_is_refused() -> None:
    def f(x: int) -> None:
        pass

    with pytest.raises(TypeError, match="does not take: y"):
        rebind(f, {"x": 1, "y": 2})
    with pytest.raises(TypeError):
        rebind(f, {})


def test_the_hash_is_sha256_of_the_canonical_call() -> None:
    # RFC 8785 sorts keys and writes 1.0 as 1: one call, one hash.
    assert call_hash("t", {"b": 1.0, "a": "é"}) == call_hash("t", {"a": "é", "b": 1})
    assert call_hash("t", {"a": 1}) != call_hash("u", {"a": 1})
