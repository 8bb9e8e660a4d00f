VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
# Most of the suite waits on sockets, subprocesses and servers: four workers keep two cores
# busy (three left a quarter of the CPU idle: 14 min 52 s against 13 min 3 s with four).
# Each test file stays in one worker (its module fixtures start servers once).
PYTEST_WORKERS ?= 4
BENCH ?=

.PHONY: run test bench lint typecheck ide migration clean lock release image

# Every dependency (and the build backend, setuptools) at the version and hashes of
# requirements-test.lock; the project itself on top, editable, adding nothing.
$(STAMP): pyproject.toml requirements.lock requirements-test.lock
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --require-hashes -r requirements-test.lock
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

# The lock files, from pyproject.toml, for Python 3.11 on Linux x86_64 (what CI and the image
# run): requirements.lock (runtime, for the image), requirements-test.lock (runtime + the test
# extra, for make and CI; runtime pins taken from the first). Pins already there are kept:
# `make lock LOCK_ARGS=--upgrade` (or --upgrade-package NAME) moves them. pip-tools lives in
# its own venv, so that it never enters the project's. Index options are not written out.
LOCK_TOOLS := $(VENV)/lock-tools
PIP_TOOLS ?= pip-tools==7.6.2
LOCK_ARGS ?=
PIP_COMPILE = CUSTOM_COMPILE_COMMAND="make lock" $(LOCK_TOOLS)/bin/pip-compile -q \
	--generate-hashes --allow-unsafe --all-build-deps --strip-extras \
	--no-emit-index-url --no-emit-find-links --no-emit-trusted-host $(LOCK_ARGS)

lock:
	test -x $(LOCK_TOOLS)/bin/pip-compile || \
	  (python3 -m venv $(LOCK_TOOLS) && $(LOCK_TOOLS)/bin/pip install -q '$(PIP_TOOLS)')
	$(PIP_COMPILE) -o requirements.lock pyproject.toml
	$(PIP_COMPILE) --extra test -c requirements.lock -o requirements-test.lock pyproject.toml

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

# A deployed timebot runs compiled bytecode (the wheel's install compiles it): so do the
# benchmarks' processes, whose start-up some figures count (`timebot reminders send`).
bench: $(STAMP)
	$(PY) -m compileall -q shell timebot service bot mail web plumbing bench >/dev/null
	$(PY) -m bench $(BENCH)

lint: $(STAMP)
	$(VENV)/bin/ruff check shell timebot service bot mail web plumbing tests bench scripts
	$(VENV)/bin/mypy

# The next migration of one tree, from the models: make migration TREE=service|timebot MESSAGE="…"
# (the shipped ones are never rewritten; README, "Upgrading").
migration: $(STAMP)
	$(PY) scripts/new_migration.py "$(TREE)" "$(MESSAGE)"

# The wheel (dist/) and the image `timebot:<version>` of the release plumbing/release.py names,
# with its OCI labels, from a clean checkout (ALLOW_DIRTY=1: revision marked `-dirty`).
# `make image` alone builds the image (the image test builds it so). IMAGE_TOOL: docker where
# its engine answers, else podman; IMAGE_BUILD_ARGS: more build options (e.g.
# --build-arg PYTHON_IMAGE=… for bases from a private mirror).
VERSION = $(shell python3 -c 'from plumbing.release import VERSION; print(VERSION)')
REVISION = $(shell git rev-parse HEAD)$(if $(shell git status --porcelain),-dirty)
SOURCE_URL ?= $(shell git config --get remote.origin.url)
IMAGE_NAME ?= timebot
IMAGE_TOOL ?= $(shell docker info >/dev/null 2>&1 && echo docker || echo podman)
IMAGE_BUILD_ARGS ?=
# podman and buildah write OCI images by default, which have no HEALTHCHECK.
IMAGE_FORMAT = $(if $(filter podman buildah,$(notdir $(firstword $(IMAGE_TOOL)))),--format docker)

release:
	@case "$(REVISION)" in *-dirty) test -n "$(ALLOW_DIRTY)" || { \
	  echo "uncommitted changes: commit them, or ALLOW_DIRTY=1 for a -dirty build" >&2; \
	  exit 1; };; esac
	$(MAKE) --no-print-directory $(STAMP)
	rm -f dist/timebot-*.whl
	$(PY) -m pip wheel -q --no-deps --no-build-isolation -w dist .
	test -f dist/timebot-$(VERSION)-py3-none-any.whl
	$(MAKE) --no-print-directory image
	@echo "released $(VERSION) ($(REVISION)): dist/timebot-$(VERSION)-py3-none-any.whl," \
	  "image $(IMAGE_NAME):$(VERSION)"

image:
	@test -n "$(VERSION)" || { echo "no VERSION in plumbing/release.py" >&2; exit 1; }
	$(IMAGE_TOOL) build $(IMAGE_FORMAT) -f deploy/Dockerfile -t $(IMAGE_NAME):$(VERSION) \
	  --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) \
	  --build-arg CREATED=$$(date -u +%Y-%m-%dT%H:%M:%SZ) --build-arg SOURCE=$(SOURCE_URL) \
	  --label org.opencontainers.image.revision=$(REVISION) \
	  $(IMAGE_BUILD_ARGS) .

clean:
	rm -rf $(VENV) var
