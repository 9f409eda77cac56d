"""AxiMemSlaveRTL before a one-channel MemoryRTL, driven by a scripted AXI4
master with random valid gaps and ready back-pressure (the protocol checked
on the bus): INCR bursts and single beats with byte strobes against a
Python model; every kind of transaction the slave does not serve answers
SLVERR on each of its beats, sets `bad`, writes nothing, and a good
transaction after it is served.  The slave is a Verilator model under
--test-verilog."""

import random
from fractions import Fraction

import pytest

from pymtl3 import *

from pymtl_dfx.kernel.axi import BURST_INCR, MEM_ADDR_BITS, RESP_OKAY, RESP_SLVERR, AxiMasterIfc
from pymtl_dfx.kernel.AxiMemSlaveRTL import AxiMemSlaveRTL
from pymtl_dfx.testing.axi_check import AxiCheckRTL, run_with_duts, watch
from pymtl_dfx.units.memory.msgs import MemorySpec
from pymtl_dfx.units.memory.MemoryRTL import MemoryRTL

DEPTH = 16
E = 8                    # FP16 elements a word: 128 bits, 16 bytes
WB = 2 * E
SIZE = 4                 # log2( WB )
FIXED, WRAP = 0b00, 0b10
# the spec of test_mem_axi_master's narrow chain: one Verilator build serves both
SPEC = MemorySpec( "HBM", 1, Fraction( 1 ), 4, 9, DEPTH, E )
FULL = ( 1 << WB ) - 1


def rd( addr, n=1, size=SIZE, burst=BURST_INCR, id_=0 ):
  return ( addr, n - 1, size, burst, id_ )


def wr( addr, beats, size=SIZE, burst=BURST_INCR, id_=0, lasts=None ):
  """beats: (data, wstrb) per beat; lasts: wlast per beat (default: the last)."""
  lasts = lasts or [ int( k == len( beats ) - 1 ) for k in range( len( beats ) ) ]
  return ( addr, len( beats ) - 1, size, burst, id_,
           [ ( d, st, l ) for ( d, st ), l in zip( beats, lasts ) ] )


class ScriptMaster( Component ):
  """Sends `writes` (AW and W independently), then, once every B is in,
  `reads`; valid rises after random gaps and stays until ready; rready and
  bready are random.  Keeps what came back in r_got (data, resp, last) and
  b_got (resp)."""

  def construct( s, writes, reads, p, seed ):
    s.axi = AxiMasterIfc( MEM_ADDR_BITS, 16 * E )
    s.writes, s.reads = writes, reads
    s.beats = [ b for w in writes for b in w[5] ]
    rng = random.Random( seed )
    s.r_got, s.b_got = [], []
    s.ar_i = s.aw_i = s.w_i = 0
    s.want_r = sum( r[1] + 1 for r in reads )

    @update_ff
    def up_script():
      if s.reset:
        s.ar_i = s.aw_i = s.w_i = 0
        s.r_got, s.b_got = [], []
        s.axi.arvalid <<= 0
        s.axi.awvalid <<= 0
        s.axi.wvalid <<= 0
        s.axi.rready <<= 0
        s.axi.bready <<= 0
        return
      ar_held = s.axi.arvalid & ~s.axi.arready
      aw_held = s.axi.awvalid & ~s.axi.awready
      w_held = s.axi.wvalid & ~s.axi.wready
      s.ar_i += int( s.axi.arvalid & s.axi.arready )
      s.aw_i += int( s.axi.awvalid & s.axi.awready )
      s.w_i += int( s.axi.wvalid & s.axi.wready )
      if s.axi.rvalid & s.axi.rready:
        s.r_got.append( ( int( s.axi.rdata ), int( s.axi.rresp ), int( s.axi.rlast ) ) )
      if s.axi.bvalid & s.axi.bready:
        s.b_got.append( int( s.axi.bresp ) )
      reads_on = len( s.b_got ) == len( s.writes )
      if s.ar_i < len( s.reads ) and reads_on and ( ar_held or rng.random() < 0.6 ):
        a, n, size, burst, id_ = s.reads[ s.ar_i ]
        s.axi.arvalid <<= 1
        s.axi.araddr <<= a
        s.axi.arlen <<= n
        s.axi.arsize <<= size
        s.axi.arburst <<= burst
        s.axi.arid <<= id_
      else:
        s.axi.arvalid <<= 0
      if s.aw_i < len( s.writes ) and ( aw_held or rng.random() < 0.6 ):
        a, n, size, burst, id_, _ = s.writes[ s.aw_i ]
        s.axi.awvalid <<= 1
        s.axi.awaddr <<= a
        s.axi.awlen <<= n
        s.axi.awsize <<= size
        s.axi.awburst <<= burst
        s.axi.awid <<= id_
      else:
        s.axi.awvalid <<= 0
      if s.w_i < len( s.beats ) and ( w_held or rng.random() < 0.6 ):
        d, st, l = s.beats[ s.w_i ]
        s.axi.wvalid <<= 1
        s.axi.wdata <<= d
        s.axi.wstrb <<= st
        s.axi.wlast <<= l
      else:
        s.axi.wvalid <<= 0
      s.axi.rready <<= int( rng.random() >= p )
      s.axi.bready <<= int( rng.random() >= p )

  def done( s ):
    return len( s.b_got ) == len( s.writes ) and len( s.r_got ) >= s.want_r


