"""Opcode enums: the one definition of every opcode value.

An instruction's header holds a `Kind` and an opcode; which enum the opcode
belongs to is decided by the kind (`OPCODES[kind]`).  The assembler's
mnemonics are the member names in lower case.

Each member carries a one-line `doc` of its semantics; docs/isa.md is
generated from these.

Caution: members of different IntEnums with the same value compare and hash
equal (`ComputeOp.CONV1D == DmaOp.HBM_READ`), so never mix opcodes of
different kinds in one set or dict; key by (kind, opcode) or by format.
"""

from enum import IntEnum


class _Documented(IntEnum):
  """IntEnum whose members are written `NAME = value, "doc"`."""

  def __new__(cls, value, doc=""):
    obj = int.__new__(cls, value)
    obj._value_ = value
    obj.doc = doc
    return obj

  @property
  def mnemonic(self) -> str:
    return self.name.lower()


class Kind(_Documented):
  # 0 is deliberately not a kind: zero-filled instruction memory then fails
  # to decode instead of running as a string of no-op matrix products.
  COMPUTE = 1, "matrix (MPU) or vector (VPU) operation on the register file"
  DMA     = 2, "transfer between HBM / DDR and the register file or MPU"
  ROUTER  = 3, "ring all-gather between the cores"


# Compute opcodes with this bit set run on the VPU, the others on the MPU, so
# the scheduler routes an instruction from one header bit.
VPU_BIT = 0x10


class ComputeOp(_Documented):
  # Matrix processing unit: y = W x, W streamed in by earlier `hbm_read mpu`.
  CONV1D   = 0x00, "y = W x + bias (GPT-2 Conv1D)"
  MASKEDMM = 0x01, ("y = scale * (W x); y[j] = -inf for j >= mask "
                    "(attention scores with causal mask)")
  MM       = 0x02, "y = W x (e.g. probabilities times V)"
  # Vector processing unit; lengths are in elements.
  LOAD     = 0x10, "dst = src1 through the VPU bypass (starts a chain)"
  STORE    = 0x11, "dst = src1 through the VPU bypass (ends a chain)"
  ADD      = 0x12, "dst = src1 + src2 (src2[0] broadcast with bcast)"
  SUB      = 0x13, "dst = src1 - src2 (src2[0] broadcast with bcast)"
  MUL      = 0x14, "dst = src1 * src2 (src2[0] broadcast with bcast)"
  ACCUM    = 0x15, "dst[0] = sum of src1[0:len] (reduce-sum to a scalar)"
  REDMAX   = 0x16, "dst[0] = max of src1[0:len] (reduce-max to a scalar)"
  RECIP    = 0x17, "dst = 1 / src1, element-wise"
  RSQRT    = 0x18, "dst = 1 / sqrt(src1), element-wise"
  EXP      = 0x19, "dst = exp(src1), element-wise"
  INVPOW2  = 0x1A, ("dst = 2^-floor(log2|src1|), element-wise (pre-scales "
                    "LayerNorm deviations so their squares stay finite)")
  REDMAXABS = 0x1B, ("dst[0] = max of |src1[0:len]| (reduce-max of magnitudes: "
                     "the LayerNorm pre-scale needs max|x - mean|)")
  GELU     = 0x1C, ("dst = gelu(src1), element-wise (the numerics table, as the "
                    "MPU's post-op GELU; only on a VPU with DFXConfig.vpu_gelu)")

  @property
  def on_vpu(self) -> bool:
    return bool(self.value & VPU_BIT)

  @property
  def option(self):
    """The DFXConfig design option a unit needs to run this op (None: every
    DFX core runs it)."""
    return _OP_OPTIONS.get(self)

  def runs_on(self, cfg) -> bool:
    """Whether a core of `cfg` (a DFXConfig) runs this op."""
    return self.option is None or bool(getattr(cfg, self.option))

  # The VPU's opcode groups, defined here once: which operand streams an op
  # takes and how many results it writes.  The models, the footprint, the
  # format's field rules and the RTL's constant masks all derive from these.
  @property
  def is_binary(self) -> bool:
    """A VPU op with a second operand: src2 (or src2[0] with bcast)."""
    return self in (ComputeOp.ADD, ComputeOp.SUB, ComputeOp.MUL)

  @property
  def is_reduction(self) -> bool:
    """A VPU op that reduces src1[0:len] to one result, dst[0]."""
    return self in (ComputeOp.ACCUM, ComputeOp.REDMAX, ComputeOp.REDMAXABS)

  @property
  def is_max_reduction(self) -> bool:
    """A reduction through the max tree (the others sum)."""
    return self in (ComputeOp.REDMAX, ComputeOp.REDMAXABS)

  @property
  def is_unary(self) -> bool:
    """A VPU op of src1 alone, element by element."""
    return self.on_vpu and not (self.is_binary or self.is_reduction)

  @property
  def is_elementwise(self) -> bool:
    """A VPU op with one result per element (unary or binary)."""
    return self.on_vpu and not self.is_reduction

  @classmethod
  def group(cls, prop: str, cfg=None) -> tuple:
    """The members with property `prop` (e.g. "is_binary"), in value order:
    a group as one constant, for sampling, sets and the RTL's masks.  With
    `cfg` (a DFXConfig) only those a core of `cfg` runs (`runs_on`), for
    drawing the ops of a program for that core."""
    return tuple(op for op in cls if getattr(op, prop) and (cfg is None or op.runs_on(cfg)))


# Opcodes only a core with a design option on runs: (op, DFXConfig field).
_OP_OPTIONS = {ComputeOp.GELU: "vpu_gelu"}


class DmaOp(_Documented):
  HBM_READ  = 0x0, ("HBM -> register file, or with mpu -> the MPU weight "
                    "stream (d x l tiles, consumed in order by matrix ops)")
  HBM_WRITE = 0x1, ("register file -> HBM (K rows; V rows with tr, scattered "
                    "into the transposed tile layout at token pos)")
  DDR_READ  = 0x2, ("DDR -> register file (tokens' embeddings, biases, "
                    "LayerNorm parameters)")
  DDR_WRITE = 0x3, "register file -> DDR (output token / logits)"


class RouterOp(_Documented):
  SYNC = 0x0, ("all-gather: send this core's len elements at "
               "rf + ring_position*len, receive the other cores' into place")


class PostOp(_Documented):
  """Matrix-side special function unit, applied to a matrix op's result."""
  NONE      = 0, "result written as computed"
  GELU      = 1, "GELU (the numerics table) applied to each output"
  REDMAX    = 2, ("also reduce-max: dst[0] = max(y), y written from entry "
                  "dst+1 on")
  VECTORIZE = 3, ("lane outputs regrouped into d-element vectors "
                  "(values unchanged)")


# ComputeOp's VPU group properties, for the docs and the tests.
VPU_GROUPS = ("is_unary", "is_binary", "is_elementwise", "is_reduction",
              "is_max_reduction")


# Which enum an opcode belongs to, by kind.
OPCODES = {Kind.COMPUTE: ComputeOp, Kind.DMA: DmaOp, Kind.ROUTER: RouterOp}


def kind_of(op) -> Kind:
  for kind, enum in OPCODES.items():
    if type(op) is enum:
      return kind
  raise TypeError(f"{op!r} is not an opcode (expected one of "
                  f"{', '.join(e.__name__ for e in OPCODES.values())})")


def all_ops():
  """Every opcode of every kind, kind by kind in value order."""
  return [op for enum in OPCODES.values() for op in enum]
