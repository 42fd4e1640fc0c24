"""The base of every settings model: read from environment variables by pydantic-settings, with
errors that name the variable.

Each field names its variable(s) as its validation alias; an `AliasChoices` lists the accepted
names, the first set one wins. A value that is empty (or only blanks) counts as unset. A model
is read from the environment only by `from_environment`, which also takes a mapping instead of
`os.environ` (tests): built in code (`Model(field=...)`), it holds exactly the values given.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Mapping
from typing import Any, Self

from pydantic import AliasChoices, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict


class SettingsError(ValueError):
    """A setting has a value the pipeline cannot use; the message names the variable."""


class _Environment(EnvSettingsSource):
    """pydantic-settings' environment source over `environ` instead of `os.environ`, with values
    trimmed and blank ones counted as unset (a stray `VAR=` in a compose file is not a value)."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls, case_sensitive=True)

    def _load_env_vars(self) -> Mapping[str, str]:
        # The hook pydantic-settings' own .env source overrides the same way; alias order,
        # case and the rest of the environment source stay the library's.
        trimmed = {name: (value or "").strip() for name, value in self._environ.items()}
        return {name: value for name, value in trimmed.items() if value}


class EnvironmentSettings(BaseSettings):
    """See the module docstring. Immutable; unknown field names are refused."""

    model_config = SettingsConfigDict(
        case_sensitive=True, frozen=True, extra="forbid",
        validate_by_name=True, validate_by_alias=True,
        hide_input_in_errors=True,  # a pydantic error shown as is must not print a key either
    )

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings,
                                   file_secret_settings):
        # Only the values given: `from_environment` passes the environment's in, so a model
        # built in code never picks up this process's variables (or a .env file).
        return (init_settings,)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Self:
        """The settings from `os.environ` (or `environ`); SettingsError naming the variable."""
        environ = os.environ if environ is None else environ
        values = _Environment(cls, environ)()
        try:
            return cls(**values)
        except ValidationError as error:
            raise SettingsError(_describe(cls, error, environ, prefix="environment variable ")) from None

    def with_changes(self, **changes: Any) -> Self:
        """A copy with `changes` (by field name), checked like the original; values that were
        derived (left unset) are derived again, so a changed base URL re-picks what depends on it."""
        given = {name: getattr(self, name) for name in self.model_fields_set}
        try:
            return type(self)(**{**given, **changes})
        except ValidationError as error:
            raise SettingsError(_describe(type(self), error, {}, prefix="")) from None

    @classmethod
    def variables(cls) -> dict[str, str]:
        """Every environment variable this model reads -> its field."""
        return {variable: name for name, field in cls.model_fields.items() for variable in _variables_of(field)}


def _variables_of(field: FieldInfo) -> list[str]:
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return [choice for choice in alias.choices if isinstance(choice, str)]
    return [alias] if isinstance(alias, str) else []


def _is_secret(field: FieldInfo) -> bool:
    return field.annotation is SecretStr or SecretStr in typing.get_args(field.annotation)


def _describe(model: type[EnvironmentSettings], error: ValidationError, environ: Mapping[str, str],
              *, prefix: str) -> str:
    """One line per problem: `VARIABLE='value' is invalid: reason`; a secret's value is `***`.

    A rule across fields (no location) already names its variables and is passed on as it is.
    """
    fields_by_key = {key: field for name, field in model.model_fields.items()
                     for key in (name, *_variables_of(field))}
    lines = []
    for problem in error.errors(include_url=False):
        reason = str(problem["ctx"]["error"]) if problem["type"] == "value_error" else problem["msg"]
        field = fields_by_key.get(problem["loc"][0]) if problem["loc"] else None
        if field is None:
            lines.append(reason)
            continue
        names = _variables_of(field) or [str(problem["loc"][0])]
        variable = next((name for name in names if (environ.get(name) or "").strip()), names[0])
        shown = _shown(field, problem["input"])
        lines.append(f"{prefix}{variable}={shown} is invalid: {reason[:1].lower()}{reason[1:]}")
    return "\n".join(lines)


class ShownAs:
    """Field metadata: how an invalid value of the field is shown in the error (e.g. a
    connection string without its password), where a SecretStr would be `***`."""

    def __init__(self, show: typing.Callable[[str], str]) -> None:
        self.show = show


def _shown(field: FieldInfo, value: Any) -> str:
    if _is_secret(field):
        return "***"
    nested = [getattr(arg, "__metadata__", ()) for arg in typing.get_args(field.annotation)]
    for marker in [*field.metadata, *(m for metadata in nested for m in metadata)]:
        if isinstance(marker, ShownAs) and isinstance(value, str):
            return repr(marker.show(value))
    return repr(value)


def revealed(secret: SecretStr | None) -> str | None:
    """The secret's text, for the one place that must send it (an HTTP client)."""
    return secret.get_secret_value() if secret is not None else None
