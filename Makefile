# Two commands on a fresh machine: `make run` (the app) and `make test` (every test).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

CHROMIUM := /usr/bin/chromium

.PHONY: run serve test bench clean chromium lab docs

# The install uses uv (installed into the venv by pip) because it takes seconds where pip
# takes about 40 s here; where uv cannot be had or fails, pip does the same install. The
# kernels are then compiled once, into numba's disk cache beside them, so that the app's
# first chart does not wait for the compiler.
$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	{ $(BIN)/pip install -q uv \
	  && $(BIN)/uv pip install -q --python $(BIN)/python -r requirements.txt \
	  && $(BIN)/uv pip install -q --python $(BIN)/python --no-deps -e . ; } \
	|| { echo "uv did not work here: installing with pip"; \
	     $(BIN)/pip install -r requirements.txt && $(BIN)/pip install --no-deps -e . ; }
	@echo "Compiling the clustering kernels once, on two cores (numba, about 25 s)..."
	$(BIN)/python -W ignore -m mapdp_core._precompile
	@# the notebooks' kernel: this environment, with the checkout on its path so that `explorer` imports
	$(BIN)/python -m ipykernel install --sys-prefix --name mapdp-explorer \
		--display-name "Python (MAP-DP Explorer)" --env PYTHONPATH "$(CURDIR)" > /dev/null
	touch $(STAMP)

# numba's cache is checked before the server starts, so that the first visitor never waits for the
# compiler: the install fills it, and when a file with cached kernels has changed since the install
# (a pull, an edit) `make run` fills it again here (issue 43); with none changed this is make's own
# date check only.
KERNELS := $(VENV)/.kernels
KERNEL_SOURCES := $(shell grep -rl --include='*.py' 'cache=True' mapdp_core 2>/dev/null)
$(KERNELS): $(STAMP) $(KERNEL_SOURCES)
	@if [ -n "$$(find $(KERNEL_SOURCES) -newer $(STAMP) 2>/dev/null | head -1)" ]; then \
		echo "Kernels changed since the install: filling numba's cache before the server starts..."; \
		$(BIN)/python -W ignore -m mapdp_core._precompile; \
	fi
	@touch $@

run: $(KERNELS)
	$(BIN)/streamlit run app.py --browser.gatherUsageStats false

# A class server (issue 43): headless, the operator's [server] settings from the config file
# (mapdp_app.example.toml), numba's cache filled before the first visitor. See README, "Hosting a class".
serve: $(STAMP)
	$(BIN)/python scripts/serve.py

# The browser test needs the system Chromium (Playwright cannot download its own here).
chromium:
	@if [ "$$MAPDP_SKIP_BROWSER" != "1" ] && [ ! -x $(CHROMIUM) ]; then \
		echo "Installing Chromium for the browser test (apt-get)..."; \
		SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO="sudo"; \
		$$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
			|| { echo "Could not install Chromium: install the 'chromium' package, or set MAPDP_SKIP_BROWSER=1 to skip the browser test."; exit 1; }; \
	fi

test: $(STAMP) chromium
	$(BIN)/python -m pytest -q

# The example notebooks in JupyterLab (the animation plays inline: explorer.notebook.animate).
lab: $(STAMP)
	PYTHONPATH="$(CURDIR)" $(BIN)/jupyter lab --notebook-dir=notebooks

# The documentation site (MkDocs): the notebooks run, then built into build/docs-site; any warning fails it.
docs: $(STAMP)
	$(BIN)/python scripts/build_docs.py --execute

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_scale.py

clean:
	rm -rf $(VENV) .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
