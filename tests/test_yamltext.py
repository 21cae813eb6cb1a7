"""generator/emit/ansible/yamltext.py: the block YAML gen writes for Ansible, byte for byte and parsed back.

tests/test_ansible_unsafe.py covers the scalars (every string through ``scalar``); these cases
pin the layout: empty collections inside a sequence, nesting, and the first level at column 0
(values without strings here, so that a plain YAML loader reads the text back).
"""

from __future__ import annotations

import yaml

from generator.emit.ansible.yamltext import dump


def test_empty_items_nested_items_and_the_first_column() -> None:
    data = {"hosts": [[], {}, {"port": 1, "vars": []}, [1, [2]]], "top": {"empty": {}}}
    text = dump(data)
    assert text == ("hosts:\n"
                    "  - []\n"
                    "  - {}\n"
                    "  - port: 1\n"
                    "    vars: []\n"
                    "  -\n"
                    "    - 1\n"
                    "    -\n"
                    "      - 2\n"
                    "top:\n"
                    "  empty: {}\n")
    assert yaml.safe_load(text) == data  # what Ansible's loader reads back is the data
