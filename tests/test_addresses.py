"""The same-address check (generator/load/addresses.py): pairs refused, declared pairs allowed."""

from __future__ import annotations

from generator.errors import Diagnostics
from generator.load.addresses import documents, shared_address_errors
from generator.load.manifests import Document, load_text


def _doc(path: str, text: str) -> Document:
    doc = load_text(text, path, Diagnostics())
    assert doc is not None
    return doc


def test_two_inventories_on_one_address_and_port_are_refused_at_both() -> None:
    a = _doc("hosts/a.yaml", "name: a\naddress: box.lan\n")
    b = _doc("hosts/b.yaml", "name: b\n# moved\naddress: BOX.lan.\nssh: {port: 22}\n")
    found = [str(d) for d in shared_address_errors([a, b])]
    assert len(found) == 2
    assert found[0].startswith("hosts/a.yaml:2:10: error[R011]: host 'a' reaches box.lan:22 over ssh, "
                               "and so does host 'b' (hosts/b.yaml:3:10)")
    assert found[1].startswith("hosts/b.yaml:3:10: error[R011]: host 'b' reaches box.lan:22")
    assert "ssh: {shared_with: [b]} in hosts/a.yaml" in found[0]


def test_other_port_or_address_is_another_machine() -> None:
    a = _doc("hosts/a.yaml", "name: a\naddress: box.lan\n")
    b = _doc("hosts/b.yaml", "name: b\naddress: box.lan\nssh: {port: 2222}\n")
    c = _doc("hosts/c.yaml", "name: c\naddress: other.lan\n")
    assert shared_address_errors([a, b, c]) == []


def test_both_must_declare_the_sharing() -> None:
    one = _doc("hosts/a.yaml", "name: a\naddress: box.lan\nssh: {shared_with: [b]}\n")
    other = _doc("hosts/b.yaml", "name: b\naddress: box.lan\n")
    assert len(shared_address_errors([one, other])) == 2
    both = _doc("hosts/b.yaml", "name: b\naddress: box.lan\nssh: {shared_with: [a]}\n")
    assert shared_address_errors([one, both]) == []


def test_two_inventories_whose_fabric_address_is_one_machine_are_refused_unless_shared() -> None:
    """network.address (what the other ranks dial) of two hosts, in two spellings of one IPv4
    address, passed: R017 at both; a declared shared machine, another address or none pass."""
    a = _doc("hosts/a.yaml", "name: a\naddress: a.lan\nnetwork: {address: 192.0.2.10}\n")
    b = _doc("hosts/b.yaml", "name: b\naddress: b.lan\nnetwork: {address: '::ffff:c000:20a'}\n")
    found = [str(d) for d in shared_address_errors([a, b])]
    assert [f.split(": error")[0] for f in found] == ["hosts/a.yaml:3:20", "hosts/b.yaml:3:20"]
    assert "error[R017]: host 'a' gives network.address 192.0.2.10, and so does host 'b' (hosts/b.yaml:3:20)" \
        in found[0]
    other = _doc("hosts/b.yaml", "name: b\naddress: b.lan\nnetwork: {address: 192.0.2.11}\n")
    none = _doc("hosts/c.yaml", "name: c\naddress: c.lan\n")
    assert shared_address_errors([a, other, none]) == []
    a2 = _doc("hosts/a.yaml", "name: a\naddress: a.lan\nssh: {shared_with: [b]}\nnetwork: {address: 192.0.2.10}\n")
    b2 = _doc("hosts/b.yaml", "name: b\naddress: b.lan\nssh: {shared_with: [a]}\nnetwork: {address: 192.0.2.10}\n")
    assert shared_address_errors([a2, b2]) == []


def test_malformed_fields_are_left_to_the_schema() -> None:
    docs = documents([("hosts/a.yaml", b"name: a\naddress: 5\n"), ("hosts/b.yaml", b"name: b\naddress: [x]\n"),
                      ("hosts/c.yaml", b": : bad yaml ["), ("hosts/d.yaml", b"\xff\xfe")])
    assert shared_address_errors(docs) == []


