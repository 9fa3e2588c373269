# Two commands on a fresh machine: `make run` (the app) and `make test` (every test).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

CHROMIUM := /usr/bin/chromium

.PHONY: run test bench clean chromium

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip
	$(BIN)/pip install -r requirements.txt
	$(BIN)/pip install --no-deps -e .
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/streamlit run app.py --browser.gatherUsageStats false

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

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_engine.py

clean:
	rm -rf $(VENV) .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
