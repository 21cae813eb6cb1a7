"""load/schema_docs.py covers exactly the schema's keys, and its flags are what argv.py renders."""

from __future__ import annotations

import re
from pathlib import Path

from generator.load.schema_docs import DOCS
from generator.load.schema_json import schema_keys
from generator.plan import argv

ARGV_SOURCE = Path(argv.__file__).read_text(encoding="utf-8")


def test_every_schema_key_has_a_description_and_no_entry_is_stale() -> None:
    keys = schema_keys("model") + schema_keys("host") + schema_keys("rollout")
    assert [k for k in keys if k not in DOCS] == [], "describe these keys in load/schema_docs.py"
    assert [k for k in DOCS if k not in keys] == [], "these entries name no schema key"
    assert all(DOCS[k].description.strip() for k in keys)


def test_the_documented_flags_are_the_dests_argv_renders() -> None:
    rendered = set(re.findall(r'add\("(\w+)"', ARGV_SOURCE))
    documented = {d.flag for d in DOCS.values() if d.flag}
    assert documented == rendered
