"""The VPU engine (cmd/a/b -> out streams of `streams.py`): FL, CL, RTL and
Verilator, bit for bit against the FL semantics, and CL == RTL cycle for cycle.

The python RTL simulation of the engine runs at ~60 (d=4), ~30 (d=8) and
~2.5 (d=64, after ~70 s of elaboration) cycles per second, so the plain pass
runs python RTL at d=4 only, with fewer instructions than FL, CL and
Verilator get (`COUNTS`); d=8 RTL runs in Verilator, d=64 RTL only with
--test-verilog and VPU_VERILATOR_D64=1 (its Verilator build is too long for
the regular pass).

`partials` is `DFXConfig.reduce_partials`: the accumulator's interleaved
partial sums (1: DFX's one running value).  With P > 1 the instructions run
up to 2P + 1 chunks, so partials wrap, stay unused (fewer than P chunks) and
combine over an odd number of live partials.  `max_tree` is
`DFXConfig.vpu_max_tree`: the max reductions' own comparator tree pipe and
accumulator (the mixed blocks switch between sum and max reductions, which
then wait for each other), alone and with P=8 partials for the sums.
`gelu` is `DFXConfig.vpu_gelu`: the op GELU down its own pipe (the mixed
blocks switch between it and the other pipes, which wait for each other),
alone and with the max reductions' pipes and P=8; without it no
instruction is GELU (the core refuses it).
"""

import os

import numpy as np
import pytest

from pymtl_dfx import numerics as N
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.isa import ComputeOp as C, make
from pymtl_dfx.testing import run_stream_test, select
from pymtl_dfx.testing.levels import run_matching_cl
from pymtl_dfx.units.regfile.state import VectorRegisterFile
from pymtl_dfx.units.vpu.latency import no_stall_latency
from pymtl_dfx.units.vpu.msgs import BINARY, VPUCmd, mk_fp16_vec
from pymtl_dfx.units.vpu.streams import (from_msgs, n_chunks, out_messages, request_streams,
                                         write_back)
from pymtl_dfx.units.vpu.models import MODELS

from pymtl_dfx.testing.fp16_ops import random_fp16  # the same stimulus as the instruction-level tests

F16 = np.float16


def vpu_ops( cfg ):
  """The VPU opcodes a core of `cfg` runs."""
  return list( C.group( "on_vpu", cfg ) )

ENTRIES = 64

# instructions per opcode: (fl/cl/verilator, python rtl)
COUNTS = { 4: ( 1000, 6 ), 8: ( 100, 2 ), 64: ( 8, 1 ) }


def _translating( opts ):
  return bool( opts.get( "test_verilog" ) or opts.get( "test_yosys_verilog" ) )


# (d, partials) cases beyond DFX's accumulator: P=2 wraps often, P=16 (above
# the adder's latency) takes a chunk a cycle
PARTIALS = [ ( 4, 2, 0 ), ( 4, 16, 0 ) ]
# (d, partials, max_tree) cases with the max reductions' own pipes
MAX_TREE = [ ( 4, 1, 1 ), ( 8, 1, 1 ), ( 4, 8, 1 ) ]
DFX = [ ( 4, 1, 0 ), ( 8, 1, 0 ) ]
# (d, partials, max_tree, gelu): the cases above without the GELU pipe, and
# with it
NO_GELU = [ c + ( 0, ) for c in DFX + PARTIALS + MAX_TREE ]
GELU = [ ( 4, 1, 0, 1 ), ( 4, 8, 1, 1 ) ]


def config( d, partials=1, max_tree=0, gelu=0 ):
  return DFXConfig( d=d, reduce_partials=partials, vpu_max_tree=max_tree, vpu_gelu=gelu )


def model( level, d, partials=1, max_tree=0, gelu=0 ):
  return select( level, **MODELS )( d, config( d, partials, max_tree, gelu ) )


def random_rf( d, rng ):
  rf = VectorRegisterFile( ENTRIES, d )
  rf.mem[:] = random_fp16( rng, ENTRIES * d ).reshape( ENTRIES, d )
  return rf


