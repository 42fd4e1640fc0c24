"""Secrets in DATABASE_URL: every form libpq accepts is redacted wherever the URL (or libpq's own
message about it) is shown, and a value that is no connection string is refused by name."""

from __future__ import annotations

import pytest

from curation_pipeline.cli.main import main
from curation_pipeline.config.connection_strings import redact_dsn, redact_message
from curation_pipeline.config.settings import SettingsError, load_settings
from curation_pipeline.store.database import DatabaseError, ensure_database

SECRET = "s3cr3t-Pa55"


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        # userinfo of a URI
        ("postgresql://app:s3cr3t-Pa55@db.example/memories", "postgresql://app:***@db.example/memories"),
        # an unencoded '@' inside the password: everything up to the last '@' is userinfo
        ("postgresql://app:s3cr3t@Pa55@db.example/memories", "postgresql://app:***@db.example/memories"),
        ("postgres://app:s3cr3t-Pa55@db.example:5432", "postgres://app:***@db.example:5432"),
        # the password as a query parameter (and sslpassword, the key file's passphrase)
        ("postgresql:///memories?host=/run/pg&password=s3cr3t-Pa55&sslmode=disable",
         "postgresql:///memories?host=/run/pg&password=***&sslmode=disable"),
        ("postgresql://app@db.example/memories?sslpassword=s3cr3t-Pa55",
         "postgresql://app@db.example/memories?sslpassword=***"),
        # key=value strings, plain and quoted (a quoted value may hold spaces and escaped quotes)
        ("host=db.example password=s3cr3t-Pa55 dbname=memories", "host=db.example password=*** dbname=memories"),
        ("host=db.example password = 's3cr3t Pa55 \\' x' dbname=memories",
         "host=db.example password = *** dbname=memories"),
        ("password=s3cr3t-Pa55", "password=***"),
        # nothing secret: unchanged
        ("postgresql://app@db.example/memories", "postgresql://app@db.example/memories"),
        ("postgresql://postgres:@/postgres?host=/tmp/pg", "postgresql://postgres:***@/postgres?host=/tmp/pg"),
    ],
)
def test_every_libpq_form_of_a_password_is_redacted(dsn, shown):
    assert redact_dsn(dsn) == shown
    for fragment in ("s3cr3t", "Pa55"):
        assert fragment not in redact_dsn(dsn)


def test_libpq_messages_about_a_url_lose_every_fragment_of_its_password():
    # libpq splits "app:s3cr3t@Pa55@db" at the first '@': its error names host "Pa55@db".
    dsn = "postgresql://app:s3cr3t@Pa55@db.example/memories"
    message = 'could not translate host name "Pa55@db.example" to address'
    assert redact_message(message, dsn) == 'could not translate host name "***@db.example" to address'
    assert redact_message('missing "=" after "Pa55" in connection info string',
                          "host=x password=s3cr3t Pa55") == 'missing "=" after "***" in connection info string'


@pytest.mark.parametrize(
    "dsn",
    [
        f"postgresql://app:{SECRET}@127.0.0.1:1/memories",
        "postgresql://app:s3cr3t@Pa55@127.0.0.1:1/memories",
        f"postgresql://app@127.0.0.1:1/memories?password={SECRET}&connect_timeout=2",
        f"host=127.0.0.1 port=1 user=app password={SECRET} dbname=memories",
        f"host=127.0.0.1 port=1 user=app password='{SECRET} with space' dbname=memories",
    ],
)
def test_a_connection_error_never_shows_the_password(dsn):
    with pytest.raises(DatabaseError, match="cannot connect to the database at") as error:
        ensure_database(load_settings({"DATABASE_URL": dsn}))
    for fragment in ("s3cr3t", "Pa55"):
        assert fragment not in str(error.value)


@pytest.mark.parametrize("dsn", ["notaurl", f"host=db password={SECRET} oops", "mysql://app@db/x"])
def test_a_database_url_that_is_no_connection_string_is_refused_by_name(dsn):
    with pytest.raises(SettingsError, match="DATABASE_URL") as error:
        load_settings({"DATABASE_URL": dsn})
    assert SECRET not in str(error.value) and "Pa55" not in str(error.value)


def test_the_command_line_says_so_in_one_line(monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", "notaurl")
    assert main(["health"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: environment variable DATABASE_URL='notaurl' is invalid")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "dsn",
    ["host=/run/pg port=5433 user=app password='p@ss w:rd' dbname=memories sslmode=disable",
     "postgresql://app:p%40ss@db.example:5433/memories?sslmode=disable"],
)
def test_a_key_value_string_becomes_the_same_connection_as_a_uri(dsn):
    from psycopg.conninfo import conninfo_to_dict

    from curation_pipeline.config.connection_strings import as_uri

    assert conninfo_to_dict(as_uri(dsn)) == conninfo_to_dict(dsn)
    assert as_uri(dsn).startswith("postgresql://")


def test_dagster_storage_works_from_a_key_value_database_url(database_url):
    # Dagster's storage URL is derived from DATABASE_URL: a key=value one must work too.
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from curation_pipeline.store.database import dagster_storage_url, open_connection

    key_value = make_conninfo(**conninfo_to_dict(database_url))
    assert "://" not in key_value
    storage_url = dagster_storage_url(key_value, create_tables=lambda url: None)
    with open_connection(storage_url.replace("postgresql+psycopg2://", "postgresql://"), vector=False) as conn:
        assert conn.execute("SELECT current_database()").fetchone()[0] == "dagster"
