"""Two fixes that make pymtl3 3.1.17's Verilator import work with Verilator 5.

1. Verilator 5 escapes a double underscore in the top module name
   (`Adder__nbits_16` -> `VAdder___05Fnbits_16`), so pymtl3 cannot find its
   own outputs.  `name_without_double_underscores` gives the imported
   component an explicit module name that has none.
2. pymtl3 #includes Verilator's runtime sources into one translation unit;
   with --trace (VCD) they clash.  `apply()` makes the import compile them
   as separate files.
"""

from pymtl3.passes.backends.verilog import VerilogTranslationPass
from pymtl3.passes.backends.verilog.import_.VerilogVerilatorImportConfigs import (
  VerilogVerilatorImportConfigs,
)
from pymtl3.passes.backends.verilog.util.utility import get_component_unique_name
from pymtl3.passes.rtlir import RTLIRGetter

_applied = False


def _separate_c_src_files( cfg ):
  top = cfg.translated_top_module
  mk_dir = cfg.vl_mk_dir
  with open( f"{mk_dir}/V{top}_classes.mk" ) as class_mk:
    lines = class_mk.readlines()
  srcs = list( cfg.c_srcs ) + [ cfg.get_c_wrapper_path() ]
  for label in ( "VM_CLASSES_FAST", "VM_SUPPORT_FAST", "VM_CLASSES_SLOW",
                 "VM_SUPPORT_SLOW" ):
    srcs += cfg._get_srcs_from_vl_class_mk( lines, mk_dir, label )
  for label in ( "VM_GLOBAL_FAST", "VM_GLOBAL_SLOW" ):
    srcs += cfg._get_srcs_from_vl_class_mk( lines, cfg.vl_include_dir, label )
  return srcs


def apply():
  global _applied
  if not _applied:
    VerilogVerilatorImportConfigs._get_c_src_files = _separate_c_src_files
    _applied = True


def name_without_double_underscores( component ):
  """Set an explicit Verilog module name: pymtl3's own, minus any `__`.
  A `WidePortsRTL` wrapper is named after the component it wraps (its own
  parameter, a component object, would not tell two designs apart)."""
  inner = getattr( component, "dut", None ) if type( component ).__name__ == "WidePortsRTL" else None
  rtype = RTLIRGetter( cache=False ).get_component_ifc_rtlir( inner or component )
  name = get_component_unique_name( rtype )
  if inner is not None:
    name = f"Ports_{name}"
  while "__" in name:
    name = name.replace( "__", "_" )
  component.set_metadata( VerilogTranslationPass.explicit_module_name, name )
  return name