class Bench( Component ):

  def construct( s, base, writes, reads, p, seed, fail=0 ):
    s.master = ScriptMaster( writes, reads, p, seed )
    s.dut = AxiMemSlaveRTL( SPEC )
    s.mem = MemoryRTL( SPEC, DEPTH )
    s.chk = AxiCheckRTL( MEM_ADDR_BITS, 16 * E, "slave" )
    s.master.axi //= s.dut.axi
    watch( s.chk, s.master.axi, s.dut.axi )
    s.dut.base //= base
    s.dut.fail //= fail
    s.dut.req //= s.mem.req[0]
    s.mem.resp[0] //= s.dut.resp
    s.mem.host_req.val //= 0
    s.mem.host_req.msg //= SPEC.types["Req"]()
    s.mem.host_resp.rdy //= 0

  def done( s ):
    return s.master.done()

  def line_trace( s ):
    return s.dut.line_trace()


def run( base, writes, reads, cmdline_opts, p=0.3, seed=0, fail=0 ):
  th = Bench( base, writes, reads, p, seed, fail )
  th, _ = run_with_duts( th, [ "dut" ], cmdline_opts, 3000, "the AXI slave" )
  return th


class Model:
  """Memory words by row; a write beat stores the elements whose two byte
  strobes are set (the tests give whole elements only to good beats)."""

  def __init__( s ):
    s.mem = [ 0 ] * DEPTH

  def write( s, row, data, wstrb ):
    for b in range( WB ):
      if ( wstrb >> b ) & 1:
        m = 0xFF << ( 8 * b )
        s.mem[ row ] = ( s.mem[ row ] & ~m ) | ( data & m )


def element_strobe( rng ):
  st = 0
  for k in range( E ):
    if rng.random() < 0.6:
      st |= 0b11 << ( 2 * k )
  return st


# bursts of 1..8 beats and single beats, strobed, then a read of every row
# in bursts; all OKAY, rlast on each burst's last beat only, bad stays 0
@pytest.mark.parametrize( "base,seed", [ ( 0x2_0000_1000, 1 ), ( 0, 2 ) ] )
def test_bursts_against_model( base, seed, cmdline_opts ):
  rng, m = random.Random( seed ), Model()
  writes = []
  init = [ ( rng.getrandbits( 128 ), FULL ) for _ in range( DEPTH ) ]
  writes.append( wr( base, init ) )
  for row in range( DEPTH ):
    m.write( row, *init[ row ] )
  for _ in range( 8 ):
    n = rng.choice( [ 1, 1, 2, 3, 8 ] )
    row = rng.randrange( DEPTH - n + 1 )
    beats = [ ( rng.getrandbits( 128 ), element_strobe( rng ) ) for _ in range( n ) ]
    writes.append( wr( base + row * WB, beats ) )
    for k, ( d, st ) in enumerate( beats ):
      m.write( row + k, d, st )
  reads = [ rd( base, 5 ), rd( base + 5 * WB ), rd( base + 6 * WB, 10 ) ]
  th = run( base, writes, reads, cmdline_opts, seed=seed )
  assert th.master.b_got == [ RESP_OKAY ] * len( writes )
  assert [ d for d, _, _ in th.master.r_got ] == m.mem
  assert [ r for _, r, _ in th.master.r_got ] == [ RESP_OKAY ] * DEPTH
  assert [ l for _, _, l in th.master.r_got ] == [ 0, 0, 0, 0, 1, 1 ] + [ 0 ] * 9 + [ 1 ]
  assert int( th.dut.bad ) == 0
  assert th.chk.beats[ "ar" ] == 3 and th.chk.beats[ "w" ] == DEPTH + sum( len( w[5] ) for w in writes[1:] )


