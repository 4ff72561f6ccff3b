"""Shared pieces of the integration tests: real large outputs, tools, a scripted agent policy
and the checks every model request must pass."""

from __future__ import annotations

import base64
import json
import random
import secrets
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.prebuilt import InjectedState, ToolRuntime
from langgraph.types import Command

from langchain_result_layer import ResultLayer
from langchain_result_layer.adapters._messages import RequestCounter, layer_marker
from langchain_result_layer.scripted import ScriptedChatModel, ai_tool_calls, tool_call

SYSTEM_PROMPT = "You are a build and data investigator. Use the tools; cite evidence."
FETCH = "fetch_tool_result"
_FETCH_REF_RE = __import__("re").compile(r'fetch_tool_result\(ref="(ref://tool-result/[^"]+)"\)')


def _read(path: Path) -> str:
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        return fh.read()


@dataclass
class DataSource:
    """Large real outputs (the corpus) or generated ones, addressed by name."""

    logs: dict[str, str]
    database: Path
    queries: list[str]
    observations: list[str]
    from_corpus: bool

    @classmethod
    def load(cls, corpus: Path | None, tmp: Path) -> DataSource:
        if corpus is not None and (corpus / "cases.jsonl").exists():
            return cls._from_corpus(corpus)
        return cls._generated(tmp)

    @classmethod
    def _from_corpus(cls, corpus: Path) -> DataSource:
        logs: dict[str, str] = {}
        observations: list[str] = []
        with open(corpus / "cases.jsonl", encoding="utf-8") as fh:
            cases = [json.loads(line) for line in fh]
        for case in cases:
            kind = case["kind"]
            if kind in ("build_log", "system_log", "traceback", "search") and len(logs) < 40:
                logs[case["id"].replace("/", "_")] = _read(corpus / case["path"])
            elif kind == "trajectory" and case["path"].endswith(".traj") and len(observations) < 60:
                data = json.loads(_read(corpus / case["path"]))
                observations.extend(
                    step["observation"]
                    for step in data.get("trajectory", [])
                    if step.get("observation")
                )
        queries = [
            "SELECT * FROM Track;",
            "SELECT * FROM InvoiceLine;",
            "SELECT c.*, i.* FROM Customer c JOIN Invoice i ON i.CustomerId = c.CustomerId;",
            "SELECT t.Name, a.Title, g.Name FROM Track t JOIN Album a USING(AlbumId) "
            "JOIN Genre g USING(GenreId);",
            "SELECT * FROM PlaylistTrack;",
        ]
        return cls(
            logs=logs,
            database=corpus / "sql" / "Chinook_Sqlite.sqlite",
            queries=queries,
            observations=observations,
            from_corpus=True,
        )

    @classmethod
    def _generated(cls, tmp: Path) -> DataSource:
        rnd = random.Random(7)
        logs = {}
        for k in range(12):
            lines = []
            for i in range(rnd.randint(2_000, 20_000)):
                level = rnd.choice(["INFO"] * 20 + ["WARN", "ERROR"])
                lines.append(
                    f"2024-05-0{k % 9 + 1} 10:{i % 60:02d}:{i % 59:02d} {level} "
                    f"[worker-{i % 7}] step {i} "
                    f"{'failed: connection reset by peer' if level == 'ERROR' else 'ok'}"
                )
            lines.append("FATAL: build failed with exit code 2")
            logs[f"generated_{k}"] = "\n".join(lines) + "\n"
        db = tmp / "generated.sqlite"
        con = sqlite3.connect(db)
        con.execute(
            "CREATE TABLE Track (TrackId INTEGER, Name TEXT, Composer TEXT, Milliseconds INTEGER)"
        )
        con.executemany(
            "INSERT INTO Track VALUES (?, ?, ?, ?)",
            [
                (i, f"Track {i}", f"Composer {i % 97}", rnd.randint(60_000, 400_000))
                for i in range(6_000)
            ],
        )
        con.commit()
        con.close()
        observations = [
            "$ ls -la\n" + "\n".join(f"-rw-r--r-- 1 u g {i} file_{i}.py" for i in range(3_000))
        ]
        return cls(
            logs=logs,
            database=db,
            queries=["SELECT * FROM Track;"] * 3,
            observations=observations,
            from_corpus=False,
        )

    def run_sql(self, query: str) -> str:
        con = sqlite3.connect(f"file:{self.database}?mode=ro", uri=True)
        try:
            cur = con.execute(query)
            header = "|".join(d[0] for d in cur.description or [])
            rows = ["|".join("" if v is None else str(v) for v in row) for row in cur.fetchall()]
        finally:
            con.close()
        return "\n".join([header, *rows]) + "\n"


