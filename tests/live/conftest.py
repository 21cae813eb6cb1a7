"""Fixtures for the live tests: one real systemd container per test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import testinfra
from testinfra.host import Host

from .host import TestHost, boot_test_host, stop_test_host


@pytest.fixture(scope="session")
def test_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestHost]:
    """Boot one container for the whole session and always stop it afterwards."""
    host = boot_test_host(tmp_path_factory.mktemp("test-host"))
    try:
        yield host
    finally:
        stop_test_host(host)


@pytest.fixture(scope="session")
def testinfra_host(test_host: TestHost) -> Host:
    """Return a testinfra host that reaches the session container over ssh."""
    return testinfra.get_host(test_host.testinfra_url, ssh_config=str(test_host.ssh_config))
