"""What a curation step is, declared once: `StepSpec` and the typed record of its counts.

Each step's spec lives in its own service module (service/steps/<step>.py) and the registry
(service/steps/registry.py) lists them in the order an operator reads them. Everything that
used to keep a table per step derives from the specs instead: the cycle (core/cycles.py), the
health record (core/health.py), the CLI and markdown tables (core/render/), the Dagster ops and
their graph (defs/ops.py, defs/job.py). Functions here and in core/ take the specs (or the
ordered list of them) and never name a step.

A step's counts are a frozen dataclass: a field per count, with its meaning. A step that
reports a count its record does not declare fails (`from_counts`), so a renamed count cannot
be written under a name nothing reads; reading a stored row (`from_row`) gives None for a
count the row lacks (an older row, or a path of the step that does not report it), keeps
keys it does not know aside instead of dropping them, and asking for an undeclared count is a
`KeyError`, not a silent 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

C = TypeVar("C", bound="StepCounts")


def count(meaning: str, *, key: str | None = None) -> Any:
    """A field of a counts record: reported or not (None), with what it means. `key`: the
    count's name in the row when it cannot be the field's (a Python keyword such as "pass")."""
    return field(default=None, metadata={"meaning": meaning, **({"key": key} if key else {})})


def _keys(cls) -> dict[str, str]:
    """{count name: field name} of a record, in its order."""
    return {f.metadata.get("key", f.name): f.name for f in fields(cls) if not f.metadata.get("internal")}


@dataclass(frozen=True, kw_only=True)
class StepCounts:
    """Base of every step's counts record. Subclasses are `@dataclass(frozen=True, kw_only=True)`
    with `count(...)` fields; a field left None was not reported and is not shown or stored."""

    # Keys of a stored row this record does not declare (renamed or retired counts): shown as
    # they were, never read as a count.
    unrecognised: Mapping[str, Any] = field(default_factory=dict, repr=False, metadata={"internal": True})

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The counts' names, as the row, the metadata and the tables call them."""
        return tuple(_keys(cls))

    @classmethod
    def meanings(cls) -> dict[str, str]:
        by_field = {f.name: f.metadata.get("meaning", "") for f in fields(cls)}
        return {key: by_field[name] for key, name in _keys(cls).items()}

    @classmethod
    def from_counts(cls: type[C], counts: Mapping[str, Any], *, step: str = "") -> C:
        """The record of what a step just reported; a count it does not declare is an error."""
        keys = _keys(cls)
        unknown = sorted(set(counts) - set(keys))
        if unknown:
            raise ValueError(f"step {step or cls.__name__} reported count(s) {', '.join(unknown)} that "
                             f"{cls.__name__} does not declare: declare them in the step's counts record")
        return cls(**{keys[key]: value for key, value in counts.items()})

    @classmethod
    def from_row(cls: type[C], entry: Mapping[str, Any]) -> C:
        """The record of a step's entry in a stored cycle row (without its status and error)."""
        keys = _keys(cls)
        return cls(**{keys[key]: value for key, value in entry.items() if key in keys},
                   unrecognised={key: value for key, value in entry.items() if key not in keys})

    def value(self, key: str) -> Any:
        """A declared count (None: not reported); an undeclared one is a KeyError."""
        keys = _keys(type(self))
        if key not in keys:
            raise KeyError(f"{type(self).__name__} has no count {key!r}")
        return getattr(self, keys[key])

    def reported(self, key: str) -> bool:
        return self.value(key) is not None

    def total(self, *keys: str) -> int:
        """The sum of declared counts, an unreported one adding 0."""
        return sum(int(self.value(key) or 0) for key in keys)

    def as_dict(self) -> dict[str, Any]:
        """The reported counts, in the record's order, then any unrecognised ones: the step's
        output metadata and its entry in the cycle row."""
        reported = {key: getattr(self, name) for key, name in _keys(type(self)).items()
                    if getattr(self, name) is not None}
        return {**reported, **self.unrecognised}


@dataclass(frozen=True)
class SummaryColumn:
    """A step's main number in the CLI's cycle table (`curation-pipeline demo`/`run`)."""

    title: str
    counts: tuple[str, ...]  # summed


@dataclass(frozen=True)
class HealthCount:
    """A number of the health record that comes from this step's counts (summed)."""

    key: str  # the health record's key (core/health.py HEALTH_FIELDS)
    counts: tuple[str, ...]
    title: str = ""  # for a key HEALTH_FIELDS does not list: its CLI column and meaning
    meaning: str = ""


# How a step's changes are shown in the Dagster UI and in a preview (core/render/changes.py).
CHANGES = "changes"  # node columns before -> after
MERGES = "merges"  # merged and superseded pairs
SUMMARIES = "summaries"
STALE = "stale"
EMBEDDINGS = "embeddings"
SIGNALS = "signals"
GRAPH = "graph"  # vertices and edges the sync wrote
ASSOCIATIONS = "associations"  # edges between similar nodes


