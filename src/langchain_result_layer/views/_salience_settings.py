"""The settings of the line ranking (`views._salience`): every judgement call, named once.

Each field says what it trades; `DEFAULT_SETTINGS` holds the defaults chosen on the tuned
repositories of the evidence benchmark. Views take a `SalienceSettings` (for example
`CommandView(salience=...)`); `benchmarks/evidence_recall.py --tuned name=value` tries others.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_SETTINGS", "SalienceSettings"]


@dataclass(frozen=True, slots=True)
class SalienceSettings:
    r"""Every number of the line ranking that is a judgement call, with what it trades.

    Weights multiply a line's salience (see `core.evidence`: 2 warning ... 9 failing exit
    status); shares are the part of an anchor's weight that a line near it gets; spans are
    counted in lines. The defaults were chosen on the tuned repositories of the evidence
    benchmark (`benchmarks/evidence_recall.py`) and are reported on the others.

    Example:
        ```python
        from langchain_result_layer.views._salience import analyse

        analyse("error: x\n", settings=SalienceSettings(repeat_block=0.4))
        ```
    """

    # --- position
    recency_min: float = 0.55
    """Weight of an error at the very start of the output (1.0 at its end, growing with
    the square of the position): failures are reported late, but a high floor keeps an
    early cause in play."""

    failed_step_boost: float = 1.4
    """Weight of an error inside a step known to have failed (its prompt to its verdict):
    that step's output is where its failure is explained."""

    outside_failed_step: float = 0.7
    """Weight of an error outside every step known to have failed, when such steps exist:
    an install step's warnings are rarely the cause. Lower hides more of a cause printed
    before the step's prompt."""

    step_lookback: int = 5_000
    """How far (lines) before a verdict its step's prompt may be; farther, the step is
    taken to start `unknown_step_lines` before the verdict."""

    unknown_step_lines: int = 400
    """Length of a failed step whose prompt was not found."""

    # --- anchors
    first_error_boost: float = 1.25
    """Factor for the first strong error (in the failed step when known) and the last
    distinct error: the first is often the cause of the others, the last the verdict."""

    item_run_gap: int = 3
    """Entries of a failure list at most this many lines apart form one list."""

    item_run_step: float = 0.002
    """How much less each later entry of one list weighs than the list's best (a list is
    read from the top)."""

    item_run_floor: float = 0.25
    """The least share of the list's best an entry keeps, however long the list (a linter's
    900 findings: without it the 501st and later would weigh nothing or less)."""

    repeat_block: float = 0.5
    """Weight of a later copy of an error line already seen (the same text): the first copy
    carries the block, the copies its count. Lower gives distinct failures more room."""

    repeat_sibling_gap: int = 6
    """A line of the same shape at most this many lines after the previous one is the next
    entry of one list (a sibling), not a copy: it is lowered only when that list is a copy.
    """

    # --- context
    after_span: int = 150
    """How many lines after an anchor its context may reach."""

    continuation_decay: float = 0.99
    """Per-line factor of the context weight along continuation lines (stack frames,
    indented detail, diff lines): a long trace keeps most of its weight."""

    plain_decay: float = 0.8
    """Per-line factor along other lines (and per blank line)."""

    plain_run: int = 3
    """Context stops after this many consecutive plain lines (or two blank lines)."""

    before_span: int = 3
    """How many lines before an anchor get context (the command or test that ran)."""

    before_decay: float = 0.55
    """Per-line factor of the context before an anchor."""

    trace_tail_frames: int = 4
    """How many of the last lines of a stack trace (the entry point: the test method,
    the runner) keep most of the error's weight however deep the trace is."""

    trace_tail_share: float = 0.75
    """The share of the error's weight those last lines keep."""

    rare_code_min_lines: int = 20
    """Diagnostics led by a location and a code (`src/a.py:3:1: F821 ...`) a text must hold
    before a code printed once among them is evidence (a linter's one finding of its kind
    among hundreds of style messages). Fewer: no code is rare."""

    rare_code_max: int = 5
    """At most this many codes printed once are raised; more, and once is not rare."""

    header_span: int = 40
    """How far above an indented anchor its unindented header is looked for."""

    header_share: float = 0.7
    """Share of the anchor's weight the header above an indented report gets; `n` anchors
    of one block give it `1 - (1 - share) ** n` of the latest one's (a header over a long
    list ranks near the list's first line, one over a single error below its context)."""

    # --- floors
    tail_floor: float = 2.5
    """Priority of the last non-blank line (exit status, summary); each line above it gets
    `tail_decay` of the one below. An error result raises it by `error_tail_boost`. Below
    the pre-verdict and rare-line floors, above the fill: the closing lines are a fallback
    that every line with a reason of its own outranks. Chosen by the ranking fit
    (`python -m benchmarks.ranking_fit`): a factor on the tail's priority, fitted on three
    folds of tuned repositories and tested on the fourth, came out at about 1/e of the old
    6.5 in every fold (1.5 to 3.0 rank the same)."""

    tail_decay: float = 0.6
    """Per-line factor of the tail floor."""

    error_tail_boost: float = 1.3
    """Factor on the tail floor when the tool reported an error (`status="error"`)."""

    tail_floor_min: float = 0.3
    """The tail floor stops at the line it would give less than this."""

    pre_verdict_floor: float = 6.0
    """Priority of the last line of output before a failure verdict; the lines above it
    get `pre_verdict_decay` each, for at most `pre_verdict_lines` lines."""

    pre_verdict_decay: float = 0.88
    """Per-line factor of the pre-verdict floor."""

    pre_verdict_lines: int = 15
    """How many lines before a verdict get the pre-verdict floor."""

    pre_verdict_reach: int = 60
    """How far (lines) above a verdict those lines are looked for."""

    rare_span: int = 30
    """How many lines before a failure verdict are looked at for lines of a rare shape."""

    rare_context: int = 2_000
    """Over how many lines before the verdict a shape's rarity is counted."""

    rare_floor: float = 4.0
    """Priority of the rare line nearest the verdict: below a labelled error, above the
    fill, so a failure told in unknown words is shown once the known evidence is."""

    rare_decay: float = 0.97
    """Per-line factor of that priority, from the verdict up."""

    # --- ranking
    exact_repeat: float = 0.3
    """Factor, per copy already shown, for a line identical to a shown one: a recursion's
    repeated frames and a repeated message add nothing."""

    item_repeat: float = 0.97
    """Per-line factor for the sixth and later lines of one group of failure entries (each
    failed test matters)."""

    other_repeat: float = 0.75
    """Per-line factor for the third and later lines of any other group (a block of similar
    lines does not crowd out everything else)."""

    # --- fill
    fill_anchors: int = 24
    """How many of the strongest anchors get fill around them."""

    fill_after: int = 120
    """Lines of fill after each of those anchors (before it: a quarter as many)."""

    fill_tail: int = 600
    """Lines of fill above the tail."""

    fill_share: float = 0.02
    """Priority of fill as a share of its anchor's weight: below every line that has a
    reason of its own, so fill only widens windows once all evidence is shown."""

    fill_decay: float = 0.995
    """Per-line factor of fill with its distance from the anchor."""

    # --- shown line lengths (characters; the body is the budget's tokens times the
    # characters per token of the top lines, at most the budget's characters)
    line_share: float = 1 / 14
    """Most lines may take this share of the body ..."""

    line_min: int = 160
    """... at least this many characters ..."""

    line_max: int = 500
    """... and at most this many: a long context line is cut within itself."""

    error_line_share: float = 0.25
    """An error line (and the lines of the strongest blocks) may take this share."""

    anchor_line_share: float = 0.45
    """Each of the `anchor_lines` top lines may take this share: the line that explains the
    failure is shown whole up to here, however long (a JSON error response, a Maven goal)."""

    anchor_lines: int = 3
    """How many of the top lines get the anchor share."""

    whole_line_slack: float = 1.5
    """A line at most this many times its limit is shown whole: a cut would save at most a
    third of it, less its own marker (about 15 tokens), and the line would no longer be
    readable as it stands (a long labelled failure line just over its limit)."""

    compact_budget_tokens: int = 1_500
    """Below this budget the error and anchor shares are `compact_line_factor` of the above,
    and the header and footer are shorter (one omitted range listed, not three): their fixed
    cost would otherwise take a fifth of the view."""

    compact_line_factor: float = 0.6
    """Factor on the error and anchor shares below `compact_budget_tokens`."""

    gap_fill_lines: int = 3
    """A gap of at most this many lines between two shown lines is shown ..."""

    gap_fill_chars: int = 200
    """... when its lines take at most this many characters together: about what the window
    marker it saves costs, and the lines around evidence come with it."""

    # --- huge inputs
    head_part_chars: int = 256_000
    """Of an input over `FULL_ANALYSIS_CHARS`, its first this many characters are analysed
    in full."""

    tail_part_chars: int = 1_000_000
    """... and its last this many."""

    middle_hits: int = 48
    """Distinct error lines looked for in the middle (each analysed in a small window)."""

    middle_candidates: int = 1_200
    """Candidate lines examined in the middle at most."""

    middle_before: int = 5
    """Lines before a middle error in its window."""

    middle_after: int = 40
    """Lines after a middle error in its window."""

    middle_window_chars: int = 16_000
    """Characters of a middle window at most."""


DEFAULT_SETTINGS = SalienceSettings()
