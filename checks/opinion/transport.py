"""The HTTP side of a decision model: budget, chunks, threads, timeouts, errors, usage.

``HTTPDecisionModel.ask`` splits the questions into requests that fit the
input budget with the state (``DecisionModel.plan``), sends them on at most
``max_parallel_requests`` threads through one shared ``httpx.Client`` (each
request with its own ``timeout_s``), and turns every failure into a
``NoAnswer`` for the questions of that request — a request never raises out
of ``ask``. The client is the process's, one per endpoint, key, timeout and
pool size (``shared_client``): a run's model is built per run, but building
an ``httpx.Client`` (its TLS context) costs tens of milliseconds of CPU.
Subclasses speak one wire format: ``checks.opinion.backends`` (systemone,
openai-decisions) and ``checks.opinion.backends.chat_logprobs`` (chat-logprobs).
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx

from checks.http.process_clients import ProcessClients
from checks.opinion.decision_model import Answers, DecisionModel, estimate_tokens
from checks.opinion.questions import Answer, NoAnswer, NoAnswerReason, Question, check_questions
from checks.settings.config import redact

CLIENTS: ProcessClients[httpx.Client] = ProcessClients(kept=8, close=lambda c: c.close())
"""The process's decision-model clients, by (base URL, key, timeout, pool size)."""


def shared_client(
    base_url: str, api_key: str | None, timeout_s: float, max_connections: int
) -> httpx.Client:
    """Return this process's ``httpx.Client`` for one decision-model endpoint; ``release`` it.

    Built on first use (``Authorization: Bearer`` when ``api_key`` is set,
    ``timeout_s`` for every phase of a request, at most ``max_connections``
    connections) and kept for the process (``CLIENTS``), so its connections
    are reused from run to run; a dropped one is closed once no model holds it.
    """

    def build() -> httpx.Client:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        return httpx.Client(
            timeout=httpx.Timeout(timeout_s),
            headers=headers,
            limits=httpx.Limits(max_connections=max_connections),
        )

    return CLIENTS.get((base_url, api_key, timeout_s, max_connections), build)


def release(client: httpx.Client) -> None:
    """A model is done with a ``shared_client``: close it if it was dropped and is unused."""
    CLIENTS.release(client)


@dataclass
class Reply:
    """What one HTTP request gave: an answer per question of the request, tokens and cost."""

    answers: dict[str, Answer]
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    requests: int = 1


