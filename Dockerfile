# The MAP-DP Explorer as a class server (issue 43). Build and run:
#     docker build -t mapdp-explorer .
#     docker run -p 8501:8501 -v /path/to/mapdp_app.toml:/app/mapdp_app.toml:ro mapdp-explorer
# The build and the start both call scripts/serve.py, the script `make serve` runs: the build
# fills numba's cache (so the first visitor waits for no compiler), the start reads the operator's
# [server] settings from mapdp_app.toml (port, base path behind a proxy, upload limit, threads).
FROM python:3.11-slim

WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1
COPY requirements.txt pyproject.toml ./
RUN python -m venv .venv && .venv/bin/pip install -r requirements.txt
COPY . .
RUN .venv/bin/pip install --no-deps -e . && .venv/bin/python scripts/serve.py --prepare

EXPOSE 8501
# the build filled numba's cache: the start skips that step (loading the full cache again was part of the
# 11.9 s a fresh clone's server took to answer, measured once on the 2-core development machine)
CMD [".venv/bin/python", "scripts/serve.py", "--no-precompile"]
