"""A resource whose config defaults are the values in force, bound where the Definitions are built.

Dagster uses a resource instance's values only for a run given no config for that resource at
all: a run that sets one field (in the launchpad, or a test's run config) gets the class defaults
for the rest. A subclass whose field defaults are the values in force makes the launchpad show
them and a partial config keep them, while the class itself keeps static defaults, so importing
it reads nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, TypeVar

import dagster as dg
from pydantic import Field, create_model

R = TypeVar("R", bound=dg.ConfigurableResource)
C = TypeVar("C", bound=dg.Config)


def defaults_bound(config: type[C], values: Mapping[str, Any]) -> type[C]:
    """A subclass of `config` (same name, same validators) whose fields default to `values`.

    Also what the steps' ops are configured by (defs/job.py): an op's config schema defaults are
    what a run of any job gets for a field its run config does not set, the implicit asset job
    that the UI's Materialize launches included, which has no default run config of its own."""
    fields: dict[str, Any] = {}
    for name, value in values.items():
        declared = config.model_fields[name]
        kind = Annotated[(declared.annotation, *declared.metadata)] if declared.metadata else declared.annotation
        fields[name] = (kind, Field(value, description=declared.description))
    return create_model(config.__name__, __base__=config, __module__=config.__module__, **fields)


def with_defaults(resource: type[R], values: Mapping[str, Any]) -> R:
    """An instance of `resource` (a subclass of the same name) whose fields default to `values`."""
    return defaults_bound(resource, values)()
