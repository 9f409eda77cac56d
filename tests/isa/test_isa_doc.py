"""docs/isa.md carries the current generated tables and a valid example."""

import pathlib
import re

from pymtl_dfx.isa import assemble, doc_table
from pymtl_dfx.isa.doc import BEGIN, END

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "isa.md"


def test_docs_isa_md_is_up_to_date():
  text = DOC.read_text()
  generated = text[text.index(BEGIN):text.index(END) + len(END) + 1]
  assert generated == doc_table(), (
    "docs/isa.md is stale; run: python -c 'from pymtl_dfx.isa import doc; "
    "doc.update(\"docs/isa.md\")'")


def test_docs_code_examples_assemble():
  blocks = re.findall(r"```\n(.*?)```", DOC.read_text(), re.S)
  programs = [b for b in blocks if not b.startswith("mnemonic")]
  assert programs
  for block in programs:
    assert assemble(block)
