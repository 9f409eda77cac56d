"""The host runtime on U280 cards (`pymtl_dfx.kernel.xrt_runtime`): the
images split over their per-channel buffers and read back (pure functions,
no XRT), the buffers' sizes and banks, the runtime's named costs, the CLI
without XRT, and one card's buffers, registers and read-back through a
recording stand-in for pyxrt."""

import pathlib
import re
import sys
import types

import numpy as np
import pytest

from pymtl_dfx import cli
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.kernel import interface as I
from pymtl_dfx.kernel import xrt_runtime as X
from pymtl_dfx.units.memory.msgs import channel_of, row_of

SMALL = DFXConfig( d=8, l=4, hbm_channels=2, vreg_entries=64, mreg_entries=32, psum_entries=4 )


def _small_model():
  """The small GPT-2 on the d=8 core of the kernel's co-simulation."""
  from pymtl_dfx.compiler.build import compile_model
  from pymtl_dfx.gpt2 import random_weights
  from pymtl_dfx.testing import core_mixing as cm
  return compile_model( random_weights( cm.GPT, 7 ).to_fp16(), cm.dfx_config( d=8 ), 1,
                        max_tokens=cm.MAX_TOKENS )


def _words( n, e=4, seed=0 ):
  return np.random.default_rng( seed ).integers( 0, 1 << 16, ( n, e ), dtype=np.uint16 ) \
    .view( np.float16 )


