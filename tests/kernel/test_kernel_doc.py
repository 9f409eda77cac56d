"""docs/kernel.md carries the current tables of the kernel's buses and registers."""

import pathlib

from pymtl_dfx.config import DFXConfig
from pymtl_dfx.kernel.doc import BEGIN, END, doc_tables
from pymtl_dfx.kernel.interface import ARGS_BASE, SLOT, buses, register_map

DOC = pathlib.Path( __file__ ).resolve().parents[2] / "docs" / "kernel.md"


def test_docs_kernel_md_is_up_to_date():
  text = DOC.read_text()
  generated = text[ text.index( BEGIN ):text.index( END ) + len( END ) + 1 ]
  assert generated == doc_tables(), (
    "docs/kernel.md is stale; run: python -c 'from pymtl_dfx.kernel import doc; "
    "doc.update(\"docs/kernel.md\")'" )


def test_register_map_is_dense_and_every_buffer_has_a_base():
  cfg = DFXConfig()
  regs = register_map( cfg )
  offsets = [ r.offset for r in regs ]
  assert offsets == sorted( offsets ) and len( set( offsets ) ) == len( offsets )
  after = [ r for r in regs if r.offset >= ARGS_BASE ]
  assert [ b - a for a, b in zip( offsets[ 4: ], offsets[ 5: ] ) ] == [ SLOT ] * ( len( after ) - 1 )
  masters = { b.name for b in buses( cfg ) if b.memory }
  assert { r.bus for r in regs if r.bus } == masters
  assert len( [ b for b in buses( cfg ) if b.memory == "hbm" ] ) == cfg.hbm_channels
