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


def check_association_below_merge(association: float, merge: float) -> None:
    """Step 6b links pairs that step 2 does not merge: its threshold must be the lower one."""
    if association >= merge:
        raise ValueError(
            f"association threshold {association} must be below the merge threshold {merge} "
            "(CURATOR_ASSOCIATION_THRESHOLD < CURATOR_SIMILARITY_THRESHOLD)"
        )
