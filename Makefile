VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
# Most of the suite waits on sockets, subprocesses and servers: four workers keep two cores
# busy (three left a quarter of the CPU idle: 14 min 52 s against 13 min 3 s with four).
# Each test file stays in one worker (its module fixtures start servers once).
PYTEST_WORKERS ?= 4
BENCH ?=

.PHONY: run test bench lint typecheck ide migration clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

ide: $(STAMP)
	$(PY) -m service.graphql.ide_build

# The demo trusts Authentication-Results stamped "demo.localhost" on mail from this machine, so
# that README's swaks commands stand in for the people's mail server.
run: $(STAMP) ide
	TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS=$${TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS-demo.localhost} $(VENV)/bin/timebot serve --demo

# The tests start many `timebot` processes: compile the packages once, as the venv's libraries
# are, for an environment with PYTHONDONTWRITEBYTECODE set (each process compiled them again).
test: $(STAMP) ide
	$(PY) -m compileall -q shell timebot service bot mail web plumbing tests bench >/dev/null
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

bench: $(STAMP)
	$(PY) -m bench $(BENCH)

lint: $(STAMP)
	$(VENV)/bin/ruff check shell timebot service bot mail web plumbing tests bench scripts
	$(VENV)/bin/mypy

# The next migration of one tree, from the models: make migration TREE=service|timebot MESSAGE="…"
# (the shipped ones are never rewritten; README, "Upgrading").
migration: $(STAMP)
	$(PY) scripts/new_migration.py "$(TREE)" "$(MESSAGE)"

clean:
	rm -rf $(VENV) var