def random_inst( op, d, rng, chunks=3 ):
  """Lengths 1 .. chunks*d+1 (a third exact multiples of d); sources anywhere."""
  n = int( rng.integers( 1, chunks + 1 ) * d if rng.random() < 0.3
           else rng.integers( 1, chunks * d + 2 ) )
  src1 = int( rng.integers( 0, ENTRIES - n_chunks( n, d ) + 1 ) )
  if op in BINARY:
    return make( op, dst=0, src1=src1, src2=int( rng.integers( 0, ENTRIES - n_chunks( n, d ) + 1 ) ),
                 len=n, bcast=int( rng.integers( 0, 2 ) ) )
  return make( op, dst=0, src1=src1, len=n )


def streams_of( insts, rf, partials=1 ):
  """Concatenated (cmd, a, b, expected out) streams, all reading `rf`."""
  cmd, a, b, out = [], [], [], []
  for inst in insts:
    c, x, y = request_streams( inst, rf )
    cmd += c; a += x; b += y
    out += out_messages( inst, rf, partials )
  return cmd, a, b, out


def run_engine( level, d, streams, cmdline_opts=None, max_delay=0, seed=0, partials=1,
                max_tree=0, gelu=0 ):
  cmd, a, b, out = streams
  Vec = mk_fp16_vec( d )
  return run_stream_test(
    model( level, d, partials, max_tree, gelu ),
    sources={ "cmd": ( VPUCmd, cmd ), "a": ( Vec, a ), "b": ( Vec, b ) },
    sinks={ "out": ( Vec, out ) },
    level=level, cmdline_opts=cmdline_opts, max_delay=max_delay, seed=seed )


def _skip_slow_rtl( d, level, cmdline_opts ):
  """Skip the RTL cases the module docstring says are too slow."""
  if level != "rtl":
    return
  if not _translating( cmdline_opts ):
    if d != 4:
      pytest.skip( f"python RTL simulation at d={d} is too slow; runs in Verilator" )
  elif d == 64 and not os.environ.get( "VPU_VERILATOR_D64" ):
    pytest.skip( "d=64 Verilator build is too long for the regular pass (VPU_VERILATOR_D64=1)" )


@pytest.mark.parametrize( "d, partials, max_tree, gelu",
                          NO_GELU[:2] + [ ( 64, 1, 0, 0 ) ] + NO_GELU[2:] + GELU )
