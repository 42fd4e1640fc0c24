"""Where the memory store and the Dagster instance live, and what shape the store has."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import platformdirs
from pydantic import AfterValidator, Field

from curation_pipeline.config.bounds import AtLeastOne, choice_of
from curation_pipeline.config.connection_strings import check_dsn, redact_dsn
from curation_pipeline.config.environment import EnvironmentSettings, ShownAs

GRAPH_BACKENDS = ("auto", "postgres", "age")
# The vector column's width; the embedder (embedder.py) reads the same variable and must match.
DEFAULT_EMBEDDING_DIM = 384

Directory = Annotated[Path, AfterValidator(Path.expanduser)]
# Checked by libpq's own parser when the settings load, so a typo stops every command (and the
# code location) with the variable named, not a traceback at the first connection; an invalid
# value is shown without its password.
ConnectionString = Annotated[str, AfterValidator(check_dsn), ShownAs(redact_dsn)]


class StoreSettings(EnvironmentSettings):
    # None: the embedded PostgreSQL in CURATION_HOME/pgdata.
    database_url: ConnectionString | None = Field(None, validation_alias="DATABASE_URL")
    curation_home: Directory = Field(Path(platformdirs.user_data_dir("curation-pipeline")),
                                     validation_alias="CURATION_HOME")
    # Dagster's own variable; None: CURATION_HOME/dagster_home (see `dagster_home`).
    explicit_dagster_home: Directory | None = Field(None, validation_alias="DAGSTER_HOME")
    embedding_dim: AtLeastOne = Field(DEFAULT_EMBEDDING_DIM, validation_alias="CURATION_EMBEDDING_DIM")
    # Which graph the sync writes: "postgres" (tables), "age" (tables + an Apache AGE graph) or
    # "auto" (AGE when the `age` extension is installed in the store's database).
    graph_backend: Annotated[Literal[GRAPH_BACKENDS], choice_of(GRAPH_BACKENDS)] = Field(
        "auto", validation_alias="CURATION_GRAPH_BACKEND")

    @property
    def dagster_home(self) -> Path:
        return self.explicit_dagster_home or self.curation_home / "dagster_home"

    @property
    def pgdata_dir(self) -> Path:
        return self.curation_home / "pgdata"
