"""The host runtime on U280 cards (`dfx generate --level fpga`), through
XRT's Python bindings (`pyxrt`, shipped with XRT in /opt/xilinx/xrt/python,
not on PyPI).

Per card (one device each, card i at ring position i):
  1. open the device, load the xclbin (`dfx fpga`'s build), open dfx_kernel
     for register access (`XrtIO`: read32 / write32);
  2. one buffer per memory master of `interface.buses(cfg)`, on the bank the
     link config places that master on (`Bus.bank`, the same source as its
     `sp=`): one per HBM pseudo-channel (at most 256 MB: `hbm_channel_mb`),
     one per DDR port, and the program buffer on DDR[0];
  3. the compiled HBM and DDR images split over their per-channel buffers
     (`split_words`: word a in channel a mod C at row a // C, the DMA's
     rule, `units.memory.msgs.channel_of` / `row_of`), written and synced
     once;
  4. per token step: the step's program written to the program buffer and
     synced, the arguments set and the kernel started on every card
     (`control.KernelControl`, the register protocol the co-simulation
     drives too), ap_done awaited on each, the cycles read from the status
     registers; after a step that wants logits, the logits' DDR rows synced
     back and joined (`gather_words`).

`XrtBackend` is a backend of `appliance.host.Host` (as the simulated
levels are), so generation, decoding and the CLI are the same code.
The runtime's own per-step costs (`RUNTIME_COSTS`: a run start through
XRT, a buffer sync) are named and sourced in docs/perf.md ("Costs of the
U280 system", the FPGA runtime's table).
"""

import time

import numpy as np

from ..lib.arith import ceil_div
from ..units.memory.msgs import channel_of, row_of
from . import interface as I

# The FPGA runtime's costs per token step, each a public measurement
# (docs/perf.md "Costs of the U280 system": the source and why it applies).
RUNTIME_COSTS = {
  # one blocking small buffer sync host <-> U280 over XRT 2.9 (half of the
  # measured 33.3 us write + read pair; pc2/hpcc_fpga_eval_21 beff_pcie_N1.out)
  "bo_sync_us": 16.65,
  # one kernel start through XRT, unqueued (xrt::run start 16-56 us on a
  # U25, the lower end; Xilinx/XRT issues #6601, #8687, PR #4071)
  "run_start_us": 16.0,
}
DDR_BANK_MB = 16 * 1024           # one U280 DDR4 bank (2 x 16 GB)
POLL_S = 20e-6                    # between two reads of CTRL while a step runs


class XrtUnavailable( OSError ):
  """No XRT Python bindings, or no card to run on."""


class XclbinError( ValueError ):
  """An --xclbin that XRT cannot read, that a card cannot load, or that
  holds no dfx_kernel."""


class FpgaBufferError( ValueError ):
  """A compiled image that the U280's buffers cannot hold."""


def step_overhead_us( cards, want_logits, costs=RUNTIME_COSTS ):
  """The runtime's own cost of one token step, us: the program synced to
  every card, a start on each (one after the other), and the logits synced
  back from each after a step that wants them."""
  syncs = cards * ( 2 if want_logits else 1 )
  return syncs * costs["bo_sync_us"] + cards * costs["run_start_us"]


# -- images over per-channel buffers (pure) ------------------------------------------------

def split_words( words, channels, rows=None ):
  """[n, E] memory words -> one [rows, E] array per channel: word a in
  channel a mod C at row a // C (the DMA's interleave); `rows` at least
  ceil(n / C) (the buffer's depth), zero-filled past the image."""
  words = np.asarray( words )
  n = words.shape[0]
  need = ceil_div( n, channels )
  rows = need if rows is None else rows
  if rows < need:
    raise FpgaBufferError( f"{n} words need {need} rows in each of {channels} channels, "
                           f"not {rows}" )
  out = [ np.zeros( ( rows, ) + words.shape[1:], words.dtype ) for _ in range( channels ) ]
  a = np.arange( n )
  ch, row = channel_of( a, channels ), row_of( a, channels )
  for c in range( channels ):
    mine = ch == c
    out[c][ row[ mine ] ] = words[ mine ]
  return out


def channel_rows( addr, n_words, channels ):
  """Per channel, the row range [lo, hi) that words addr .. addr+n-1 touch
  (lo == hi: none)."""
  out = []
  for c in range( channels ):
    first = addr + ( c - addr ) % channels            # the first word >= addr in channel c
    if first >= addr + n_words:
      out.append( ( 0, 0 ) )
      continue
    last = addr + n_words - 1 - ( addr + n_words - 1 - c ) % channels
    out.append( ( row_of( first, channels ), row_of( last, channels ) + 1 ) )
  return out


