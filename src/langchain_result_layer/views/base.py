r"""The view interface: how one kind of result is prepared, stored, rendered and paged.

A view class turns a tool's output into

1. `Prepared`: the exact raw form to store (text or bytes) plus whatever parsed data it needs;
2. `Rendered`: the model-visible content (within `ViewContext.budget`) and its `ResultView`;
3. on a fetch, the rendering of one slice (a page, a line range, a character range).

Views are pure: the pipeline does the storing, the fetch tool does the reading, and views only
compute. A layer chooses among the views of its `ViewRegistry` (`views.registry`).

Example:
    ```python
    from langchain_result_layer.core.budget import Budget
    from langchain_result_layer.core.tokens import ApproximateTokenCounter
    from langchain_result_layer.views.base import Prepared, Rendered, ResultViewBuilder
    from langchain_result_layer.views.registry import ViewRegistry


    class CsvView(ResultViewBuilder):
        kind = "csv"

        def sniff(self, payload: object) -> float:
            return 0.9 if isinstance(payload, str) and payload.count(",") > 10 else 0.0

        def prepare(self, payload: object) -> Prepared:
            return Prepared(raw=str(payload))

        def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
            head = str(prepared.raw)[: ctx.budget.chars]
            return Rendered(content=head, view=ResultView(kind=self.kind))


    view = ViewRegistry.builtin().with_views(CsvView()).choose("a,b\n" * 20)
    ctx = ViewContext(budget=Budget(tokens=50, chars=12), counter=ApproximateTokenCounter())
    assert view.render(view.prepare("a,b\n" * 20), ctx).content == "a,b\na,b\na,b\n"
    ```
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeAlias

from langchain_result_layer.core.budget import Budget
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import DEFAULT_FETCH_TOOL_NAME
from langchain_result_layer.core.slice_request import SliceRequest
from langchain_result_layer.core.tokens import TokenCounter
from langchain_result_layer.core.view import ResultView

if TYPE_CHECKING:
    from langchain_result_layer.views.slices import SliceAt

__all__ = [
    "DEFAULT_MAX_READ_CHARS",
    "IMAGE_TOKENS",
    "FetchSliceError",
    "FetchSteps",
    "Prepared",
    "RecordInfo",
    "Rendered",
    "ResultViewBuilder",
    "SliceRead",
    "SliceRequest",
    "ViewContext",
    "budget_with",
    "render_slice",
]

IMAGE_TOKENS = 1_600
"""Default fixed token cost of one media block (an image is about this much for most models)."""


@dataclass(frozen=True, slots=True)
class ViewContext:
    """Everything a view needs to render one result.

    Example:
        ```python
        ctx = ViewContext(budget=Budget(tokens=2_000, chars=8_000), counter=counter)
        ```
    """

    budget: Budget
    """Bound for the whole rendered content."""
    counter: TokenCounter
    """Token counter the budget is measured with."""
    tool_name: str | None = None
    """Name of the tool that produced the result."""
    is_error: bool = False
    """Whether the tool reported an error."""
    reference: Reference | None = None
    """Reference to the stored raw result (no range), when stored."""
    store_note: str | None = None
    """What to tell the model when the raw result could not be stored."""
    fetch_tool_name: str = DEFAULT_FETCH_TOOL_NAME
    """Name of the fetch tool, for "read more" calls."""
    head_fraction: float | None = None
    """Per-tool override of the head share (text-like views)."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Per-tool view options (for example `fields`, `page_size`)."""
    image_tokens: int = IMAGE_TOKENS
    """Fixed token cost of one media block (content that is a block list)."""
    fence_parts: bool = True
    """Whether parts shown whole (the text blocks of a block list) are fenced as untrusted
    data; parts a view cuts are fenced by that view."""
    part_references: Mapping[int, Reference] = field(default_factory=dict)
    """References of parts stored on their own (the cut text blocks of a block list), by
    index."""
    cap_notes: tuple[str, ...] = ()
    """What the store could not keep of the result (a size cap), longest wording first;
    empty when it kept everything."""
    choose: Callable[[object], ResultViewBuilder] | None = None
    """Picks the view of a part (the layer's registry); `None`: parts are shown as text."""


