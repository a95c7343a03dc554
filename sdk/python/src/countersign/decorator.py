"""`@require_approval`: a reviewer before a function. The call is built from
the function's name and its arguments, asked about, waited for, checked and
redeemed; only then does the function run, with the approved arguments (the
reviewer's edit, if any). Otherwise a `NotApproved` says why, and it did not
run."""

from __future__ import annotations

import functools
import inspect
import json
from typing import Any, Awaitable, Callable, TypeVar, cast

from .calls import JsonObject, arguments, call_hash, check_risk, rebind
from .client import DEFAULT_TIMEOUT, AsyncCountersign, Countersign
from .errors import NotApproved
from .wire import ToolCall

F = TypeVar("F", bound=Callable[..., Any])

Summary = str | Callable[..., str] | None


def require_approval(
    cs: Countersign | AsyncCountersign,
    *,
    risk: str = "R2",
    summary: Summary = None,
    timeout: float = DEFAULT_TIMEOUT,
    session: str | None = None,
    editable: bool = True,
    tool: str | None = None,
    workspace: str | None = None,
) -> Callable[[F], F]:
    """Gates a sync or `async def` function behind a reviewer.

    `risk` is the tier R0-R4; `summary` a text, or a callable taking the
    function's own arguments that returns one (it runs before anything is
    sent); `timeout` how long a reviewer has, in seconds; `editable=False`
    when the function must only ever run with the arguments it was called
    with; `tool` the name reviewers see (the function's by default)."""
    check_risk(risk)

    def decorate(fn: F) -> F:
        name = tool or fn.__name__
        if inspect.iscoroutinefunction(fn):
            client = cs.async_client()

            @functools.wraps(fn)
            async def gated_async(*args: Any, **kwargs: Any) -> Any:
                asked, text = _prepare(fn, name, summary, args, kwargs)
                request = await client.ask(
                    name, asked, risk=risk, summary=text, timeout=timeout,
                    session=session, editable=editable, workspace=workspace,
                )
                approval = await request.wait()
                positional, keywords = _fit(fn, name, asked, approval.call, approval.review_id, (args, kwargs))
                await approval.redeem()
                return await cast(Callable[..., Awaitable[Any]], fn)(*positional, **keywords)

            return cast(F, gated_async)
        if not isinstance(cs, Countersign):
            raise TypeError(
                f"`{fn.__name__}` is not `async def`: gate it with Countersign, not AsyncCountersign"
            )
        sync = cs

        @functools.wraps(fn)
        def gated(*args: Any, **kwargs: Any) -> Any:
            asked, text = _prepare(fn, name, summary, args, kwargs)
            request = sync.ask(
                name, asked, risk=risk, summary=text, timeout=timeout,
                session=session, editable=editable, workspace=workspace,
            )
            approval = request.wait()
            positional, keywords = _fit(fn, name, asked, approval.call, approval.review_id, (args, kwargs))
            approval.redeem()
            return fn(*positional, **keywords)

        return cast(F, gated)

    return decorate


def _prepare(
    fn: Callable[..., Any],
    name: str,
    summary: Summary,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[JsonObject, str]:
    """The call's arguments and its summary, or an error before anything is sent."""
    asked = arguments(fn, args, kwargs)
    if summary is None:
        shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in asked.items())
        text = f"{name}({shown})"
        return asked, text if len(text) <= 300 else text[:299] + "…"
    if isinstance(summary, str):
        return asked, summary
    # With the defaults filled in, as the reviewer sees the call.
    positional, keywords = rebind(fn, asked)
    text = summary(*positional, **keywords)
    if not isinstance(text, str):
        raise TypeError(f"the summary of `{name}` must be a str, not {type(text).__name__}")
    return asked, text


def _fit(
    fn: Callable[..., Any],
    name: str,
    asked: JsonObject,
    call: ToolCall,
    review_id: str,
    called: tuple[tuple[Any, ...], dict[str, Any]],
) -> tuple[list[Any] | tuple[Any, ...], dict[str, Any]]:
    """The arguments the approved call runs `fn` with: as it was called when
    the reviewer approved that call (same canonical hash: `120.0` stays a
    float), else the reviewer's edit. `NotApproved` (the token unspent) when
    the approval is for another tool or its arguments do not fit `fn`."""
    if call["name"] != name:
        raise NotApproved(
            f"the approval is for `{call['name']}`, not `{name}`; nothing runs", review_id=review_id
        )
    if call_hash(name, call["args"]) == call_hash(name, asked):
        return called
    try:
        return rebind(fn, call["args"])
    except TypeError as e:
        raise NotApproved(f"the approved arguments do not fit `{name}`: {e}", review_id=review_id) from e
