"""docs/numerics.md carries the measured error table; it must be current."""

import pathlib

from pymtl_dfx.numerics.error_report import markdown_table

DOC = pathlib.Path( __file__ ).resolve().parents[2] / "docs" / "numerics.md"


def test_error_table_in_docs_is_current():
  assert markdown_table() in DOC.read_text(), \
    "regenerate with: python -m pymtl_dfx.numerics.error_report"
