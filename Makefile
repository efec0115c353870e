# pal — every step a fresh machine needs is a target here; nothing is installed by hand.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
DEMO_DIR ?= demo-data
OUT    ?= out
STAMP  := $(VENV)/.installed-stamp
# every dependency pinned to the versions tested (regenerate with `make constraints`)
PIN    := -c constraints.txt

.PHONY: help venv constraints demo demo-data demo-jenkins test test-fast browser bench fuzz lint clean

help:  ## list targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*##/\t/'

# the compiled kernels (C, setup.py): an edited one is built again by the next `make venv`
KERNELS := $(wildcard pal/*/*_kernel.c)

$(STAMP): setup.cfg setup.py pyproject.toml constraints.txt $(KERNELS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q $(PIN) -e '.[test]'
	touch $@

venv: $(STAMP)  ## create .venv and install pal with its test dependencies, pinned by constraints.txt
	@# pal's bytecode, as a regular (non-editable) install has it: a run does not compile its ~100
	@# modules on every start where PYTHONDONTWRITEBYTECODE is set (0.3-0.5 s of a 1.5 s run)
	@$(BIN)/python -m compileall -q pal

constraints:  ## re-resolve the dependencies in a fresh venv and pin them in constraints.txt
	rm -rf .venv-lock
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install -q --upgrade pip
	.venv-lock/bin/python -m pip install -q -e '.[test]'
	{ sed -n '/^#/p' constraints.txt; .venv-lock/bin/python -m pip freeze --exclude-editable | grep -iv '^pal=='; } > constraints.txt.new
	mv constraints.txt.new constraints.txt
	rm -rf .venv-lock

$(DEMO_DIR)/truth.json: $(STAMP)
	$(BIN)/pal demo-data $(DEMO_DIR)

demo-data: $(DEMO_DIR)/truth.json  ## generate the seeded demo history (once)

demo: demo-data  ## run the whole PA job on the bundled demo history
	@$(BIN)/pal run --spec specs/demo.yaml; rc=$$?; \
	if [ $$rc -eq 1 ]; then echo "pal run failed (exit 1)" >&2; exit 1; fi; \
	echo "exit code $$rc (0 = no new regression, 2 = regressions found)"; \
	echo "dashboard: file://$$(pwd)/$(OUT)/demo/site/index.html"

demo-jenkins: demo-data  ## the demo through a local fake Jenkins over HTTP
	@$(BIN)/python -m tests.fakejenkins.run_demo --data $(DEMO_DIR) --spec specs/demo-jenkins.yaml; rc=$$?; \
	if [ $$rc -eq 1 ]; then echo "pal run failed (exit 1)" >&2; exit 1; fi; \
	echo "exit code $$rc (0 = no new regression, 2 = regressions found)"; \
	echo "dashboard: file://$$(pwd)/$(OUT)/demo-jenkins/site/index.html"

browser:  ## headless Chromium from Debian packages, for the dashboard tests
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian chromium (needs root)"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null) \
	  || echo "WARNING: chromium could not be installed; browser tests will be skipped" >&2; }

test: venv browser  ## run the test suite
	$(BIN)/python -m pytest -n 2 -q

test-fast: venv  ## tests without the browser install step
	$(BIN)/python -m pytest -n 2 -q -m 'not browser and not slow'

bench: venv  ## benchmarks against the references, printed as ratios
	$(BIN)/python -m pip install -q $(PIN) -e '.[test,bench]'
	@# peers whose pins conflict with ours (see the bench extra in setup.cfg): their code needs only numpy/scipy
	$(BIN)/python -m pip install -q --no-deps apache-otava signal-processing-algorithms structlog more-itertools \
	  || echo "WARNING: otava/e-divisive peers not installed; bench_accuracy will skip them" >&2
	$(BIN)/python -m benchmarks

fuzz: venv  ## long property-based fuzzing runs, and the attack classes at full size with new seeds
	PAL_FUZZ_EXAMPLES=20000 $(BIN)/python -m pytest -q tests -m 'fuzz' -p no:xdist
	PAL_FUZZ_EXAMPLES=20000 $(BIN)/python -m pytest -q -p no:xdist tests/reliability/test_hostile_generated.py \
	  tests/reliability/test_kill_stages.py tests/reliability/test_network_bounds.py

clean:
	rm -rf $(OUT) $(DEMO_DIR) .pytest_cache build *.egg-info
