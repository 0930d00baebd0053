"""No module reads another's private names: what other modules need has a public name
(``tests/private_names.py`` says what is counted)."""

import ast
from pathlib import Path

import private_names

ROOT = Path(__file__).resolve().parents[1]


def test_no_private_name_is_imported_across_modules():
    assert private_names.private_imports(ROOT) == []


def test_no_private_attribute_of_another_object_is_read():
    assert private_names.private_attribute_reads(ROOT) == []


def test_the_scan_finds_a_private_import_and_not_a_private_module(tmp_path):
    pkg = tmp_path / "grpo_theory"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "_helpers.py").write_text("")
    tree = ast.parse("from .. import _helpers\nfrom ..other import _secret, public\nfrom .._helpers import thing\n")
    assert private_names.imports_in(tree, pkg / "sub", pkg) == ["other._secret"]


def test_the_scan_finds_a_private_attribute_read():
    tree = ast.parse("import numpy as np\n\ndef f(cp):\n    self = cp\n    return cp._log_R, self._ok, np._ok, "
                     "cp.__class__\n")
    assert private_names.attribute_reads_in(tree) == [(5, "cp._log_R")]