@pytest.mark.parametrize( "n, channels", [ ( 1, 2 ), ( 7, 2 ), ( 32, 4 ), ( 33, 32 ), ( 100, 3 ) ] )
def test_split_puts_word_a_in_channel_a_mod_c_row_a_div_c( n, channels ):
  w = _words( n )
  parts = X.split_words( w, channels )
  assert len( parts ) == channels
  assert all( p.shape == ( -( -n // channels ), 4 ) for p in parts )
  for a in range( n ):
    assert parts[ channel_of( a, channels ) ][ row_of( a, channels ) ].tobytes() == w[a].tobytes()
  # the rows past the image are zero, and a deeper buffer is zero-filled
  deep = X.split_words( w, channels, rows=parts[0].shape[0] + 3 )
  assert all( ( d[ len( p ): ] == 0 ).all() and d[ :len( p ) ].tobytes() == p.tobytes()
              for d, p in zip( deep, parts ) )
  with pytest.raises( X.FpgaBufferError, match="need" ):
    X.split_words( w, channels, rows=parts[0].shape[0] - 1 )


@pytest.mark.parametrize( "addr, n, channels", [ ( 0, 10, 4 ), ( 3, 1, 4 ), ( 5, 13, 4 ),
                                                 ( 17, 2, 8 ), ( 9, 40, 16 ) ] )
def test_a_range_read_back_from_its_channels_is_the_image( addr, n, channels ):
  w = _words( 80 )
  parts = X.split_words( w, channels )
  spans = X.channel_rows( addr, n, channels )
  read = [ p[ lo:hi ] for p, ( lo, hi ) in zip( parts, spans ) ]
  assert X.gather_words( read, addr, n, channels ).tobytes() == w[ addr: addr + n ].tobytes()
  # only the rows the range touches are read
  assert sum( hi - lo for lo, hi in spans ) == n


def test_program_bytes_are_one_instruction_per_beat():
  from pymtl_dfx.isa import decode, encode
  prog = _small_model().emitter().step( 0, 1, 0, True )[0]
  raw = X.program_bytes( prog )
  beat = I.inst_data_bits() // 8
  assert len( raw ) == beat * len( prog )
  for k, inst in enumerate( prog ):
    word = int.from_bytes( raw[ k * beat:( k + 1 ) * beat ], "little" )
    assert word == encode( inst ) and encode( decode( word ) ) == word


def test_buffer_plan_banks_and_limits():
  cfg = DFXConfig()
  plan = X.buffer_plan( cfg, hbm_words=32 * 1000 + 1, ddr_words=10 )
  masters = [ b for b in I.buses( cfg ) if b.bank ]
  assert set( plan ) == { b.name for b in masters }
  assert all( plan[ b.name ][0] == b.bank for b in masters )
  assert plan["m_axi_hbm00"][1] == 1001 * cfg.mem_word_bytes
  # a pseudo-channel's 256 MB
  full = cfg.hbm_channels * ( 256 * 2**20 // cfg.mem_word_bytes )
  X.buffer_plan( cfg, full, 10 )
  with pytest.raises( X.FpgaBufferError, match="holds at most 256 MB" ):
    X.buffer_plan( cfg, full + 1, 10 )
  with pytest.raises( X.FpgaBufferError, match="holds at most 128 MB" ):
    X.buffer_plan( cfg.replace( hbm_channel_mb=128 ), full // 2 + 1, 10 )
  with pytest.raises( X.FpgaBufferError, match="DDR4 bank holds 16 GB" ):
    X.buffer_plan( cfg, 10, 40 * 2**30 // cfg.mem_word_bytes )   # 20 GB a bank


def test_step_overhead_adds_the_named_costs():
  c = X.RUNTIME_COSTS
  assert X.step_overhead_us( 1, False ) == c["bo_sync_us"] + c["run_start_us"]
  assert X.step_overhead_us( 4, True ) == 8 * c["bo_sync_us"] + 4 * c["run_start_us"]


def test_every_runtime_cost_is_in_the_docs_table():
  doc = ( pathlib.Path( __file__ ).resolve().parents[2] / "docs" / "perf.md" ).read_text()
  section = doc.split( "### The FPGA runtime's own costs (XRT)", 1 )
  assert len( section ) == 2
  rows = { m.group( 1 ): m.group( 2 ) for m in
           re.finditer( r"^\| [^|`]+ \| `(\w+)` \| ([^|]+) \|", section[1].split( "\n## ", 1 )[0],
                        re.M ) }
  assert set( rows ) == set( X.RUNTIME_COSTS )
  for k, v in X.RUNTIME_COSTS.items():
    assert float( rows[k] ) == v, k


# -- the CLI without XRT --------------------------------------------------------------

def _err( capsys, argv, code ):
  assert cli.main( argv ) == code
  err = capsys.readouterr().err.strip()
  assert len( err.splitlines() ) == 1, err
  return err


def test_level_fpga_without_xrt_is_one_line( capsys, monkeypatch ):
  monkeypatch.setitem( sys.modules, "pyxrt", None )        # import pyxrt fails
  argv = [ "generate", "--level", "fpga", "--prompt-ids", "1", "--model", "tiny" ]
  err = _err( capsys, argv + [ "--xclbin", "k.xclbin" ], 1 )
  assert err.startswith( "dfx generate: --level fpga needs XRT's Python bindings (pyxrt)" )
  # a command line that is wrong on any machine says so first
  assert "needs --xclbin FILE" in _err( capsys, argv, 2 )
  err = _err( capsys, [ "generate", "--xclbin", "k.xclbin", "--prompt-ids", "1", "--model", "tiny" ], 2 )
  assert "--xclbin needs --level fpga" in err


def test_level_fpga_bad_inputs_with_bindings( capsys, monkeypatch, tmp_path ):
  monkeypatch.setitem( sys.modules, "pyxrt", types.ModuleType( "pyxrt" ) )
  argv = [ "generate", "--level", "fpga", "--prompt-ids", "1", "--model", "tiny" ]
  assert "needs --xclbin FILE" in _err( capsys, argv, 2 )
  assert "none.xclbin: does not exist" in _err( capsys, argv + [ "--xclbin", str( tmp_path / "none.xclbin" ) ], 1 )
  assert "--unit-levels" in _err( capsys, argv + [ "--xclbin", "x", "--unit-levels", "mpu=cl" ], 2 )
  assert "is a directory" in _err( capsys, argv + [ "--xclbin", str( tmp_path ) ], 1 )


# -- one card through a recording stand-in for pyxrt --------------------------------------

class FakeXrt:
  """The pyxrt calls the runtime makes, on host memory: buffers per bank
  with addresses, syncs counted, and a kernel whose CTRL reports done after
  a start (its status: `cycles`)."""

  class bo:
    normal = 0

  class xclBOSyncDirection:
    XCL_BO_SYNC_BO_TO_DEVICE, XCL_BO_SYNC_BO_FROM_DEVICE = "to", "from"

  def __init__( s, tags, cfg, cycles=1234 ):
    s.tags, s.cycles, s.cfg = tags, cycles, cfg
    s.bos, s.syncs, s.regs = [], [], {}
    fake = s

    class Bo:
      def __init__( b, device, size, flags, group ):
        b.group, b.mem = group, np.zeros( size, np.uint8 )
        b.addr = 0x1000_0000 * ( group + 1 ) + sum( x.mem.size for x in fake.bos )
        fake.bos.append( b )
      def write( b, data, offset ):
        data = np.asarray( data, np.uint8 )
        b.mem[ offset: offset + data.size ] = data
      def read( b, size, offset ):
        return b.mem[ offset: offset + size ].copy()
      def sync( b, direction, size, offset ):
        fake.syncs.append( ( b.group, direction, size, offset ) )
      def address( b ):
        return b.addr
    Bo.normal = 0
    s.bo = Bo

  def device( s, index ):
    if index > 0:
      raise RuntimeError( "No such device" )
    return types.SimpleNamespace( load_xclbin=lambda x: "uuid" )

  def xclbin( s, path ):
    mems = [ types.SimpleNamespace( get_tag=lambda t=t: t, get_index=lambda k=k: k )
             for k, t in enumerate( s.tags ) ]
    return types.SimpleNamespace( get_mems=lambda: mems )

  def ip( s, device, uuid, name ):
    assert name == I.TOP
    fake, regs = s, s.regs
    cycles_at = { r.name: r.offset for r in I.register_map( s.cfg ) }["cycles"]

    class Ip:
      def write_register( i, off, v ):
        regs[ off ] = v
        if off == 0 and v & 1:                  # ap_start: the run ends at once
          regs[ 0 ] = 0b0110
          regs[ cycles_at ] = fake.cycles
      def read_register( i, off ):
        v = regs.get( off, 0 )
        if off == 0:
          regs[ 0 ] = v & ~0b1010               # done / ready clear on read
        return v
    return Ip()


TAGS = [ f"HBM[{c}]" for c in range( 32 ) ] + [ "DDR[0]", "DDR[1]" ]


def test_one_card_buffers_registers_and_readback():
  pytest.importorskip( "pymtl_dfx.kernel.control", reason="KernelControl is not merged yet" )
  model = _small_model()
  cfg = model.dfx
  E = cfg.mem_word_elems
  hbm, ddr = model.images[0]
  xrt = FakeXrt( TAGS, cfg )
  card = X.Card( xrt, 0, "k.xclbin", cfg, hbm, ddr )
  # every master's buffer on its bank, the image split over them
  for b in I.buses( cfg ):
    if b.bank:
      assert card.bo[ b.name ].group == TAGS.index( b.bank ), b.name
  for c in range( cfg.hbm_channels ):
    got = card.bo[ f"m_axi_hbm{c:02d}" ].mem.view( np.float16 ).reshape( -1, E )
    assert got.tobytes() == X.split_words( hbm, cfg.hbm_channels )[c].tobytes()
  # a step: the program in its buffer, every argument a buffer's address
  backend = X.XrtBackend.__new__( X.XrtBackend )
  backend.cfg, backend.cards, backend.timeout_s, backend.step_status = cfg, [ card ], 1.0, []
  from pymtl_dfx.isa import encode
  prog = model.emitter().step( 0, 1, 0, True )[0]
  rec = backend.step( [ prog ], None, ( 1, 0, True ) )
  assert rec["cycles"] == xrt.cycles + cfg.host_step_cycles
  regs = { r.name: r for r in I.register_map( cfg ) }
  def reg( name ):
    r = regs[ name ]
    v = xrt.regs.get( r.offset, 0 )
    return v | ( xrt.regs.get( r.offset + 4, 0 ) << 32 if r.bits == 64 else 0 )
  assert reg( "inst_count" ) == len( prog ) and reg( "ring_pos" ) == 0
  for r in regs.values():
    if r.kind == "arg" and r.bus:
      assert reg( r.name ) == card.bo[ r.bus ].address(), r.name
  inst = card.bo[ "m_axi_inst" ].mem
  assert int.from_bytes( inst[ :16 ].tobytes(), "little" ) == encode( prog[0] )
  # logits: the DDR words read back through their ports' rows, as the host reads them
  got = backend.read_ddr( 5, 20 )[0]
  assert got.tobytes() == ddr[ 5:25 ].reshape( -1 ).tobytes()
  from pymtl_dfx.appliance.host import Host
  host = Host( model, backend=backend )
  lay = model.layout
  want = X.split_words( ddr, cfg.ddr_channels )          # what the card holds
  assert host.read_logits().tobytes() == X.gather_words(
    [ w[ lo:hi ] for w, ( lo, hi ) in zip( want, X.channel_rows(
      lay["ddr"]["regions"]["logits"], -( -lay["split"]["vocab"] // E ), cfg.ddr_channels ) ) ],
    lay["ddr"]["regions"]["logits"], -( -lay["split"]["vocab"] // E ), cfg.ddr_channels
  ).reshape( -1 )[ :lay["split"]["vocab"] ][ :model.gpt.vocab_size ].tobytes()
  with pytest.raises( X.XrtUnavailable, match="no card 1" ):
    X.Card( xrt, 1, "k.xclbin", cfg, hbm, ddr )
  with pytest.raises( X.XrtUnavailable, match="no memory HBM" ):
    X.Card( FakeXrt( [ "DDR[0]", "DDR[1]" ], cfg ), 0, "k.xclbin", cfg, hbm, ddr )


def test_the_host_level_fpga_needs_an_xclbin_and_no_unit_levels( monkeypatch ):
  from pymtl_dfx.levels import LEVELS, host_for
  assert "fpga" in LEVELS
  model = _small_model()
  with pytest.raises( ValueError, match="needs the kernel's xclbin" ):
    host_for( model, "fpga" )
  with pytest.raises( ValueError, match="every unit the kernel's RTL" ):
    host_for( model, "fpga", levels={ "mpu": "cl" }, xclbin="k.xclbin" )
  monkeypatch.setitem( sys.modules, "pyxrt", None )
  with pytest.raises( X.XrtUnavailable, match="needs XRT's Python bindings" ):
    host_for( model, "fpga", xclbin="k.xclbin" )
