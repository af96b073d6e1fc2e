"""SARIF's `artifactLocation.uri` is a URI reference (RFC 3986, as SARIF 2.1.0 requires): a
page whose path holds a space, `%`, `#` or a non-ASCII letter is percent-encoded there, so a
code-scanning upload finds the file. Real repository, real `fidelity check-docs --sarif`."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from support import Repo, fidelity_cli

from checkers.report import sarif_uri


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("README.md", "README.md"),
        ("my notes/page one.md", "my%20notes/page%20one.md"),
        ("100%/a#b?.md", "100%25/a%23b%3F.md"),
        ("docs/café.md", "docs/caf%C3%A9.md"),
        ("/abs/with space.md", "file:///abs/with%20space.md"),
    ],
)
def test_a_path_becomes_a_uri_that_reads_back_as_it(path: str, uri: str) -> None:
    assert sarif_uri(path) == uri
    parts = urlsplit(uri)
    assert not parts.query and not parts.fragment  # nothing of the path read as either
    assert unquote(parts.path) == path


def test_check_docs_writes_the_encoded_uri(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit({"my notes/page one.md": "# P\n\n[x](gone.md)\n"})
    done = fidelity_cli(repo.path, "-q", "check-docs", "--sarif", "out.sarif", "my notes")
    assert done.returncode == 1, done.stdout + done.stderr
    (result,) = json.loads((repo.path / "out.sarif").read_text())["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "my%20notes/page%20one.md"}
    assert (repo.path / unquote(location["artifactLocation"]["uri"])).is_file()