def make_tools(data: DataSource) -> list[BaseTool]:
    """Real tools over the data: plain, `Command`-returning with `ToolRuntime`, `InjectedState`."""
    names = sorted(data.logs)

    @tool
    def read_log(name: str) -> str:
        """Read a whole log file by name."""
        return data.logs[name]

    @tool
    def run_sql(query: str) -> str:
        """Run a read-only SQL query and return the rows, `|`-separated with a header line."""
        return data.run_sql(query)

    @tool
    def shell(index: int, runtime: ToolRuntime) -> Command:
        """Run a recorded shell command and return its terminal output."""
        text = data.observations[index % len(data.observations)]
        message = ToolMessage(
            text,
            tool_call_id=runtime.tool_call_id,
            name="shell",
            status="error" if "Traceback" in text else "success",
        )
        return Command(update={"messages": [message]})

    @tool
    def count_messages(note: str, state: Annotated[dict, InjectedState]) -> str:
        """Report how many messages the conversation holds."""
        return f"{note}: {len(state['messages'])} messages"

    read_log.metadata = {"names": names}
    return [read_log, run_sql, shell, count_messages]


@dataclass
class Policy:
    """Decides the next scripted model message from what the model sees."""

    data: DataSource
    turns: int = 32
    fetch: bool = True
    parallel_every: int = 5
    fetched: list[tuple[str, str]] = field(default_factory=list)
    """(reference, fetch call id) pairs."""

    def __call__(self, messages: list[BaseMessage], index: int) -> AIMessage | str:
        turn = sum(1 for m in messages if isinstance(m, AIMessage))
        if turn >= self.turns:
            return "Found it: the build failed at the first error shown."
        names = sorted(self.data.logs)
        if self.fetch and turn % 6 == 5:
            fetched = {ref for ref, _ in self.fetched}
            refs = [
                r
                for m in messages
                if isinstance(m, ToolMessage)
                for r in _FETCH_REF_RE.findall(str(m.content))
                if layer_marker(m).get("cleared")
            ]
            fresh = [r for r in refs if r not in fetched]
            if fresh:
                call_id = f"fetch_{turn}"
                self.fetched.append((fresh[0], call_id))
                return ai_tool_calls(
                    tool_call(FETCH, {"ref": fresh[0]}, id=call_id),
                    content="Re-reading an older result.",
                )
        if turn % self.parallel_every == 3:
            return ai_tool_calls(
                tool_call("read_log", {"name": names[turn % len(names)]}, id=f"p{turn}a"),
                tool_call(
                    "run_sql",
                    {"query": self.data.queries[turn % len(self.data.queries)]},
                    id=f"p{turn}b",
                ),
                tool_call("shell", {"index": turn}, id=f"p{turn}c"),
                content="Looking at three sources at once.",
            )
        kind = turn % 4
        if kind == 0:
            call = tool_call("read_log", {"name": names[turn % len(names)]}, id=f"c{turn}")
        elif kind == 1:
            call = tool_call(
                "run_sql",
                {"query": self.data.queries[turn % len(self.data.queries)]},
                id=f"c{turn}",
            )
        elif kind == 2:
            call = tool_call("shell", {"index": turn}, id=f"c{turn}")
        else:
            call = tool_call("count_messages", {"note": f"turn {turn}"}, id=f"c{turn}")
        return ai_tool_calls(call, content=f"Step {turn}.")


def scripted_model(policy: Policy, window: int) -> ScriptedChatModel:
    return ScriptedChatModel(script=policy, max_input_tokens=window)


# --------------------------------------------------------------------------- checks