@dataclass(slots=True)
class Prepared:
    r"""A tool output made ready for storing and rendering.

    Example:
        ```python
        prepared = Prepared(raw="a\\nb\\n", data=None)
        ```
    """

    raw: str | bytes
    """The exact form to store (`str`, or `bytes` for binary results). Reading every range of it
    back rebuilds it exactly."""
    data: Any = None
    """Parsed data the view keeps for rendering (rows, parsed JSON, ...)."""
    text: bool = True
    """Whether `raw` should be shown as text when it fits the budget unchanged."""
    facts: dict[str, Any] = field(default_factory=dict)
    """Facts learnt while preparing (row count, columns, ...)."""

    @property
    def raw_text(self) -> str:
        r"""`raw` as text (bytes decoded as UTF-8, undecodable bytes replaced).

        Example:
            ```python
            assert Prepared(raw=b"caf\xc3\xa9 \xff").raw_text == "café \ufffd"
            ```
        """
        raw = self.raw
        return raw if isinstance(raw, str) else raw.decode("utf-8", "replace")


@dataclass(slots=True)
class Rendered:
    """What the model sees and the record of it.

    Example:
        ```python
        rendered = Rendered(content="first lines ...", view=ResultView(kind="text"))
        assert not rendered.view.truncated
        ```
    """

    content: str | list[Any]
    """Model-visible content: a string, or a list of content blocks."""
    view: ResultView
    """The structured record (becomes the `ToolMessage.artifact`)."""


DEFAULT_MAX_READ_CHARS = 64 * 1024 * 1024
"""Most characters (bytes) one fetch reads from the store at once (64 MiB).

Fetches that need a whole record (a `?path=` of a JSON result, a page of rows whose rows may
span lines) read at most this much; a larger record is refused with a message that says how
to read it in parts instead. Records are capped by the store anyway (256 MiB by default)."""


@dataclass(frozen=True, slots=True)
class RecordInfo:
    """What a fetch knows about a stored record before it reads it.

    Example:
        ```python
        RecordInfo(record_id="AbCdEfGhIjKlMnOpQrStUv", kind="rows", size=4_000, lines=100)
        ```
    """

    record_id: str
    """The record's id."""
    kind: str
    """The view kind that stored it."""
    size: int
    """Characters (bytes when binary) of the original result."""
    lines: int
    """Lines of the original result."""
    binary: bool = False
    """Whether the record is bytes."""
    capped: bool = False
    """Whether the store kept only a head and a tail of it."""
    tool_name: str | None = None
    """The tool that produced it."""
    max_read: int = DEFAULT_MAX_READ_CHARS
    """Most characters (bytes) one read may return."""


class SliceRead(Protocol):
    """One read answered by the store (`stores.base.ReadResult` has this shape).

    Example:
        ```python
        def shown(part: SliceRead) -> int:
            return part.end_offset - part.offset
        ```
    """

    @property
    def data(self) -> str | bytes:
        """The slice, exactly as stored."""
        ...

    @property
    def offset(self) -> int:
        """Offset of the first character (byte) served."""
        ...

    @property
    def end_offset(self) -> int:
        """One past the last character (byte) served."""
        ...

    @property
    def start_line(self) -> int | None:
        """First line served (line reads)."""
        ...

    @property
    def first_line(self) -> int | None:
        """Line holding the first character served."""
        ...

    @property
    def complete(self) -> bool:
        """Whether the whole requested range was served."""
        ...


class FetchSliceError(ValueError):
    """A fetch that cannot be served; the message tells the model what to do instead.

    The fetch tool answers with `ToolMessage(status="error")` carrying the message.

    Example:
        ```python
        error = FetchSliceError("$.items[9] does not exist: $.items is an array of 3.")
        assert isinstance(error, ValueError)  # the fetch tool shows str(error) to the model
        ```
    """


FetchSteps: TypeAlias = Generator[SliceRequest, SliceRead, Rendered]
"""A fetch as a generator: it yields the reads it needs, receives each read, and returns the
rendered slice. The fetch tool runs it against the store (sync or async), so views stay pure."""


