# The two user-facing targets are `make demo` and `make test`; both set up
# everything they need first (Debian packages, then a local virtualenv).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BUILD  := build
DEB_TOOLS := verilator iverilog yosys ccache tcl
# the command each package gives, where its name differs (tcl: the Tcl dry
# run of the kernel's packaging scripts)
TOOL_CMD_tcl := tclsh

.PHONY: setup tools demo test clean

setup: $(VENV)/.installed tools

# Debian packages are installed only when a tool is missing, so the target
# is cheap on a machine that already has them.
tools:
	@missing=""; \
	for t in $(DEB_TOOLS); do c=$$t; [ $$t = tcl ] && c=$(TOOL_CMD_tcl); \
	  command -v $$c >/dev/null || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing from Debian:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEB_TOOLS) >/dev/null; \
	fi

$(VENV)/.installed: setup.cfg pyproject.toml
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null && \
	  $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@touch $@

# the comparison's figure goes into the ignored build folder
demo: setup
	$(VENV)/bin/dfx demo --out $(BUILD)/demo

# Tests run from the build folder because pymtl3 writes translated Verilog
# and Verilator objects into the current directory.
# One pytest worker per core; a test file stays on one worker (--dist
# loadgroup, groups set in tests/conftest.py: the cases of a `spread` test
# go one by one) and every worker builds its Verilator models in its own
# folder.  Files are handed out in collection order, so the long core tests
# start first.
JOBS ?= $(shell nproc)
XDIST = -n $(JOBS) --dist loadgroup --no-loadscope-reorder

# COVERAGE="--cov=pymtl_dfx --cov-report=term:skip-covered" runs the plain
# pass under coverage.py, ending with the line coverage of pymtl_dfx; it is
# off by default because tracing every line costs about 2.4x the CPU time
# of the cycle-level simulations, which would take make test past CI's budget.
COVERAGE ?=

test: setup
	@mkdir -p $(BUILD)/test
	cd $(BUILD)/test && ../../$(PY) -m pytest ../../tests -q --durations=15 $(XDIST) $(COVERAGE) $(PYTEST_ARGS)
	cd $(BUILD)/test && ../../$(PY) -m pytest ../../tests -q --durations=15 $(XDIST) --test-verilog -m "not no_verilog" --require-all-verilated $(PYTEST_ARGS)

clean:
	rm -rf $(BUILD)
