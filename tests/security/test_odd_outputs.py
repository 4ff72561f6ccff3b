"""Odd tool output never crashes, hangs or silently empties the layer (issue 12 item 6).

Objects whose `repr`/`str` raise, ints over Python's 4,300-digit `str` limit, lists holding
either, generators (finite, long, infinite), iterators that raise midway, self-referential
and exponentially shared containers: each becomes a bounded view (or a marker inside one),
through `to_json_text`, the pipeline, `ResultLayer.process_tool_message`, a wrapped tool
invoked without a tool call, and the budget guard. Hangs would show as a test timeout.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, ToolException, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langchain_result_layer import BudgetGuard, ResultLayer, ToolPolicy
from langchain_result_layer.core import jsonable
from langchain_result_layer.core.jsonable import (
    MAX_ITEMS,
    MAX_ITEMS_PER_RESULT,
    materialize,
    to_json_text,
    to_jsonable,
)


class RaisingRepr:
    """An object whose repr and str raise."""

    def __repr__(self) -> str:
        raise RuntimeError("repr is broken")

    def __str__(self) -> str:
        raise RuntimeError("str is broken")


class RaisingKey:
    """A hashable dict key whose str raises."""

    def __hash__(self) -> int:
        return 7

    def __str__(self) -> str:
        raise ValueError("no str")


class RaisingIterable:
    """Yields two items, then raises."""

    def __iter__(self) -> Iterator[int]:
        yield 1
        yield 2
        raise OSError("the source went away")


def endless() -> Iterator[dict[str, int]]:
    """An infinite generator."""
    return ({"i": i} for i in itertools.count())


def cyclic_list() -> list[Any]:
    value: list[Any] = [1]
    value.append(value)
    return value


def cyclic_dict() -> dict[str, Any]:
    value: dict[str, Any] = {"a": 1}
    value["self"] = value
    return value


def shared_exponentially() -> list[Any]:
    value: list[Any] = []
    for _ in range(80):
        value = [value, value]  # 2**80 paths, 80 objects
    return value


def generator_of_endless_generators() -> Iterator[Iterator[int]]:
    """More generators than one result may read, each endless: the bounds must not multiply."""
    return (itertools.count() for _ in range(MAX_ITEMS + 3))


ODD: dict[str, Any] = {
    "repr raises": RaisingRepr,
    "int over 4300 digits": lambda: 10**5_000,
    "negative huge int": lambda: -(7**9_000),
    "list of both": lambda: [RaisingRepr(), 10**5_000, {"k": RaisingRepr()}],
    "key str raises": lambda: {RaisingKey(): 1},
    "finite generator": lambda: (n for n in range(50)),
    "long generator": lambda: (n for n in range(MAX_ITEMS + 5)),
    "infinite generator": endless,
    "iterator raising midway": lambda: iter(RaisingIterable()),
    "iterable raising midway": RaisingIterable,
    "huge range": lambda: range(10**15),
    "generator of endless generators": generator_of_endless_generators,
    "list of long generators": lambda: [(n for n in range(MAX_ITEMS + 5)) for _ in range(30)],
    "cyclic list": cyclic_list,
    "cyclic dict": cyclic_dict,
    "shared 2**80 times": shared_exponentially,
    "nested 500 deep": lambda: _deep(500),
    "set of mixed": lambda: {1, "a", (2, 3)},
    "bytes": lambda: b"\x00\xff" * 100,
}


def _deep(n: int) -> list[Any]:
    value: list[Any] = [0]
    for _ in range(n):
        value = [value]
    return value


@pytest.mark.parametrize("name", list(ODD))
def test_to_json_text_never_raises(name: str) -> None:
    text = to_json_text(ODD[name]())
    assert isinstance(text, str)
    assert text


def test_markers_say_what_happened() -> None:
    assert (
        to_jsonable(RaisingRepr()) == "<unrepresentable RaisingRepr: its repr raised RuntimeError>"
    )
    big = to_jsonable(10**5_000)
    assert big.startswith("<int of about 5,001 decimal digits, in hexadecimal: 0x")
    assert int(big.rsplit(" ", 1)[1].rstrip(">"), 16) == 10**5_000  # kept exactly
    assert to_jsonable(cyclic_list()) == [1, "<cycle: this value contains itself>"]
    assert to_jsonable({RaisingKey(): 1}) == {
        "<unrepresentable RaisingKey: its str raised ValueError>": 1
    }
    assert to_jsonable(RaisingIterable()) == (
        "<unrepresentable RaisingIterable: its iteration raised OSError>"
    )
    shared = {"k": 1}
    assert to_jsonable([shared, shared]) == [{"k": 1}, {"k": 1}]  # sharing is not a cycle
    cut = to_json_text(shared_exponentially())
    assert "more than 250,000 values repeated from shared containers" in cut
    assert len(cut) < 50_000_000


def test_generators_are_read_once_and_bounded() -> None:
    assert materialize({"rows": (n for n in range(3)), "x": [1, iter("ab")]}) == {
        "rows": [0, 1, 2],
        "x": [1, ["a", "b"]],
    }
    untouched = {"a": [1, 2], "b": "c"}
    assert materialize(untouched) is untouched
    bounded = materialize(endless())
    assert isinstance(bounded, dict)
    assert len(bounded["items"]) <= MAX_ITEMS
    assert bounded["generator"].startswith("generator: stopped after ")
    assert "the rest was not read" in bounded["generator"]


def test_generators_of_generators_share_one_bound() -> None:
    """All the generators of one output together read at most MAX_ITEMS_PER_RESULT items."""
    for value in (
        materialize(generator_of_endless_generators()),
        json.loads(to_json_text(generator_of_endless_generators())),
    ):
        assert isinstance(value, dict)
        outer = value["items"]
        assert len(outer) <= MAX_ITEMS
        assert value["generator"].startswith("generator: stopped after ")
        inner_read = sum(len(g["items"]) for g in outer)
        assert len(outer) + inner_read <= MAX_ITEMS_PER_RESULT
        notes = {g["generator"].split("(", 1)[1] for g in outer}
        assert any("limit for one result" in note for note in notes), notes
    # Thirty generators of 10,005 items: each stops at its own limit, the last ones at the
    # output's limit; none is read past either.
    many = materialize([(n for n in range(MAX_ITEMS + 5)) for _ in range(30)])
    assert sum(len(g["items"]) for g in many) <= MAX_ITEMS_PER_RESULT
    assert "10,000-item limit)" in many[0]["generator"]
    assert "limit for one result" in many[-1]["generator"]


def _layer(window: int = 8_000) -> ResultLayer:
    return ResultLayer(context_window=window, store="memory", token_counter="approximate")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", list(ODD))
def test_through_the_pipeline_and_process_tool_message(name: str) -> None:
    layer = _layer()
    outcome = layer.pipeline.process(ODD[name](), tool_name="odd")
    assert outcome is not None
    assert to_json_text(outcome.content)
    blocks = [{"type": "text", "text": "result:"}, {"type": "odd", "value": ODD[name]()}]
    message = ToolMessage(content=blocks, tool_call_id="c1", name="odd", id="m1")
    out = layer.process_tool_message(message)
    assert out.tool_call_id == "c1"
    assert out.id == "m1"
    assert to_json_text(out.content)
    assert layer.is_processed(out)


def test_a_generator_is_not_silently_emptied() -> None:
    layer = _layer()
    message = ToolMessage(
        content=[
            {"type": "text", "text": "rows"},
            {"type": "rows", "value": (n for n in range(5))},
        ],
        tool_call_id="c1",
        name="odd",
    )
    out = layer.process_tool_message(message)
    assert "[0, 1, 2, 3, 4]" in to_json_text(out.content)
    outcome = layer.pipeline.process((f"line {n}" for n in range(20_000)), tool_name="odd")
    assert outcome is not None
    text = to_json_text(outcome.content)
    assert f"stopped after {MAX_ITEMS:,} items" in text  # the view says so
    assert "line 0" in text


@pytest.mark.timeout(120)
def test_wrapped_tool_invoked_without_a_tool_call(monkeypatch: pytest.MonkeyPatch) -> None:
    # The item bound is what this test checks: the time bounds are raised so that a loaded
    # machine (reading 10,000 items can take over 0.5 s there) cannot stop the read first.
    monkeypatch.setattr(jsonable, "MAX_ITER_SECONDS", 60.0)
    monkeypatch.setattr(jsonable, "MAX_ITER_SECONDS_PER_RESULT", 60.0)

    @tool
    def rows(n: int) -> Any:
        """Rows, lazily."""
        return {"rows": ({"i": i} for i in range(n)), "bad": RaisingRepr()}

    wrapped = _layer().wrap_tool(rows)
    out = wrapped.invoke({"n": 30_000})
    assert "stopped after 10,000 items" in to_json_text(out)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", list(ODD))
def test_the_budget_guard_counts_and_clears_odd_blocks(name: str) -> None:
    layer = _layer(window=4_000)
    guard = BudgetGuard(layer)
    big = [{"type": "text", "text": "x " * 6_000}, {"type": "odd", "value": ODD[name]()}]
    messages = [
        HumanMessage("go", id="h1"),
        AIMessage("", tool_calls=[{"id": "c1", "name": "odd", "args": {}}], id="a1"),
        ToolMessage(content=big, tool_call_id="c1", name="odd", id="t1"),
        AIMessage("", tool_calls=[{"id": "c2", "name": "odd", "args": {}}], id="a2"),
        ToolMessage(content="small", tool_call_id="c2", name="odd", id="t2"),
        AIMessage("done", id="a3"),
        HumanMessage("again", id="h2"),
    ]
    update = guard.invoke({"messages": messages})
    assert isinstance(update, dict)
    assert to_json_text(update)


# --------------------------------------------------------------------------- property


def _leaf() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.integers(),
        st.builds(lambda n: 10**n, st.integers(4_290, 5_000)),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=20),
        st.binary(max_size=20),
        st.builds(RaisingRepr),
        st.builds(RaisingIterable),
        st.builds(endless),
        st.none(),
    )


def _odd_values() -> st.SearchStrategy[Any]:
    return st.recursive(
        _leaf(),
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.text(max_size=5), children, max_size=4),
            st.builds(lambda xs: (x for x in xs), st.lists(children, max_size=4)),
            st.builds(lambda xs: [*xs, xs], st.lists(children, max_size=3)),  # cycle
            st.builds(lambda x: {RaisingKey(): x}, children),
            st.tuples(children, children),
        ),
        max_leaves=12,
    )


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(value=_odd_values())
def test_property_odd_values_through_layer_and_guard(value: Any) -> None:
    layer = _layer(window=3_000)
    assert isinstance(to_json_text(value), str)
    message = ToolMessage(
        content=[{"type": "text", "text": "y " * 3_000}, {"type": "odd", "value": value}],
        tool_call_id="c1",
        name="odd",
        id="t1",
    )
    out = layer.process_tool_message(message)
    assert out.id == "t1"
    assert to_json_text(out.content)
    guard = BudgetGuard(layer)
    messages = [
        HumanMessage("go", id="h1"),
        AIMessage("", tool_calls=[{"id": "c1", "name": "odd", "args": {}}], id="a1"),
        message,
        AIMessage("done", id="a2"),
        HumanMessage("again", id="h2"),
    ]
    assert isinstance(guard.invoke({"messages": messages}), dict)


# A spec of an odd value, built fresh for every use (generators are consumed once).
_LEAVES = ("int", "bigint", "float", "text", "bytes", "repr", "raising-iter", "endless", "none")


def _leaf_specs() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.tuples(st.just("int"), st.integers()),
        st.tuples(st.just("bigint"), st.integers(4_290, 6_000), st.booleans()),
        st.tuples(st.just("float"), st.floats(allow_nan=True, allow_infinity=True)),
        st.tuples(st.just("text"), st.text(max_size=30)),
        st.tuples(st.just("bytes"), st.binary(max_size=30)),
        st.tuples(st.sampled_from(["repr", "raising-iter", "endless", "none"])),
    )


def _specs() -> st.SearchStrategy[Any]:
    return st.recursive(
        _leaf_specs(),
        lambda children: st.one_of(
            st.tuples(
                st.sampled_from(["list", "gen", "cycle", "tuple"]), st.lists(children, max_size=4)
            ),
            st.tuples(st.just("dict"), st.dictionaries(st.text(max_size=6), children, max_size=4)),
            st.tuples(st.just("raising-key"), children),
            st.tuples(st.just("long-gen"), children),
        ),
        max_leaves=10,
    )


def build(spec: Any) -> Any:
    """A fresh odd value from its spec."""
    kind = spec[0]
    if kind in ("int", "float", "text", "bytes"):
        return spec[1]
    if kind == "bigint":
        return (-1 if spec[2] else 1) * 10 ** spec[1]
    if kind == "repr":
        return RaisingRepr()
    if kind == "raising-iter":
        return RaisingIterable()
    if kind == "endless":
        return endless()
    if kind == "none":
        return None
    if kind == "list":
        return [build(c) for c in spec[1]]
    if kind == "tuple":
        return tuple(build(c) for c in spec[1])
    if kind == "gen":
        return (build(c) for c in spec[1])
    if kind == "cycle":
        value = [build(c) for c in spec[1]]
        value.append(value)
        return value
    if kind == "dict":
        return {k: build(c) for k, c in spec[1].items()}
    if kind == "raising-key":
        return {RaisingKey(): build(spec[1])}
    if kind == "long-gen":  # more items than the layer reads
        return (build(spec[1]) for _ in range(MAX_ITEMS + 3))
    raise AssertionError(spec)


def _reads_everything(spec: Any) -> bool:
    """Whether the layer reads the whole value (no generator cut by the item or time limit)."""
    kind = spec[0]
    if kind in ("endless", "long-gen"):
        return False
    if kind in ("list", "gen", "cycle", "tuple"):
        return all(_reads_everything(c) for c in spec[1])
    if kind == "dict":
        return all(_reads_everything(c) for c in spec[1].values())
    if kind == "raising-key":
        return _reads_everything(spec[1])
    return True


def _json_values(text: str) -> Any:
    """The values a stored text holds (one JSON document, or JSON lines)."""
    try:
        return json.loads(text)
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(spec=_specs(), window=st.sampled_from([3_000, 128_000]))
def test_property_each_odd_value_is_a_bounded_view_that_keeps_the_raw(
    spec: Any, window: int
) -> None:
    """Raw odd output: the view fits its budget, and the store holds every value it showed."""
    layer = _layer(window=window)
    outcome = layer.pipeline.process(build(spec), tool_name="odd")
    assert isinstance(outcome.content, str)
    budget = layer.pipeline.budget_for("odd")
    assert layer.pipeline.counter.count(outcome.content) <= budget.tokens
    assert len(outcome.content) <= budget.chars
    assert outcome.record is not None  # never dropped silently: the raw result is stored
    stored = layer.store.read(outcome.record.record_id, principal=outcome.record.principal).data
    fresh = build(spec)
    if isinstance(fresh, (str, bytes)):  # text and bytes are stored as they are
        assert stored == fresh
    elif _reads_everything(spec):
        assert isinstance(stored, str)
        expected = json.loads(to_json_text(fresh))
        assert _json_values(stored) in (expected, [expected]), (stored[:300], expected)
        assert "stopped after" not in stored
    else:  # the stored text and the view both say where reading stopped
        assert isinstance(stored, str)
        assert "stopped after" in stored
        assert "stopped after" in outcome.content or not outcome.passed_through


@pytest.mark.parametrize("name", ["int over 4300 digits", "list of both", "finite generator"])
def test_wrapped_tool_called_with_a_tool_call(name: str) -> None:
    @tool
    def odd() -> Any:
        """Returns an odd value."""
        return {"value": ODD[name]()}

    layer = _layer()
    wrapped = layer.wrap_tool(odd)
    message = wrapped.invoke({"type": "tool_call", "id": "c1", "name": "odd", "args": {}})
    assert isinstance(message, ToolMessage)
    text = to_json_text(message.content)
    assert "generator object" not in text  # read, not printed as its repr
    assert layer.is_processed(message)
    assert message.tool_call_id == "c1"
    assert message.name == "odd"
    if name == "finite generator":
        assert "49" in text  # its values are shown


def _odd_tool(name: str) -> Any:
    @tool
    def odd() -> Any:
        """Returns an odd value."""
        return {"value": ODD[name]()}

    return odd


def _call(call_id: str = "c1", name: str = "odd", **args: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "args": args}


@pytest.mark.parametrize("name", list(ODD))
def test_every_odd_value_through_a_tool_call_is_a_bounded_view(name: str) -> None:
    """Sync: the layer reads the raw value (LangChain's text conversion never runs on it)."""
    layer = _layer()
    message = layer.wrap_tool(_odd_tool(name)).invoke(_call())
    assert isinstance(message, ToolMessage)
    assert layer.is_processed(message)
    assert isinstance(message.content, str)
    assert layer.token_counter.count(message.content) <= layer.result_budget.tokens
    assert "generator object" not in message.content
    assert "range(" not in message.content or name != "huge range"


@pytest.mark.parametrize("name", list(ODD))
async def test_every_odd_value_through_an_async_tool_call_is_a_bounded_view(name: str) -> None:
    layer = _layer()
    message = await layer.wrap_tool(_odd_tool(name)).ainvoke(_call())
    assert isinstance(message, ToolMessage)
    assert layer.is_processed(message)
    assert isinstance(message.content, str)
    assert "generator object" not in message.content
    assert layer.token_counter.count(message.content) <= layer.result_budget.tokens


def test_a_generator_through_a_tool_call_is_read_and_stored_whole() -> None:
    @tool
    def rows() -> Any:
        """Returns rows lazily."""
        return ({"id": i, "status": "ok" if i % 7 else "failed"} for i in range(5_000))

    layer = _layer()
    message = layer.wrap_tool(rows).invoke(_call(name="rows"))
    view = layer.view_of(message)
    assert view is not None
    assert view.stored
    assert view.record_id is not None
    stored = layer.store.read(view.record_id, principal=layer.principal_for(None)).data
    assert '"id": 4999' in stored or '"id":4999' in stored  # every row read, none lost
    assert "5,000" in message.text  # the view says how many rows there are


def test_content_and_artifact_tool_keeps_its_artifact_and_raw_content() -> None:
    @tool(response_format="content_and_artifact")
    def query() -> Any:
        """Returns rows and an artifact."""
        return (n * n for n in range(30)), {"source": "db"}

    layer = _layer()
    message = layer.wrap_tool(query).invoke(_call(name="query"))
    assert layer.is_processed(message)
    assert "generator object" not in message.text
    assert "841" in message.text  # 29 * 29: the values, not the repr
    assert layer.tool_artifact(message) == {"source": "db"}


def test_injected_tool_call_id_still_reaches_the_tool() -> None:
    @tool
    def echo_id(tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Returns the call id in a dict."""
        return {"called_as": tool_call_id, "big": 10**5_000}

    layer = _layer()
    message = layer.wrap_tool(echo_id).invoke(_call(call_id="call-42", name="echo_id"))
    assert message.tool_call_id == "call-42"
    assert "call-42" in message.text


def test_text_and_errors_take_langchains_own_path() -> None:
    @tool
    def text() -> str:
        """Returns text."""
        return "plain text"

    @tool
    def broken() -> Any:
        """Fails."""
        raise ToolException("the database is down")

    broken.handle_tool_error = True
    layer = _layer()
    assert "plain text" in layer.wrap_tool(text).invoke(_call(name="text")).text
    failed = layer.wrap_tool(broken).invoke(_call(name="broken"))
    assert failed.status == "error"
    assert "the database is down" in failed.text


def test_disabled_policy_gives_what_langchain_gives() -> None:
    @tool
    def small() -> Any:
        """Returns a small dict."""
        return {"a": "é", "n": [1, 2]}

    layer = ResultLayer(
        context_window=8_000,
        store="memory",
        token_counter="approximate",
        tool_policies={"small": ToolPolicy(enabled=False)},
    )
    plain = small.invoke(_call(name="small"))
    message = layer.wrap_tool(small).invoke(_call(name="small"))
    assert message.content == plain.content == '{"a": "é", "n": [1, 2]}'
    assert not layer.is_processed(message)


def test_tool_node_runs_the_raw_path() -> None:
    layer = _layer()
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode([layer.wrap_tool(_odd_tool("finite generator"))]))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    calls = [{"name": "odd", "args": {}, "id": "c9", "type": "tool_call"}]
    out = graph.compile().invoke({"messages": [AIMessage("", tool_calls=calls, id="a1")]})
    out["messages"] = out["messages"][1:]
    (message,) = out["messages"]
    assert layer.is_processed(message)
    assert "generator object" not in message.text
    assert "49" in message.text  # the generator's values