@dataclass(frozen=True)
class StepSpec:
    """One curation step, declared once (see the module docstring)."""

    name: str  # the op name, and the step's key in the cycle row and in node_revisions.step
    number: str  # "1" .. "7", "6b": how the docs and the UI number it
    description: str  # one line: the op's description is "Step <number>: <description>"
    counts: type[StepCounts]
    config: type | None = None  # the step's dg.Config class (config/op_config.py)
    after: tuple[str, ...] = ()  # names of the steps that must finish first
    summary: tuple[SummaryColumn, ...] = ()  # the first is its headline
    count_order: tuple[str, ...] = ()  # how a reader wants its counts (the rest follow)
    health: tuple[HealthCount, ...] = ()
    uses_llm: bool = False  # its counts carry the LLM's (health: llm_calls, acceptance, tokens)
    # Counts that are non-zero when the step changed the namespace (or left changes for later):
    # all zero in every such step means the previous cycle's snapshot still holds.
    changes_namespace: tuple[str, ...] = ()
    changes_view: str = CHANGES
    records_signals: bool = False  # its outcome lists the run's training signals
    # The service function: (StepRun, config, **clients) -> counts; defs/ops.py supplies the
    # clients a step takes (its LLM, its embedder) from the op's resources.
    run: Callable[..., Mapping] | None = None

    @property
    def label(self) -> str:
        return f"{self.number} {self.name}"

    @property
    def op_description(self) -> str:
        return f"Step {self.number}: {self.description}"

    def read(self, entry: Mapping[str, Any] | None) -> StepCounts:
        return self.counts.from_row(entry or {})


def by_name(steps: Sequence[StepSpec]) -> dict[str, StepSpec]:
    return {spec.name: spec for spec in steps}


def check_registry(steps: Sequence[StepSpec]) -> None:
    """Names and numbers are unique, and a step runs only after steps listed before it (so the
    order an operator reads is one the graph can run in)."""
    seen: set[str] = set()
    numbers: set[str] = set()
    for spec in steps:
        if spec.name in seen or spec.number in numbers:
            raise ValueError(f"step {spec.label} is declared twice (name or number)")
        missing = [name for name in spec.after if name not in seen]
        if missing:
            raise ValueError(f"step {spec.label} runs after {', '.join(missing)}, "
                             "which the registry does not list before it")
        seen.add(spec.name)
        numbers.add(spec.number)


def sentence(spec: StepSpec, counts: StepCounts) -> str:
    """The step's counts as one line for the run's log: its main numbers, then the rest in the
    order a reader wants them, e.g. "merged 4, superseded 2 (nodes archived 4, pass full, ...)"."""
    values = counts.as_dict()
    if not values:
        return "reported no counts"
    if "skipped" in values:  # off this cycle (6b with a lexical embedder)
        return f"off: {values['skipped']}"
    lead = ", ".join(f"{column.title} {counts.total(*column.counts)}" for column in spec.summary)
    shown = {key for column in spec.summary for key in column.counts}
    order = [*(key for key in spec.count_order if key in values), *values]
    # A list (the LLM's notes on what it left alone) is in the metadata; the log says how many.
    detail = ", ".join(f"{key.replace('_', ' ')} {len(values[key]) if isinstance(values[key], list) else values[key]}"
                       for key in dict.fromkeys(order) if key not in shown)
    return f"{lead} ({detail})" if lead and detail else lead or detail


# Count groups several steps report (the LLM's tally, the AGE mirror): declared once, mixed
# into the steps' records.
@dataclass(frozen=True, kw_only=True)
class LLMCounts(StepCounts):
    llm_model: str | None = count("the LLM model that answered")
    llm_api: str | None = count("the LLM API used (chat or completion)")
    llm_requests: int | None = count("LLM requests made (answers from the cache included)")
    llm_accepted: int | None = count("LLM answers the fact guard accepted")
    llm_rejected: int | None = count("LLM answers the fact guard rejected")
    llm_unavailable: int | None = count("LLM requests that got no answer (outage, budget, breaker)")
    llm_cache_hits: int | None = count("answers taken from the answer cache")
    llm_input_tokens: int | None = count("LLM input tokens")
    llm_output_tokens: int | None = count("LLM output tokens")
    llm_waited_secs: float | None = count("seconds spent waiting for the LLM")
    llm_breaker_open: bool | None = count("whether the circuit breaker was open at the end")


@dataclass(frozen=True, kw_only=True)
class GraphMirrorCounts(StepCounts):
    age_vertices: int | None = count("vertices mirrored into Apache AGE (AGE backend only)")
    age_edges: int | None = count("edges mirrored into Apache AGE (AGE backend only)")