BASE = 0x1F80            # rows 0..15 at 0x1F80..0x207F: row 8 starts a 4 KB page

# (name, a bad write or None, a bad read or None)
BAD = [
  ( "read FIXED burst", None, rd( BASE, 2, burst=FIXED ) ),
  ( "read WRAP burst", None, rd( BASE, 2, burst=WRAP ) ),
  ( "read narrow size", None, rd( BASE, size=SIZE - 1 ) ),
  ( "read unaligned", None, rd( BASE + 2 ) ),
  ( "read past the end", None, rd( BASE + DEPTH * WB ) ),
  ( "read below base", None, rd( BASE - WB ) ),
  ( "read across 4 KB", None, rd( BASE + 7 * WB, 2 ) ),
  ( "read id 1", None, rd( BASE, id_=1 ) ),
  ( "write FIXED burst", wr( BASE, [ ( 1, FULL ), ( 2, FULL ) ], burst=FIXED ), None ),
  ( "write narrow size", wr( BASE, [ ( 1, FULL ) ], size=SIZE - 1 ), None ),
  ( "write half an element", wr( BASE, [ ( 1, 0b01 ) ] ), None ),
  ( "write without wlast", wr( BASE, [ ( 1, FULL ) ], lasts=[ 0 ] ), None ),
  ( "write wlast early", wr( BASE, [ ( 1, FULL ), ( 2, FULL ) ], lasts=[ 1, 0 ] ), None ),
  ( "write across 4 KB", wr( BASE + 7 * WB, [ ( 1, FULL ), ( 2, FULL ) ] ), None ),
  ( "write past the end", wr( BASE + DEPTH * WB, [ ( 1, FULL ) ] ), None ),
  ( "write id 1", wr( BASE, [ ( 1, FULL ) ], id_=1 ), None ),
]


@pytest.mark.parametrize( "name,bad_w,bad_r", BAD, ids=[ b[0] for b in BAD ] )
def test_unsupported_transaction( name, bad_w, bad_r, cmdline_opts ):
  rng = random.Random( name )
  init = [ rng.getrandbits( 128 ) for _ in range( DEPTH ) ]
  # the good bursts stop at the page boundary (row 8)
  writes = [ wr( BASE, [ ( d, FULL ) for d in init[ :8 ] ] ),
             wr( BASE + 8 * WB, [ ( d, FULL ) for d in init[ 8: ] ] ) ] + ( [ bad_w ] if bad_w else [] )
  reads = ( [ bad_r ] if bad_r else [] ) + [ rd( BASE, 8 ), rd( BASE + 8 * WB, 8 ) ]
  th = run( BASE, writes, reads, cmdline_opts, seed=3 )
  got = th.master.r_got
  assert int( th.dut.bad ) == 1
  if bad_w:
    assert th.master.b_got == [ RESP_OKAY, RESP_OKAY, RESP_SLVERR ]
  if bad_r:
    n = bad_r[1] + 1
    assert [ ( r, l ) for _, r, l in got[ :n ] ] == [ ( RESP_SLVERR, 0 ) ] * ( n - 1 ) + [ ( RESP_SLVERR, 1 ) ]
    got = got[ n: ]
  # the good read after it: served, and the bad write stored nothing
  assert [ ( d, r ) for d, r, _ in got ] == [ ( d, RESP_OKAY ) for d in init ]


# fail=1: every response SLVERR, the accesses still happen, bad stays 0
def test_fail_answers_slverr( cmdline_opts ):
  writes = [ wr( 0x40, [ ( 5, FULL ), ( 6, FULL ) ] ) ]
  th = run( 0x40, writes, [ rd( 0x40, 2 ) ], cmdline_opts, fail=1 )
  assert th.master.b_got == [ RESP_SLVERR ]
  assert th.master.r_got == [ ( 5, RESP_SLVERR, 0 ), ( 6, RESP_SLVERR, 1 ) ]
  assert int( th.dut.bad ) == 0