def assert_pairing(messages: Sequence[BaseMessage]) -> None:
    """Every tool call is answered once, after it; no orphan tool messages."""
    calls: dict[str, int] = {}
    answered: set[str] = set()
    for i, m in enumerate(messages):
        if isinstance(m, AIMessage):
            for c in m.tool_calls:
                assert c["id"] not in calls, f"duplicate call id {c['id']}"
                calls[c["id"]] = i
        elif isinstance(m, ToolMessage):
            assert m.tool_call_id in calls, f"orphan tool message {m.tool_call_id}"
            assert m.tool_call_id not in answered, f"answered twice {m.tool_call_id}"
            answered.add(m.tool_call_id)
    assert answered == set(calls), f"unanswered calls {set(calls) - answered}"


@dataclass
class RequestReport:
    tokens: list[int]
    cleared_calls: set[str]
    fetched_ok: int


def check_requests(
    model: ScriptedChatModel,
    layer: ResultLayer,
    *,
    trigger_bound: bool = True,
    system: str | None = None,
    policy: Policy | None = None,
) -> RequestReport:
    """Every request: under the window (and the trigger), valid pairing, cleared never returns."""
    assert model.requests, "the model was never called"
    counter = RequestCounter(layer.token_counter, image_tokens=layer.image_tokens)
    window = layer.context_window
    trigger = int(window * layer.guard_settings.trigger_fraction)
    placeholders: dict[str, str] = {}
    tokens: list[int] = []
    for n, request in enumerate(model.requests):
        has_system = any(isinstance(m, SystemMessage) for m in request)
        total = counter.count(
            request, system=None if has_system else system, tools=model.bound_tools
        )
        tokens.append(total)
        assert total <= window, f"request {n} has {total} tokens, over the {window}-token window"
        if trigger_bound:
            assert total <= trigger, f"request {n} has {total} tokens, over the trigger {trigger}"
        conversation = [m for m in request if not isinstance(m, SystemMessage)]
        assert_pairing(conversation)
        seen_now: dict[str, str] = {}
        for m in conversation:
            if isinstance(m, ToolMessage):
                seen_now[m.tool_call_id] = str(m.content)
        for call_id, text in placeholders.items():
            assert call_id in seen_now, f"request {n} lost message {call_id}"
            assert seen_now[call_id] == text, f"cleared result {call_id} came back in request {n}"
        for m in conversation:
            if isinstance(m, ToolMessage) and layer_marker(m).get("cleared"):
                placeholders.setdefault(m.tool_call_id, str(m.content))
    fetched_ok = 0
    if policy is not None:
        for ref, call_id in policy.fetched:
            first = next(
                (
                    m
                    for request in model.requests
                    for m in request
                    if isinstance(m, ToolMessage) and m.tool_call_id == call_id
                ),
                None,
            )
            if (
                first is not None
                and first.status != "error"
                and not layer_marker(first).get("cleared")
                and str(first.content).startswith(f"[Fetched {ref}")
            ):
                fetched_ok += 1
    return RequestReport(tokens=tokens, cleared_calls=set(placeholders), fetched_ok=fetched_ok)


# Fence nonces and record ids are random, so views differ by a few tokens from run to run and
# decisions near the trigger with them. To compare decisions exactly, each run draws them from
# its own seeded generator (a context variable: threads and tasks of one run share it, other
# runs never do); the real `secrets` serves everything else.
RNG: ContextVar[random.Random | None] = ContextVar("test_rng", default=None)


class _SeededSecrets:
    def choice(self, seq: Any) -> Any:
        rng = RNG.get()
        return secrets.choice(seq) if rng is None else rng.choice(seq)

    def token_urlsafe(self, nbytes: int) -> str:
        rng = RNG.get()
        if rng is None:
            return secrets.token_urlsafe(nbytes)
        return base64.urlsafe_b64encode(rng.randbytes(nbytes)).rstrip(b"=").decode()


@contextmanager
def seeded_secrets() -> Iterator[None]:
    """Fence nonces and record ids come from `RNG` when a test sets it."""
    from langchain_result_layer.core import reference, render

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(render, "secrets", _SeededSecrets())
        patch.setattr(reference, "secrets", _SeededSecrets())
        yield
