"""The bounds of the settings, declared once: the settings models and the op config of the
Dagster launchpad (op_config.py) use these same types, so a value refused in the environment is
refused with the same reason when typed into the launchpad."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, NonNegativeInt, PositiveInt

# A per-cycle limit: 0 is allowed and turns that part of the step off.
Cap = NonNegativeInt
# A count, age or length where 0 means "any" (epoch lag, days, recall count, characters).
Count = NonNegativeInt
# At least one: a batch size, a width, a length that must hold something.
AtLeastOne = PositiveInt
# A cosine similarity a pair must exceed, or a share of a namespace: in (0, 1].
Threshold = Annotated[float, Field(gt=0.0, le=1.0, allow_inf_nan=False)]
# A share that may be anything from none to all, e.g. of answers: [0, 1].
Share = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
# A length limit for a cut text: room for one character and the ellipsis.
TextLimit = Annotated[int, Field(ge=2)]
# A merged text's length limit: a merge that cannot keep every clause within it does not
# happen, so a limit below an ordinary memory's length would stop every merge. At least the
# summary length's default; the settings also check it against step 3's (check_merge_limit).
MergeLimit = Annotated[int, Field(ge=200)]
# Durations of outside calls: finite; a timeout must also be positive.
Seconds = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]
PositiveSeconds = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]


def choice_of(allowed: tuple[str, ...]) -> BeforeValidator:
    """Accept one of `allowed`, case-insensitively (None passes: "unset, derive it")."""
    def lowered(value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, str) or value.lower() not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return value.lower()
    return BeforeValidator(lowered)


def check_merge_limit(merge_max_chars: int, verbose_min_chars: int, summary_chars: int) -> None:
    """A merge may not be limited below what step 3 keeps as it is: a merged text step 3 would
    not call verbose must fit, or every merge of two ordinary memories would have to drop a
    clause (a merge that cannot keep every clause does not happen, so none would)."""
    floor = max(verbose_min_chars, summary_chars)
    if merge_max_chars < floor:
        raise ValueError(
            f"CURATOR_MERGE_MAX_CHARS={merge_max_chars} is below what step 3 keeps unsummarized "
            f"(CURATOR_VERBOSE_MIN_CHARS={verbose_min_chars}, CURATOR_SUMMARY_CHARS={summary_chars}): "
            f"set it to at least {floor}"
        )


def check_association_below_merge(association: float, merge: float) -> None:
    """Step 6b links pairs that step 2 does not merge: its threshold must be the lower one."""
    if association >= merge:
        raise ValueError(
            f"association threshold {association} must be below the merge threshold {merge} "
            "(CURATOR_ASSOCIATION_THRESHOLD < CURATOR_SIMILARITY_THRESHOLD)"
        )


def check_judge_band(judge_band_low: float, merge: float, *, set_explicitly: bool) -> None:
    """The LLM judges pairs in (judge_band_low, merge]: a band set to start above the merge
    threshold is empty, and turned the judge off without a word. (Left at its default under a
    lowered merge threshold, the band is simply empty: only the set value is refused.)"""
    if set_explicitly and judge_band_low > merge:
        raise ValueError(
            f"the judge band starts at {judge_band_low}, above the merge threshold {merge}, so no "
            "pair would be judged (CURATOR_JUDGE_BAND_LOW <= CURATOR_SIMILARITY_THRESHOLD; to turn "
            "the judge off, set CURATOR_JUDGE_CAP=0)"
        )
