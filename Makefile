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

# the plain pass's wall-time budget on this project's 2-CPU machine (pure
# Python: a cache does not make it faster), checked after the pass so a new
# slow test is seen when it lands; PLAIN_BUDGET_S=0 turns the check off
PLAIN_BUDGET_S ?= 1800
PYTEST = ../../$(PY) -m pytest ../../tests -q --durations=20 $(XDIST)

# each pass prints its wall time; the Verilator pass ends with the table of
# its Verilator builds (build/test/verilator_builds.json)
test: setup
	@mkdir -p $(BUILD)/test
	@cd $(BUILD)/test && t0=$$(date +%s) && \
	  $(PYTEST) $(COVERAGE) $(PYTEST_ARGS) && \
	  t=$$(( $$(date +%s) - t0 )) && echo "plain pass: $$t s (budget $(PLAIN_BUDGET_S) s)" && \
	  if [ $(PLAIN_BUDGET_S) -gt 0 ] && [ $$t -gt $(PLAIN_BUDGET_S) ]; then \
	    echo "the plain pass took $$t s, over its budget of $(PLAIN_BUDGET_S) s (PLAIN_BUDGET_S in the Makefile): find the new slow test in the durations above"; exit 1; fi
	@cd $(BUILD)/test && t0=$$(date +%s) && \
	  $(PYTEST) --test-verilog -m "not no_verilog" --require-all-verilated $(PYTEST_ARGS) && \
	  echo "Verilator pass: $$(( $$(date +%s) - t0 )) s"

clean:
	rm -rf $(BUILD)
