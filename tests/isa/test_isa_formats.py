"""Formats: width, common header position, config fit."""

import pytest

from pymtl_dfx.config import ConfigError, DFXConfig
from pymtl_dfx.isa import (FIELDS, FORMATS, HEADER_LO, INST_BITS, Header,
                           check_config_fits, layout, make, ops_of)
from pymtl_dfx.isa.formats import RESTRICTED


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
def test_format_is_one_word_and_tiles_it(fmt):
  assert fmt.nbits == INST_BITS
  slots = layout(fmt)
  assert slots[0].hi == INST_BITS and slots[-1].lo == 0
  for upper, lower in zip(slots, slots[1:]):
    assert upper.lo == lower.hi


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
def test_header_is_at_the_same_bits_in_every_format(fmt):
  header = [(s.name, s.lo, s.hi) for s in layout(Header, INST_BITS)]
  assert [(s.name, s.lo, s.hi) for s in layout(fmt)][:len(header)] == header
  assert header[-1][1] == HEADER_LO
  # And the bits really land there: set one header field at a time.
  op = ops_of(fmt)[-1]
  word = int(make(op).to_bits())
  assert word >> HEADER_LO == int(make(op).hdr.to_bits())
  assert word & ((1 << HEADER_LO) - 1) == 0


def test_every_field_is_documented_and_restrictions_name_real_fields():
  for fmt in FORMATS:
    names = {s.name for s in layout(fmt)}
    assert names <= set(FIELDS)
    assert set(RESTRICTED[fmt]) <= names
    for users in RESTRICTED[fmt].values():
      assert set(users) <= set(ops_of(fmt))


def test_default_config_fits():
  check_config_fits(DFXConfig())
  check_config_fits(DFXConfig(d=128, l=32, cores=4))


@pytest.mark.parametrize("change, names", [
  (dict(vreg_entries=8192), ["dst", "src1", "rf", "VREG_BITS", "8191"]),
  (dict(d=512), ["rows", "cols", "len", "ELEMS_BITS"]),
  (dict(hbm_channel_mb=1 << 20), ["addr", "EXT_BITS"]),
])
def test_too_large_config_names_the_field(change, names):
  with pytest.raises(ConfigError) as e:
    check_config_fits(DFXConfig().replace(**change))
  for name in names:
    assert name in str(e.value)
