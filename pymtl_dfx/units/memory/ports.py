"""What every memory model (MemoryFL, MemoryCL, MemoryRTL) shares: its
ports, the host port's types, the channel timing rule and the checks.

Ports, the same at FL, CL and RTL:
  req[c] / resp[c]     the DMA side, c < spec.channels: `MemReq` (row is the
                       channel's row) / `MemResp` (`msgs`).
  host_req / host_resp the host side (XRT on the U280; the tests here): a
                       `MemReq` whose `row` field is the full WORD address
                       (`host_addr_bits` wide: the row's bits above the
                       channel's), and a `MemResp`.  Responses come back in
                       host request order, across channels.

Sharing a channel: the DMA side has priority.  A host request waits while
the DMA offers a request to the same channel (a DMA that streams at full
rate starves the host; the host loads memories before a run and reads
results after it).  Both share the channel's rate credit and its
`outstanding` slots; each response goes back to whoever asked, in the
channel's order (a host response at the head of a channel holds the DMA
responses behind it until the host takes it).

Storage: `depth` rows per channel (a power of two); a row index is taken
modulo depth, so a test memory aliases: rows r and r + depth are one row.
"""

from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ...lib.rate_queue import RateRule
from .msgs import MemoryConfigError, mk_mem_types


def channel_rule( spec ):
  """A channel's timing: one word per request at spec.words_per_cycle,
  response spec.latency cycles after acceptance, spec.outstanding held."""
  return RateRule.of( spec.words_per_cycle, 1, spec.latency, spec.outstanding )


def channel_bits( spec ):
  """Low bits of a word address that pick its channel."""
  return ( spec.channels - 1 ).bit_length()


def host_addr_bits( spec ):
  return spec.row_bits + channel_bits( spec )


def mk_host_types( spec ):
  """The host port: a MemReq whose row field holds a full word address."""
  return mk_mem_types( host_addr_bits( spec ), spec.word_elems )


def check_memory( spec, depth, host_entries ):
  errors = []
  C = spec.channels
  if not isinstance( C, int ) or C < 1 or C & ( C - 1 ):
    errors.append( f"channels={C!r} (must be a power of two)" )
  if not isinstance( depth, int ) or depth < 2 or depth & ( depth - 1 ):
    errors.append( f"depth={depth!r} (rows per channel: a power of two, at least 2)" )
  elif depth > 1 << spec.row_bits:
    errors.append( f"depth={depth} (more rows than the {spec.row_bits}-bit row address reaches)" )
  if not isinstance( host_entries, int ) or host_entries < 1:
    errors.append( f"host_entries={host_entries!r} (must be a positive integer)" )
  if errors:
    raise MemoryConfigError( f"invalid {spec.name} memory: " + "; ".join( errors ) )


def declare_ports( s, spec, depth, host_entries ):
  """The memory's boundary at every level; returns (DMA types, host types)."""
  check_memory( spec, depth, host_entries )
  T, H = spec.types, mk_host_types( spec )
  s.req  = [ RecvIfcRTL( T["Req"] ) for _ in range( spec.channels ) ]
  s.resp = [ SendIfcRTL( T["Resp"] ) for _ in range( spec.channels ) ]
  s.host_req  = RecvIfcRTL( H["Req"] )
  s.host_resp = SendIfcRTL( H["Resp"] )
  return T, H