def test_sharing_inventories_must_not_render_the_same_service() -> None:
    a = _doc("hosts/a.yaml", "name: a\naddress: box.lan\nssh: {shared_with: [b]}\n"
                             "services:\n  - name: qwen\n  - name: only-a\n")
    b = _doc("hosts/b.yaml", "name: b\naddress: box.lan\nssh: {shared_with: [a]}\n"
                             "services:\n  - {name: other}\n  - {name: qwen}\n")
    found = [str(d) for d in shared_address_errors([a, b])]
    assert len(found) == 2
    assert found[0].startswith("hosts/a.yaml:5:11: error[R012]: service 'qwen' of host 'a' renders "
                               "/etc/systemd/system/sglang-qwen.service and /etc/sglang/qwen.env, "
                               "and so does host 'b' (hosts/b.yaml:6:12)")
    assert found[1].startswith("hosts/b.yaml:6:12: error[R012]: service 'qwen' of host 'b'")
    renamed = _doc("hosts/b.yaml", "name: b\naddress: box.lan\nssh: {shared_with: [a]}\n"
                                   "services:\n  - {name: qwen-full}\n")
    assert shared_address_errors([a, renamed]) == []


def test_pairs_are_found_among_many_in_file_order() -> None:
    """reach_errors buckets by target; each clashing pair still comes once, in file order."""
    from generator.load.addresses import reach, reach_errors

    texts = {"a": "address: box\n", "b": "address: other\n", "c": "address: box\n",
             "d": "address: box\nssh: {shared_with: [e]}\n", "e": "address: box\nssh: {shared_with: [d]}\n",
             "f": "address: other\nssh: {port: 2222}\n"}
    reaches = [reach(_doc(f"hosts/{n}.yaml", f"name: {n}\n{t}")) for n, t in texts.items()]
    found = [(d.pos.path, d.code) for d in reach_errors([r for r in reaches if r is not None])]
    pairs = [("a", "c"), ("a", "d"), ("a", "e"), ("c", "d"), ("c", "e")]  # d+e declare each other
    assert found == [(f"hosts/{x}.yaml", "R011") for p in pairs for x in p]


def test_findings_in_the_order_of_every_pair() -> None:
    """Grouping by target gives exactly the findings, in the order, of comparing every
    pair (i < j) in file order: three inventories on one box, a declared pair, strangers."""
    import random

    from generator.load.addresses import Reach, reach, reach_errors

    texts = [("a", "box.lan", ""), ("b", "other.lan", ""), ("c", "box.lan", ""), ("d", "pair.lan", "[e]"),
             ("e", "pair.lan", "[d]"), ("f", "box.lan", ""), ("g", "lone.lan", "")]
    docs = [_doc(f"hosts/{n}.yaml", f"name: {n}\naddress: {a}\n"
                 + (f"ssh: {{shared_with: {s}}}\n" if s else "")
                 + f"services:\n  - {{name: s{n if n not in 'de' else ''}}}\n")
            for n, a, s in texts]
    reaches = [r for r in (reach(d) for d in docs) if r is not None]
    random.Random(9).shuffle(reaches)

    def every_pair(items: list[Reach]) -> list[str]:
        out: list[str] = []
        for i, a in enumerate(items):
            for b in items[i + 1:]:
                if a.target == b.target:
                    out.extend(str(d) for d in reach_errors([a, b]))
        return out

    found = [str(d) for d in reach_errors(reaches)]
    assert found == every_pair(reaches)
    assert sum("R011" in f for f in found) == 6 and sum("R012" in f for f in found) == 2


# ----- one identity per machine (issue 22 item 3): every spelling of an address is one machine -----

import socket  # noqa: E402

import pytest  # noqa: E402

from generator.load.addresses import inet_aton, machine_address  # noqa: E402