class HTTPDecisionModel(DecisionModel):
    """A decision model behind an HTTP API: budget, chunks, threads, timeouts and errors.

    Subclasses implement ``send`` (one request for a group of questions that
    fits the budget). Exceptions from ``send`` become ``NoAnswer`` for every
    question of that request: ``httpx.TimeoutException`` → timeout, an HTTP
    error status or connection failure → http_error, ``ValueError`` (a body
    that is not the expected JSON shape) → invalid.

    Args:
        base_url: the backend's base URL (no trailing path of the endpoint).
        api_key: sent as ``Authorization: Bearer …`` when set.
        model: sent as ``model`` when set.
        timeout_s: httpx timeout of every phase of one request, in seconds.
        input_budget_tokens: most input tokens of one request.
        max_parallel_requests: most requests in flight at once.
        prices_usd_per_mtok: (input, output) USD per million tokens, used when
            a response reports no cost.
        client: an httpx client to use (default: the process's for this
            endpoint, key, timeout and pool size, ``shared_client``).
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        model: str | None = None,
        timeout_s: float = 5.0,
        input_budget_tokens: int = 32_000,
        max_parallel_requests: int = 8,
        prices_usd_per_mtok: tuple[float, float] | None = None,
        client: httpx.Client | None = None,
    ) -> None:
        super().__init__(
            input_budget_tokens=input_budget_tokens, max_parallel_requests=max_parallel_requests
        )
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.model = model
        self.timeout_s = timeout_s
        self.prices_usd_per_mtok = prices_usd_per_mtok
        self._shared = client is None
        self.client = client or shared_client(
            self.base_url, api_key, timeout_s, max(10, 2 * max_parallel_requests)
        )

    @abstractmethod
    def send(self, state: str, questions: Sequence[Question]) -> Reply:
        """Make one request for ``questions`` (they fit the budget); return its answers.

        Raises:
            httpx.HTTPError: the request failed or timed out.
            ValueError: the response is not the wire format's JSON shape.
        """

    def ask(self, state: str, questions: Sequence[Question]) -> Answers:
        """Ask ``questions`` in as few requests as the budget allows, in parallel.

        See ``DecisionModel.ask``; a question that does not fit even alone with
        the state is ``NoAnswer(over_budget)`` and is not sent.
        """
        check_questions(questions)
        start = time.monotonic()
        groups, too_big = self.plan(state, questions)
        over = NoAnswer(
            NoAnswerReason.OVER_BUDGET,
            f"the request would carry over {self.input_budget_tokens} input tokens "
            f"(state alone ≈ {estimate_tokens(state)})",
        )
        by_name: dict[str, Answer] = {q.name: over for q in too_big}
        if len(groups) <= 1:
            replies = [self.send_safely(state, g) for g in groups]
        else:
            workers = min(len(groups), self.max_parallel_requests)
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="decision") as pool:
                replies = list(pool.map(lambda g: self.send_safely(state, g), groups))
        answers = Answers(by_name=by_name, cost_usd=0.0)
        for reply in replies:
            by_name.update(reply.answers)
            answers.input_tokens += reply.input_tokens
            answers.output_tokens += reply.output_tokens
            answers.requests += reply.requests
            if answers.cost_usd is not None and reply.cost_usd is not None:
                answers.cost_usd += reply.cost_usd
            elif reply.requests:
                answers.cost_usd = None
        answers.by_name = {q.name: by_name[q.name] for q in questions}
        answers.elapsed_ms = int((time.monotonic() - start) * 1000)
        return answers

    def send_safely(self, state: str, questions: Sequence[Question]) -> Reply:
        """Call ``send``; turn a failure into ``NoAnswer`` for each of its questions."""
        try:
            return self.send(state, questions)
        except httpx.TimeoutException:
            failure = NoAnswer(NoAnswerReason.TIMEOUT, f"timed out after {self.timeout_s:g} s")
        except httpx.HTTPStatusError as exc:
            body = redact(exc.response.text[:300], [self.api_key] if self.api_key else [])
            failure = NoAnswer(
                NoAnswerReason.HTTP_ERROR, f"HTTP {exc.response.status_code}: {body}".strip()
            )
        except httpx.HTTPError as exc:
            failure = NoAnswer(NoAnswerReason.HTTP_ERROR, f"{type(exc).__name__}: {exc}")
        except ValueError as exc:
            failure = NoAnswer(NoAnswerReason.INVALID, f"response not understood: {exc}")
        return Reply(answers={q.name: failure for q in questions}, cost_usd=None)

    def post(self, url: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST ``body`` as JSON to ``url``; return the response's JSON object.

        Raises:
            httpx.HTTPError: the request failed, timed out or got an error status.
            ValueError: the response body is not a JSON object.
        """
        response = self.client.post(url, json=body)
        response.raise_for_status()
        data = response.json()
        if not isinstance(data, dict):
            raise ValueError("the response body is not a JSON object")
        return data

    def reply_usage(self, usage: Any) -> tuple[int, int, float | None]:
        """Read (input tokens, output tokens, cost USD) from a ``usage`` object.

        Input tokens are ``input_tokens`` or ``prompt_tokens``; output tokens
        ``output_tokens`` or ``completion_tokens``; the cost is ``usage.cost``
        when it is a number, else computed from ``prices_usd_per_mtok``, else None.
        """
        usage = usage if isinstance(usage, dict) else {}

        def count(*keys: str) -> int:
            for key in keys:
                value = usage.get(key)
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    return value
            return 0

        tokens_in = count("input_tokens", "prompt_tokens")
        tokens_out = count("output_tokens", "completion_tokens")
        cost = usage.get("cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0:
            return tokens_in, tokens_out, float(cost)
        if self.prices_usd_per_mtok is not None:
            price_in, price_out = self.prices_usd_per_mtok
            return tokens_in, tokens_out, (tokens_in * price_in + tokens_out * price_out) / 1e6
        return tokens_in, tokens_out, None

    def close(self) -> None:
        """Let go of the process's client (``release``); a caller's client stays open."""
        if self._shared:
            self._shared = False
            release(self.client)
