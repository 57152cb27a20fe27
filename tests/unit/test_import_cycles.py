"""The readers of untrusted bytes point one way (the cycle check of all of attnlab is in test_architecture)."""

from __future__ import annotations

from tests.unit.test_architecture import imports_of


def test_the_attention_file_writer_does_not_import_its_reader():
    assert "attnlab.attnfile.reader" not in imports_of("attnlab.attnfile.file")
    assert not {m for m in imports_of("attnlab.untrusted") if m.startswith(("attnlab.weights_io", "attnlab.attnfile"))}