SAME_MACHINE = [
    ("2001:db8::10", "2001:db8:0:0::10"),          # the pair
    ("2001:db8::10", "2001:DB8:0000:0:0:0:0:0010"),  # case, leading zeros, uncompressed
    ("2001:db8::10", "[2001:db8::10]"),            # brackets
    ("fe80::1", "fe80::1%eth0"),                   # a zone names an interface, not a machine
    ("10.0.0.1", "::ffff:10.0.0.1"),               # IPv4-mapped
    ("10.0.0.1", "::ffff:a00:1"),
    ("10.0.0.1", "64:ff9b::10.0.0.1"),             # NAT64 (RFC 6052)
    ("10.0.0.1", "0x0a000001"),                    # what inet_aton reads
    ("10.0.0.1", "167772161"),
    ("10.0.0.1", "012.0.0.1"),
    ("10.0.0.1", "10.1"),
    ("box.lan", "BOX.Lan."),                       # DNS: case, trailing dot
    ("127.0.0.1", "localhost"),                    # the controller itself, any name of it
    ("127.0.0.1", "LOCALHOST."),
    ("127.0.0.1", "node.localhost"),
    ("127.0.0.1", "::1"),
    ("127.0.0.1", "0.0.0.0"),
    ("127.0.0.1", "::"),
]


@pytest.mark.parametrize("a, b", SAME_MACHINE)
def test_two_spellings_of_one_address_are_one_machine(a: str, b: str) -> None:
    assert machine_address(a) == machine_address(b)
    first = _doc("hosts/a.yaml", f"name: a\naddress: '{a}'\n")
    second = _doc("hosts/b.yaml", f"name: b\naddress: '{b}'\n")
    assert [d.code for d in shared_address_errors([first, second])] == ["R011", "R011"]


@pytest.mark.parametrize("a, b", [("2001:db8::10", "2001:db8::11"), ("10.0.0.1", "10.0.0.2"),
                                  ("127.0.0.2", "127.0.0.3"), ("box.lan", "box.lan.example"),
                                  ("::10.0.0.1", "10.0.0.1")])  # IPv4-compatible is no mapping
def test_other_addresses_are_other_machines(a: str, b: str) -> None:
    assert machine_address(a) != machine_address(b)


@pytest.mark.parametrize("text", ["10.1", "0x0a000001", "012.0.0.1", "0x0a.0.0.1", "10.0.0.01", "167772161",
                                  "1.2.65535", "0377.0xff.255.0", "4294967295", "1.2.65536", "4294967296",
                                  "08.0.0.1", "1.2.3.4.5", "0x1g", "a.b", "", "1..2", "-1"])
def test_inet_aton_reads_what_the_c_library_reads(text: str) -> None:
    """The oracle is the system's own inet_aton (glibc), which getaddrinfo and ssh use."""
    try:
        expected = socket.inet_ntoa(socket.inet_aton(text))
    except OSError:
        expected = None
    found = inet_aton(text)
    assert (str(found) if found is not None else None) == expected


def test_the_message_names_the_machine_once_and_an_ipv6_one_in_brackets() -> None:
    a = _doc("hosts/a.yaml", "name: a\naddress: '2001:db8::10'\n")
    b = _doc("hosts/b.yaml", "name: b\naddress: '2001:db8:0:0::10'\n")
    assert "reaches [2001:db8::10]:22 over ssh" in str(shared_address_errors([a, b])[0])


@pytest.mark.parametrize("address, canonical", [("0x0a000001", "10.0.0.1"), ("10.1", "10.0.0.1"),
                                                ("010.0.0.1", "8.0.0.1")])
def test_an_address_ssh_reads_as_another_ipv4_spelling_is_a_schema_error(address: str, canonical: str) -> None:
    from generator.load.schema import HOST_SCHEMA, validate

    diags = Diagnostics()
    doc = _doc("hosts/a.yaml", f"name: a\naddress: '{address}'\n")
    validate(doc, HOST_SCHEMA, diags)
    found = [d for d in diags.items if d.pos.line == 2]
    assert [d.code for d in found] == ["S012"] and f"write '{canonical}'" in found[0].message