class ResultViewBuilder(ABC):
    """Base class of every view kind.

    Subclasses set `kind`, implement `sniff`, `prepare` and `render`, and may override
    `slice_for` and `render_slice` to make pages mean something other than lines.

    Example:
        ```python
        class UpperView(ResultViewBuilder):
            kind = "upper"

            def sniff(self, payload: object) -> float:
                return 0.0

            def prepare(self, payload: object) -> Prepared:
                return Prepared(raw=str(payload))

            def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
                text = str(prepared.raw).upper()[: ctx.budget.chars]
                return Rendered(content=text, view=ResultView(kind=self.kind))
        ```
    """

    kind: ClassVar[str] = "text"
    """Name of the kind, used in references and `ToolPolicy.kind`."""

    default_page_size: ClassVar[int] = 100
    """Units per page when a reference gives `page` without `page_size`."""

    places_notes: ClassVar[bool] = False
    """Whether the view places the store's notes (`ViewContext.cap_notes`) itself; otherwise
    the pipeline puts them after the rendered text."""

    sniff_ceiling: ClassVar[float] = 1.0
    """The highest score this class's own `sniff` can return. A registry does not ask a view
    whose ceiling cannot beat the best score found so far (it could not be chosen); it counts
    only when declared by the class that defines `sniff` (a subclass that overrides `sniff`
    without declaring one is always asked)."""

    @abstractmethod
    def sniff(self, payload: object) -> float:
        """How likely `payload` is this kind: 0 (no) to 1 (certainly).

        Args:
            payload: The tool's output (string, blocks, bytes, or any object).

        Returns:
            A confidence score.
        """

    @abstractmethod
    def prepare(self, payload: object) -> Prepared:
        """Make the raw form to store and parse what rendering needs.

        Args:
            payload: The tool's output.

        Returns:
            The prepared result.
        """

    @abstractmethod
    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        """Render the view within `ctx.budget` (tokens and characters, exactly).

        Args:
            prepared: Output of `prepare`.
            ctx: Budget, counter, reference and options.

        Returns:
            The content and its `ResultView`.
        """

    def slice_for(self, reference: Reference, line_count: int) -> SliceRequest:
        """Translate a reference's range into store coordinates.

        The default treats a page as `page_size` lines.

        Args:
            reference: The reference being fetched.
            line_count: Lines in the stored record.

        Returns:
            The slice to read.
        """
        if reference.offset is not None or reference.limit is not None:
            return SliceRequest(offset=reference.offset or 0, limit=reference.limit)
        if reference.page is not None or reference.page_size is not None:
            size = reference.page_size or self.default_page_size
            page = reference.page or 1
            start = (page - 1) * size + 1
            return SliceRequest(start_line=start, end_line=start + size - 1)
        if reference.start_line is not None or reference.end_line is not None:
            start = reference.start_line or 1
            end = reference.end_line if reference.end_line is not None else max(start, line_count)
            return SliceRequest(start_line=start, end_line=end)
        return SliceRequest(start_line=1, end_line=max(1, line_count))

    def fetch_slice(self, reference: Reference, record: RecordInfo, ctx: ViewContext) -> FetchSteps:
        """Serve a fetch: yield the reads it needs, then return the rendered slice.

        The default reads `slice_for(reference)` (at most `ctx.budget.chars` characters: no
        more can be shown) and renders it with `render_slice`. Views whose pages are not line
        ranges (rows, JSON paths) override it and may read several times.

        Args:
            reference: The reference being fetched (with its range).
            record: What is known about the stored record.
            ctx: Budget, counter, the record's base reference and the tool's view options.

        Returns:
            A generator of `SliceRequest`s that is sent each `SliceRead` and returns the
            `Rendered` slice. It raises `FetchSliceError` when the fetch cannot be served.

        Example:
            ```python
            from langchain_result_layer import Principal
            from langchain_result_layer.views.text import TextView

            meta = store.info(ref.record_id, principal=Principal())
            record = RecordInfo(record_id=ref.record_id, kind="text",
                                size=meta.original_size, lines=meta.line_count)
            steps = TextView().fetch_slice(ref.with_lines(2_401, 2_401), record, ctx)
            request = next(steps)
            try:  # the fetch tool's driver: answer every read until the steps return
                while True:
                    part = store.read(ref.record_id, principal=Principal(),
                                      start_line=request.start_line, end_line=request.end_line,
                                      offset=request.offset, limit=request.limit,
                                      max_size=request.max_size)
                    request = steps.send(part)
            except StopIteration as done:
                shown = done.value
            assert "undefined reference" in shown.content
            ```
        """
        request = self.slice_for(reference, record.lines)
        if request.max_size is None:
            request = replace(request, max_size=ctx.budget.chars)
        request = _with_lookahead(self, request, record)
        part = yield request
        start_line = part.first_line if part.first_line is not None else part.start_line
        return render_slice(
            self,
            part.data,
            reference=reference,
            slice_start_line=start_line,
            slice_offset=part.offset,
            record_size=record.size,
            record_lines=record.lines,
            ctx=ctx,
        )


