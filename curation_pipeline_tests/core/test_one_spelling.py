"""A namespace is spelled one way wherever a user reads it: `TENANT:NAMESPACE`, the key every
`--partition` takes. A tenant and namespace joined by "/" in a message sent
users to type a key the CLI rejects."""

from __future__ import annotations

import re
from pathlib import Path

import curation_pipeline
from curation_pipeline.core.partition_keys import display_key, partition_key

PACKAGE = Path(curation_pipeline.__file__).parent
# `{...tenant...}/{...namespace...}` in an f-string: the old second spelling.
SLASHED = re.compile(r"\{[^{}]*tenant[^{}]*\}/\{[^{}]*namespace[^{}]*\}")


def test_no_message_joins_tenant_and_namespace_with_a_slash():
    found = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if SLASHED.search(line) and "seed-corpus" not in line  # the demo's RNG seed, never shown
    ]
    assert found == []


def test_a_display_key_is_the_partition_key_when_there_is_one():
    assert display_key("acme", "support-bot") == "acme:support-bot" == partition_key("acme", "support-bot")
    assert display_key("acme corp", "a,b") == "acme%20corp:a%2Cb"


def test_names_that_make_no_key_are_still_shown_in_the_same_shape():
    assert display_key("acme", "") == "'acme':''"
    assert display_key("ac\nme", "x") == "'ac\\nme':'x'"
