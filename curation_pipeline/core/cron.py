"""Turn the schedule's interval in seconds into a cron expression, exactly or not at all.

Cron fires on calendar boundaries, so only periods that divide the hour, the day or the week
evenly repeat at a constant pace: 90 minutes as `*/90` would really mean "every hour at :00"
and 7 hours as `*/7` would fire at 21:00 and again at 00:00. Those are refused with an error
that lists what works, instead of being rounded silently.
"""

from __future__ import annotations

from curation_pipeline.config.settings import SettingsError

_MINUTE = 60
_HOUR = 60 * _MINUTE
_DAY = 24 * _HOUR
_WEEK = 7 * _DAY


def _divisors(number: int) -> list[int]:
    return [candidate for candidate in range(1, number + 1) if number % candidate == 0]


def expressible_intervals() -> list[int]:
    """Every interval (seconds) that interval_to_cron accepts, shortest first."""
    minutes = [m * _MINUTE for m in _divisors(60) if m < 60]
    hours = [h * _HOUR for h in _divisors(24)]
    return minutes + hours + [_WEEK]


def interval_to_cron(seconds: int, *, variable: str = "CURATOR_INTERVAL_SECS") -> str:
    """The cron expression that fires every `seconds`; SettingsError naming `variable` if none."""
    if seconds % _HOUR == 0 and seconds <= _DAY and 24 % (seconds // _HOUR) == 0:
        hours = seconds // _HOUR
        if hours == 24:
            return "0 0 * * *"
        return "0 * * * *" if hours == 1 else f"0 */{hours} * * *"
    if seconds % _MINUTE == 0 and seconds < _HOUR and 60 % (seconds // _MINUTE) == 0:
        minutes = seconds // _MINUTE
        return "* * * * *" if minutes == 1 else f"*/{minutes} * * * *"
    if seconds == _WEEK:
        return "0 0 * * 0"
    allowed = ", ".join(str(value) for value in expressible_intervals())
    raise SettingsError(
        f"environment variable {variable}={seconds} is invalid: no cron expression fires every "
        f"{seconds} seconds at a constant pace; use one of {allowed}"
    )