_LOOKAHEAD = 3  # a line read also reads up to this many times its length after it


def _with_lookahead(view: object, request: SliceRequest, record: RecordInfo) -> SliceRequest:
    """Read some lines after a line range, so its `next` can be sized to the budget.

    Only for the default slice rendering, which shows no line after the range asked for
    and uses the rest to choose how many lines the next page asks for.
    """
    if callable(getattr(view, "render_slice", None)):
        return request
    if request.offset is not None or request.limit is not None or request.end_line is None:
        return request
    start = request.start_line or 1
    if request.end_line >= record.lines:
        return request
    span = max(1, request.end_line - start + 1)
    return replace(request, end_line=min(record.lines, request.end_line + _LOOKAHEAD * span))


def budget_with(ctx: ViewContext, budget: Budget) -> ViewContext:
    """A copy of `ctx` with another budget.

    Args:
        ctx: The context.
        budget: The new budget.

    Returns:
        The new context.

    Example:
        ```python
        smaller = budget_with(ctx, ctx.budget.scaled(0.5))
        ```
    """
    return replace(ctx, budget=budget)


def render_slice(
    view: ResultViewBuilder,
    data: str | bytes,
    *,
    reference: Reference,
    slice_start_line: int | None,
    slice_offset: int,
    record_size: int,
    record_lines: int,
    ctx: ViewContext,
) -> Rendered:
    r"""Render a fetched slice with `view.render_slice` when the view defines it.

    Views may define `render_slice(data, *, reference, slice_start_line, slice_offset,
    record_size, record_lines, ctx) -> Rendered` to show pages their own way (rows as a
    table); otherwise the slice is shown as fenced text within the budget, with a `next`
    reference.

    Args:
        view: The view of the record's kind.
        data: The slice read from the store.
        reference: The reference being fetched.
        slice_start_line: Line number of the slice's first line (line reads).
        slice_offset: Offset of the slice's first character (byte).
        record_size: Size of the whole record.
        record_lines: Lines of the whole record.
        ctx: Budget, counter and the record's base reference.

    Returns:
        The rendered slice.

    Example:
        ```python
        from langchain_result_layer.views.text import TextView

        shown = render_slice(TextView(), "a\\nb\\n", reference=ref.with_lines(1, 2),
                             slice_start_line=1, slice_offset=0, record_size=4, record_lines=2,
                             ctx=ctx)
        assert "a\\nb" in shown.content
        ```
    """
    at: SliceAt = {
        "reference": reference,
        "slice_start_line": slice_start_line,
        "slice_offset": slice_offset,
        "record_size": record_size,
        "record_lines": record_lines,
    }
    custom = getattr(view, "render_slice", None)
    if callable(custom):
        result = custom(data, ctx=ctx, **at)
        if isinstance(result, Rendered):
            return result
    from langchain_result_layer.views.slices import render_text_slice  # noqa: PLC0415

    return render_text_slice(data, kind=view.kind, ctx=ctx, **at)