def gather_words( parts, addr, n_words, channels ):
  """Words addr .. addr+n-1 in address order, from `parts[c]`: channel c's
  rows `channel_rows(addr, n, C)[c]` as read back."""
  spans = channel_rows( addr, n_words, channels )
  a = np.arange( addr, addr + n_words )
  ch, row = channel_of( a, channels ), row_of( a, channels )
  first = next( p for p in parts if len( p ) )
  out = np.zeros( ( n_words, ) + first.shape[1:], first.dtype )
  for c in range( channels ):
    mine = ch == c
    out[ mine ] = parts[c][ row[ mine ] - spans[c][0] ]
  return out


def program_bytes( prog ):
  """A program as m_axi_inst reads it: one instruction per beat of
  `interface.inst_data_bits()`, little-endian."""
  from ..isa import encode
  n = I.inst_data_bits() // 8
  return b"".join( int( encode( inst ) ).to_bytes( n, "little" ) for inst in prog )


def buffer_plan( cfg, hbm_words, ddr_words, program_words=0 ):
  """{bus name: (bank, bytes)} of one card's buffers: every HBM and DDR
  master's rows of its interleaved image, and the program; FpgaBufferError
  past a pseudo-channel (or a DDR bank)."""
  word = cfg.mem_word_bytes
  limit_hbm = cfg.hbm_channel_mb * 2**20
  plan = {}
  per_bank = {}
  for b in I.buses( cfg ):
    if b.memory == "hbm":
      size = ceil_div( hbm_words, cfg.hbm_channels ) * word
      if size > limit_hbm:
        raise FpgaBufferError( f"the HBM image needs {size / 2**20:.1f} MB in {b.name}'s "
                               f"pseudo-channel; a U280 pseudo-channel buffer holds at most "
                               f"{cfg.hbm_channel_mb} MB" )
    elif b.memory == "ddr":
      size = ceil_div( ddr_words, cfg.ddr_channels ) * word
    elif b.memory == "inst":
      size = max( 1, program_words ) * ( I.inst_data_bits() // 8 )
    else:
      continue
    plan[ b.name ] = ( b.bank, size )
    per_bank[ b.bank ] = per_bank.get( b.bank, 0 ) + size
  for bank, size in per_bank.items():
    if bank.startswith( "DDR" ) and size > DDR_BANK_MB * 2**20:
      raise FpgaBufferError( f"the buffers on {bank} need {size / 2**30:.1f} GB; a U280 DDR4 "
                             f"bank holds {DDR_BANK_MB // 1024} GB" )
  return plan


# -- XRT ------------------------------------------------------------------------------------

def require_xrt():
  """pyxrt, or XrtUnavailable saying how to get it (one line)."""
  try:
    import pyxrt
  except ImportError as e:
    raise XrtUnavailable( f"--level fpga needs XRT's Python bindings (pyxrt), which come with "
                          f"XRT, not from PyPI: `source /opt/xilinx/xrt/setup.sh` puts them on "
                          f"PYTHONPATH ({e})" ) from None
  return pyxrt


class XrtIO:
  """read32 / write32 of dfx_kernel's s_axi_control on one card
  (`pyxrt.ip`'s read_register / write_register)."""

  def __init__( s, ip ):
    s.ip = ip

  def read32( s, offset ):
    return int( s.ip.read_register( offset ) ) & 0xFFFFFFFF

  def write32( s, offset, value ):
    s.ip.write_register( offset, int( value ) & 0xFFFFFFFF )


class Card:
  """One U280: its device, the kernel's registers and one buffer per
  memory master on its bank."""

  def __init__( s, xrt, index, xclbin_path, cfg, hbm, ddr ):
    from .control import KernelControl
    s.xrt, s.cfg, s.index = xrt, cfg, index
    try:
      s.device = xrt.device( index )
    except Exception as e:                       # pyxrt raises RuntimeError
      raise XrtUnavailable( f"--level fpga: no card {index} for ring position {index} "
                            f"(`xbutil examine` lists the cards): {e}" ) from None
    # pyxrt raises RuntimeError for a file that is no xclbin ("Invalid
    # xclbin"), one built for another platform or one without the kernel
    try:
      xclbin = xrt.xclbin( xclbin_path )
    except Exception as e:
      raise XclbinError( f"--xclbin {xclbin_path}: XRT cannot read it as an xclbin ({e}); "
                         f"give the .xclbin that `dfx fpga`'s Makefile builds" ) from None
    try:
      s.uuid = s.device.load_xclbin( xclbin )
    except Exception as e:
      raise XclbinError( f"--xclbin {xclbin_path}: card {index} cannot load it ({e}); "
                         f"`xbutil examine` shows the card's platform" ) from None
    s.banks = { m.get_tag(): m.get_index() for m in xclbin.get_mems() }
    try:
      ip = xrt.ip( s.device, s.uuid, I.TOP )
    except Exception as e:
      raise XclbinError( f"--xclbin {xclbin_path}: no kernel {I.TOP} in it ({e}); build it "
                         f"from `dfx fpga`'s folder" ) from None
    s.ctl = KernelControl( XrtIO( ip ), cfg )
    s.plan = buffer_plan( cfg, hbm.shape[0], ddr.shape[0] )
    s.bo = { name: s._alloc( bank, size ) for name, ( bank, size ) in s.plan.items() }
    s.program_words = 0
    s._load( "hbm", hbm, cfg.hbm_channels )
    s._load( "ddr", ddr, cfg.ddr_channels )

  def _alloc( s, bank, size ):
    if bank not in s.banks:
      raise XrtUnavailable( f"the xclbin has no memory {bank} (tags: {', '.join( s.banks )}); "
                            f"build it with `dfx fpga`'s link config" )
    return s.xrt.bo( s.device, size, s.xrt.bo.normal, s.banks[ bank ] )

  def _sync( s, bo, to_device, size, offset=0 ):
    d = s.xrt.xclBOSyncDirection
    bo.sync( d.XCL_BO_SYNC_BO_TO_DEVICE if to_device else d.XCL_BO_SYNC_BO_FROM_DEVICE,
             size, offset )

  def _masters( s, memory ):
    return [ b.name for b in I.buses( s.cfg ) if b.memory == memory ]

  def _load( s, memory, image, channels ):
    names = s._masters( memory )
    for name, part in zip( names, split_words( image, channels ) ):
      raw = np.ascontiguousarray( part ).view( np.uint8 ).reshape( -1 )
      s.bo[ name ].write( raw, 0 )
      s._sync( s.bo[ name ], True, raw.size )

  def put_program( s, prog ):
    raw = program_bytes( prog )
    if len( prog ) > s.program_words:       # a larger program: a larger buffer
      bank, _ = s.plan[ "m_axi_inst" ]
      s.program_words = max( len( prog ), 2 * s.program_words )
      s.bo[ "m_axi_inst" ] = s._alloc( bank, s.program_words * ( I.inst_data_bits() // 8 ) )
    s.bo[ "m_axi_inst" ].write( np.frombuffer( raw, np.uint8 ), 0 )
    s._sync( s.bo[ "m_axi_inst" ], True, len( raw ) )
    return len( prog )

  def args( s, n_inst ):
    out = dict( inst_count=n_inst, ring_pos=s.index )
    for r in I.register_map( s.cfg ):
      if r.kind == "arg" and r.bus:
        out[ r.name ] = int( s.bo[ r.bus ].address() )
    return out

  def read_ddr( s, addr, n_words ):
    C, E = s.cfg.ddr_channels, s.cfg.mem_word_elems
    word = s.cfg.mem_word_bytes
    parts = []
    for name, ( lo, hi ) in zip( s._masters( "ddr" ), channel_rows( addr, n_words, C ) ):
      if hi == lo:
        parts.append( np.zeros( ( 0, E ), np.float16 ) )
        continue
      bo = s.bo[ name ]
      s._sync( bo, False, ( hi - lo ) * word, lo * word )
      raw = np.asarray( bo.read( ( hi - lo ) * word, lo * word ), np.uint8 )
      parts.append( raw.view( np.float16 ).reshape( hi - lo, E ) )
    return gather_words( parts, addr, n_words, C )


class XrtBackend:
  """`Host`'s backend on real cards: one `Card` per core of the compiled
  model, all running each step's programs at once."""

  level = "fpga"
  data = True
  counts_busy, stalls = False, None

  def __init__( s, compiled, xclbin_path, max_cycles=None, timeout_s=60.0 ):
    xrt = require_xrt()
    s.cfg = compiled.dfx
    # a step's bound: its cycle limit at the kernel clock, if one is given
    s.timeout_s = max_cycles / ( s.cfg.clock_mhz * 1e6 ) if max_cycles else timeout_s
    s.cards = [ Card( xrt, i, xclbin_path, s.cfg, hbm, ddr )
                for i, ( hbm, ddr ) in enumerate( compiled.images ) ]
    s.load_cycles = s.readback_cycles = 0
    s.step_status = []

  def step( s, progs, classes, at ):
    from ..appliance.attribution import step_record
    counts = [ card.put_program( p ) for card, p in zip( s.cards, progs ) ]
    for card, n in zip( s.cards, counts ):
      card.ctl.set_args( **card.args( n ) )
    for card in s.cards:
      card.ctl.start()
    polls = max( 1, int( s.timeout_s / POLL_S ) )
    for card in s.cards:
      card.ctl.wait_done( polls, between=lambda: time.sleep( POLL_S ) )
    status = [ card.ctl.status() for card in s.cards ]
    s.step_status.append( status )
    bad = [ ( i, st["errors"] ) for i, st in enumerate( status ) if st.get( "errors" ) ]
    if bad:
      names = { b: n for n, b in I.ERROR_BITS.items() }
      raise OSError( f"step at position {at[1]}: " + "; ".join(
        f"card {i} error bits {', '.join( names.get( k, str( k ) ) for k in range( 32 ) if e >> k & 1 )}"
        for i, e in bad ) )
    return step_record( s.cfg, max( st["cycles"] for st in status ), None )

  def read_ddr( s, addr, n_words ):
    return [ card.read_ddr( addr, n_words ).reshape( -1 ) for card in s.cards ]
