"""PostgreSQL connection strings (DATABASE_URL): whether one is valid, and how to show it without
its secrets.

libpq takes a password in three places, and each is redacted wherever a URL is shown (errors,
logs, the command line's first line):

- the userinfo of a URI, `postgresql://user:PASSWORD@host/db`, where an unencoded `@` in the
  password is allowed by nobody and written by everybody: everything up to the *last* `@` of the
  authority counts as userinfo here;
- a query parameter, `postgresql:///db?host=...&password=PASSWORD` (and `sslpassword`, the
  passphrase of the client key);
- a `key=value` string, `host=... password=PASSWORD` or `password='with spaces'`.

libpq's own messages can quote parts of a malformed string (a host name cut at the first `@` of
a password, the word after an unquoted space): `redact_message` removes every fragment of the
password from such a message too.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import psycopg
from psycopg.conninfo import conninfo_to_dict

MASK = "***"
_SECRET_KEYS = ("password", "sslpassword")
_URI = re.compile(r"^(?P<scheme>postgres(?:ql)?://)(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)
_QUERY_SECRET = re.compile(r"(?P<key>(?:^|[?&])(?:ssl)?password=)(?P<value>[^&#]*)", re.IGNORECASE)
# key = value, the value either single-quoted (backslash escapes) or up to the next blank, and
# the words after it that are no `key=value` (a password with an unquoted space, which libpq
# refuses while quoting its second half).
_KEYWORD_SECRET = re.compile(
    r"(?P<key>(?:^|\s)(?:ssl)?password\s*=\s*)(?P<value>'(?:[^'\\]|\\.)*'?|\S*(?:\s+[^\s=]+(?=\s|$))*)",
    re.IGNORECASE)
_SHORTEST_FRAGMENT = 3  # shorter pieces of a password are too common to hunt for in a message


def redact_dsn(dsn: str) -> str:
    """The connection string with every password replaced by `***`."""
    uri = _URI.match(dsn)
    if uri is None:
        return _KEYWORD_SECRET.sub(lambda m: m["key"] + MASK, dsn)
    rest = uri["rest"]
    authority_end = _authority_end(rest)
    authority, tail = rest[:authority_end], rest[authority_end:]
    if "@" in authority:
        userinfo, host = authority.rsplit("@", 1)
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":" + MASK
        authority = f"{userinfo}@{host}"
    path, question, query = tail.partition("?")
    if question:
        query = _QUERY_SECRET.sub(lambda m: m["key"] + MASK, "?" + query)[1:]
    return uri["scheme"] + authority + path + question + query


def _authority_end(rest: str) -> int:
    """Where the authority of a URI (after `scheme://`) ends: at the path or query that follows
    the last `@` before the query (an unencoded `@`, `/` or `:` may be in a password)."""
    query = rest.find("?")
    head = rest if query < 0 else rest[:query]
    at = head.rfind("@")
    slash = head.find("/", at + 1)
    if slash >= 0:
        return slash
    return len(head)


def secret_fragments(dsn: str) -> list[str]:
    """The passwords of `dsn` and each of their pieces (split where libpq might cut them: at `@`,
    blanks, `:` and `/`), longest first, as a message might quote them."""
    found: list[str] = []
    uri = _URI.match(dsn)
    if uri is not None:
        rest = uri["rest"]
        authority = rest[:_authority_end(rest)]
        if "@" in authority and ":" in authority.rsplit("@", 1)[0]:
            found.append(authority.rsplit("@", 1)[0].split(":", 1)[1])
        query = rest.partition("?")[2]
        found += [m["value"] for m in _QUERY_SECRET.finditer("?" + query)] if query else []
    else:
        found += [m["value"].strip("'") for m in _KEYWORD_SECRET.finditer(dsn)]
    try:
        parsed = conninfo_to_dict(dsn)
    except psycopg.Error:
        parsed = {}
    found += [str(parsed[key]) for key in _SECRET_KEYS if parsed.get(key)]
    pieces = {piece for secret in found for piece in [secret, *re.split(r"[@\s:/\\']+", secret)]
              if len(piece) >= _SHORTEST_FRAGMENT}
    return sorted(pieces, key=len, reverse=True)


def redact_message(message: str, dsn: str) -> str:
    """`message` (e.g. libpq's error about `dsn`) with `dsn` and every fragment of its passwords
    replaced."""
    message = message.replace(dsn, redact_dsn(dsn))
    for fragment in secret_fragments(dsn):
        message = message.replace(fragment, MASK)
    return message


def as_uri(dsn: str) -> str:
    """The same connection as a `postgresql://` URI (a `key=value` string is converted; a URI is
    returned as it is): what code that edits a URL's parts (Dagster's storage URL) needs."""
    if _URI.match(dsn):
        return dsn
    params = {key: str(value) for key, value in conninfo_to_dict(dsn).items()}
    user, password = params.pop("user", None), params.pop("password", None)
    host, port, dbname = params.pop("host", ""), params.pop("port", None), params.pop("dbname", "")
    userinfo = ""
    if user is not None or password is not None:
        userinfo = quote(user or "", safe="") + (":" + quote(password, safe="") if password is not None else "") + "@"
    if host.startswith("/"):  # a unix socket directory is a query parameter in a URI
        params = {"host": host, **params}
        host = ""
    authority = userinfo + quote(host, safe="") + (f":{port}" if port else "")
    query = "&".join(f"{quote(key, safe='')}={quote(value, safe='')}" for key, value in params.items())
    return f"postgresql://{authority}/{quote(dbname, safe='')}" + (f"?{query}" if query else "")


def check_dsn(dsn: str) -> str:
    """`dsn` if libpq can parse it as a connection string (a URI or `key=value` pairs); else
    ValueError with libpq's reason, without the password."""
    try:
        conninfo_to_dict(dsn)
    except psycopg.Error as error:
        reason = redact_message(str(error).strip(), dsn)
        raise ValueError(
            "must be a PostgreSQL connection string, a URI postgresql://USER:PASSWORD@HOST/DB or "
            f"key=value pairs ({reason})"
        ) from None
    return dsn