def test_every_opcode_bit_exact( d, partials, max_tree, gelu, level, cmdline_opts ):
  """Per opcode a block of random instructions (random lengths, bcast,
  values with specials and subnormals), then a block mixing all opcodes
  (results must leave in order when the engine switches pipes); one
  simulation, every out message checked by the sink."""
  _skip_slow_rtl( d, level, cmdline_opts )
  rng = np.random.default_rng( d + partials + 50 * max_tree + 70 * gelu )
  rf = random_rf( d, rng )
  ops = vpu_ops( config( d, partials, max_tree, gelu ) )
  many, few = COUNTS[ d ]
  n = few if level == "rtl" and not _translating( cmdline_opts ) else many
  chunks = 3 if partials == 1 else 2 * partials + 1
  if partials > 1:        # up to 2P + 1 chunks each: fewer instructions
    n = max( few // 2, n // 10 )
  insts = [ random_inst( op, d, rng, chunks ) for op in ops for _ in range( n ) ]
  insts += [ random_inst( ops[ k ], d, rng, chunks )
             for k in rng.integers( 0, len( ops ), max( 4 * n, 24 ) ) ]
  streams = streams_of( insts, rf, partials )
  r = run_engine( level, d, streams, cmdline_opts, max_delay=1, seed=d, partials=partials,
                  max_tree=max_tree, gelu=gelu )
  assert len( r.arrivals["out"] ) == len( streams[3] )


@pytest.mark.parametrize( "d, partials, max_tree, gelu", NO_GELU + GELU )
def test_cl_equals_rtl_under_stalls( d, partials, max_tree, gelu, level, cmdline_opts ):
  """Each opcode's block under random source and sink delays, and without
  delays: the RTL's out arrival cycles are the CL's, message for message."""
  if level == "fl":
    pytest.skip( "FL is untimed" )
  _skip_slow_rtl( d, level, cmdline_opts )
  rng = np.random.default_rng( 100 + d + partials + 50 * max_tree + 70 * gelu )
  rf = random_rf( d, rng )
  ops = vpu_ops( config( d, partials, max_tree, gelu ) )
  per_op = 3 if level == "rtl" and not _translating( cmdline_opts ) else 20
  chunks = 3 if partials == 1 else 2 * partials + 1
  insts = [ random_inst( op, d, rng, chunks ) for op in ops for _ in range( per_op ) ]
  if max_tree:    # sum and max reductions interleaved: each waits for the other kind
    reductions = [ op for op in ops if op.is_reduction ]
    insts += [ random_inst( reductions[ k ], d, rng, chunks )
               for k in rng.integers( 0, len( reductions ), 3 * per_op ) ]
  if gelu:        # GELU between element-wise ops and reductions: each waits for the others
    mixed = [ C.GELU, C.ADD, C.GELU, C.EXP, C.ACCUM, C.GELU, C.REDMAX, C.MUL ]
    insts += [ random_inst( mixed[ k ], d, rng, chunks )
               for k in rng.integers( 0, len( mixed ), 3 * per_op ) ]
  streams = streams_of( insts, rf, partials )
  for delay in ( 3, 0 ):
    run_matching_cl( level, cmdline_opts, lambda lv, opts: run_engine(
      lv, d, streams, opts, max_delay=delay, seed=7, partials=partials, max_tree=max_tree,
      gelu=gelu ), key=lambda r: r.arrivals )


@pytest.mark.parametrize( "d, partials, max_tree, gelu", NO_GELU + GELU )
def test_no_stall_latency_is_the_config_formula( d, partials, max_tree, gelu, level,
                                                 cmdline_opts ):
  """One instruction, no stalls: its first out message arrives
  `no_stall_latency` cycles after the sources start: every opcode at CL;
  at RTL (one elaboration per run) one element-wise and one reduction
  opcode, 3 chunks, and every opcode's RTL no-stall timing equals the CL's
  in `test_cl_equals_rtl_under_stalls`.  With P partials the reductions run
  1 .. 2P + 1 chunks at CL (every count of live partials)."""
  if level == "fl":
    pytest.skip( "FL is untimed" )
  _skip_slow_rtl( d, level, cmdline_opts )
  rng = np.random.default_rng( 0 )
  rf = random_rf( d, rng )
  full = level == "cl"
  cfg = config( d, partials, max_tree, gelu )
  ops = vpu_ops( cfg ) if full else \
    [ C.MUL, C.ACCUM ] + ( [ C.REDMAX ] if max_tree else [] ) + ( [ C.GELU ] if gelu else [] )
  lengths = ( 1, 2 * d + 1 ) if full else ( 2 * d + 1, )
  if partials > 1 and full:
    lengths = [ c * d for c in range( 1, 2 * partials + 2 ) ]
  for op in ops:
    for n in ( lengths if op.is_reduction else lengths[:2] ):
      inst = make( op, dst=0, src1=0, len=n ) if op not in BINARY else \
             make( op, dst=0, src1=0, src2=8, len=n, bcast=0 )
      r = run_engine( level, d, streams_of( [ inst ], rf, partials ), cmdline_opts,
                      partials=partials, max_tree=max_tree, gelu=gelu )
      assert r.arrivals["out"][0] == no_stall_latency( cfg, op, n ), ( op.mnemonic, n )


def gelu_mixed( d ):
  """A fixed sequence that switches pipes at almost every instruction: gelu
  after add (bcast) and add after gelu, reductions of both kinds between
  gelus, gelu after gelu, bcast mul and exp; one to three chunks, short
  last chunks."""
  def unary( op, src1, n ):
    return make( op, dst=0, src1=src1, len=n )

  def binary( op, src1, src2, n, bcast ):
    return make( op, dst=0, src1=src1, src2=src2, len=n, bcast=bcast )

  return [ binary( C.ADD, 0, 8, 2 * d + 1, 1 ), unary( C.GELU, 4, 3 * d ),
           binary( C.ADD, 0, 8, d, 0 ), unary( C.GELU, 12, 1 ), unary( C.ACCUM, 0, 2 * d + 3 ),
           unary( C.GELU, 16, 2 * d ), unary( C.REDMAX, 20, 3 * d ), unary( C.GELU, 0, d + 1 ),
           unary( C.GELU, 24, d ), binary( C.MUL, 28, 32, 3, 1 ), unary( C.REDMAXABS, 4, d + 2 ),
           unary( C.EXP, 36, 2 * d ), unary( C.GELU, 40, 3 * d - 1 ) ]


@pytest.mark.parametrize( "d, partials, max_tree, gelu", GELU )
def test_gelu_between_the_other_pipes( d, partials, max_tree, gelu, level, cmdline_opts ):
  """`gelu_mixed` in one simulation, without delays and with random source
  and sink delays (the sink stalls the pipes): every out message bit for
  bit (gelu's are `numerics.gelu` of its source, lanes past len +0), and at
  rtl the arrival cycles are the CL's."""
  rf = random_rf( d, np.random.default_rng( 11 ) )
  insts = gelu_mixed( d )
  for inst in insts:
    if C( int( inst.hdr.op ) ) == C.GELU:
      n = int( inst.len )
      got = from_msgs( out_messages( inst, rf, partials ), d ).reshape( -1 )
      want = np.zeros( got.size, F16 )
      want[ :n ] = N.gelu( rf.read( int( inst.src1 ), n ) )
      assert np.array_equal( N.bits( got ), N.bits( want ) ), n
  streams = streams_of( insts, rf, partials )
  for delay in ( 0, 6 ):
    run_matching_cl( level, cmdline_opts, lambda lv, opts: run_engine(
      lv, d, streams, opts, max_delay=delay, seed=5, partials=partials, max_tree=max_tree,
      gelu=gelu ), key=lambda r: r.arrivals )


SOFTMAX_T = 37


def layernorm_and_softmax( d, rng ):
  """The compiler's LayerNorm sequence, then its softmax sequence, on one
  register file; returns (rf, instructions, regs, inputs)."""
  from pymtl_dfx.compiler.emit import StepEmitter
  E = 3 * d + 5
  x = ( rng.standard_normal( E ) * 3 ).astype( F16 )
  x[ 1 ] = F16( 900 )
  g = ( 1 + 0.1 * rng.standard_normal( E ) ).astype( F16 )
  beta = ( 0.1 * rng.standard_normal( E ) ).astype( F16 )
  scores = ( rng.standard_normal( SOFTMAX_T ) * 4 ).astype( F16 )
  regs = dict( inv_n=0, eps=1, s0=2, s1=3, s2=4, s3=5, dev=8, y=13, sq=18, gamma=23,
               beta=28, x=33, h=38, scores=43, probs=53 )
  rf = VectorRegisterFile( ENTRIES, d )
  rf.write( regs["inv_n"], [ N.inv_count( E ) ] )
  rf.write( regs["eps"], [ F16( 1e-5 ) ] )
  for name, v in ( ( "x", x ), ( "gamma", g ), ( "beta", beta ), ( "scores", scores ) ):
    rf.write( regs[ name ], v )
  em = StepEmitter.__new__( StepEmitter )
  em.rf, em.E, em.d = regs, E, d
  insts = em.layernorm_vpu( regs["x"], regs["h"] )
  insts += em.softmax_vpu( SOFTMAX_T )      # the softmax of `StepEmitter.head`
  return rf, insts, regs, ( x, g, beta, scores, E )


@pytest.mark.parametrize( "d, partials, max_tree",
                          DFX + [ ( 64, 1, 0 ), ( 4, 16, 0 ), ( 4, 1, 1 ), ( 4, 8, 1 ) ] )
def test_layernorm_then_softmax_in_one_simulation( d, partials, max_tree, level, cmdline_opts ):
  """Expected register-file states come from the FL semantics instruction by
  instruction; the concatenated streams go through the engine in one run,
  and the final results are numerics.layernorm / softmax bit for bit."""
  _skip_slow_rtl( d, level, cmdline_opts )
  rf, insts, regs, ( x, g, beta, scores, E ) = layernorm_and_softmax( d, np.random.default_rng( 3 ) )
  cmd, a, b, out = [], [], [], []
  for inst in insts:
    c, x_, y_ = request_streams( inst, rf )
    o = out_messages( inst, rf, partials )
    cmd += c; a += x_; b += y_; out += o
    write_back( inst, o, rf )
  run_engine( level, d, ( cmd, a, b, out ), cmdline_opts, max_delay=2, seed=4, partials=partials,
              max_tree=max_tree )
  assert np.array_equal( N.bits( rf.read( regs["h"], E ) ),
                         N.bits( N.layernorm( x, g, beta, 1e-5, d, partials ) ) )
  assert np.array_equal( N.bits( rf.read( regs["probs"], SOFTMAX_T ) ),
                         N.bits( N.softmax( scores, d, partials ) ) )
