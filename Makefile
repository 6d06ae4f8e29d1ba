# Gatehouse — the two commands of the README are `make run` and `make test`.

GO        ?= go
BIN       := bin/gatehouse
INIT      := bin/gatehouse-init
PKGS      := ./...
# Packages whose tests run real sandboxes; make test runs them again as an
# unprivileged user, because root changes what a sandbox means. Each heavy
# suite runs once per user: the pipeline's cold (a fresh sandbox per
# command) as root, warm (every command in a warm sandbox) as the user.
SANDBOX_PKGS := ./sandbox/... ./service ./app/cli/...
PIPELINE_PKGS := ./service/pipeline/...
# The agents' end-to-end tests whose meaning changes with root (Claude
# Code refuses bypass mode as root; the relay's way out of Claude Code's
# sandbox; a hook that fails or a service that is down): run again as the
# unprivileged user, on the programs make build made.
AGENT_E2E_PKGS := ./hook/claude/e2e ./hook/codex/e2e ./hook/gemini/e2e
AGENT_E2E_USER := ^(TestRelayRunsOutsideClaudeSandbox|TestBackgroundServerAcrossCalls|TestNoEscapeWithoutThePreToolUseHook|TestRelayWithoutThePermissionHook|TestMCPHookFailsClosed|TestCodexServiceDown|TestGeminiBlocksWithoutService)$$
TEST_USER ?= gatehouse-test
FUZZTIME  ?= 30s
PACKAGE_ARCHES ?= amd64 arm64

.PHONY: all build run run-deps test test-root test-user test-readme test-package package deps lint vet fmt-check cross bench fuzz tidy-check clean

all: build

# Four programs, side by side in bin/: gatehouse, the small front program
# people and agents run (app/gatehouse: it sends gatehouse exec to the
# running service itself and hands everything else to the full program);
# gatehouse-core, the full program (app/gatehouse-core); gatehouse-hook,
# the hook and relay client agents start on every tool call; and the
# sandbox init, gatehouse-init, which runs inside every sandbox and links
# almost nothing (app/gatehouse-init). All are built without cgo:
# statically linked, they start without the dynamic loader and need no
# libc inside the sandbox. They carry one build id,
# computed from the source tree (.ci/build-id.sh): the init refuses to run
# for a gatehouse of another build. The version, commit and build date
# come from git (.ci/version.sh; 'gatehouse version' prints them). -v
# names each package as it compiles: a first build is minutes, not silence.
build:
	@id=$$(.ci/build-id.sh) && set -- $$(.ci/version.sh) && \
	flags="-X github.com/gatehouse-dev/gatehouse/internal/buildid.id=$$id" && \
	flags="$$flags -X github.com/gatehouse-dev/gatehouse/internal/version.version=$$1" && \
	flags="$$flags -X github.com/gatehouse-dev/gatehouse/internal/version.commit=$$2" && \
	flags="$$flags -X github.com/gatehouse-dev/gatehouse/internal/version.date=$$3" && \
	echo "gatehouse $$1, build id $$id (a first build fetches modules and compiles for a few minutes; each package is named as it compiles)" && \
	CGO_ENABLED=0 $(GO) build -v -ldflags "$$flags" -o $(dir $(BIN))gatehouse-core ./app/gatehouse-core && \
	CGO_ENABLED=0 $(GO) build -ldflags "$$flags" -o $(BIN) ./app/gatehouse && \
	CGO_ENABLED=0 $(GO) build -ldflags "$$flags" -o $(INIT) ./app/gatehouse-init && \
	CGO_ENABLED=0 $(GO) build -ldflags "$$flags" -o $(dir $(BIN))gatehouse-hook ./app/gatehouse-hook

# run: the main job on embedded defaults — install bubblewrap when it is
# missing (apt-get as root; otherwise it names the command), check the host,
# then run one command through the governed shell (its attempts to read
# ~/.ssh and to write /etc fail inside the sandbox).
# With no user configuration the default workspace is ~/src; it is created
# when missing.
run: run-deps build
	@mkdir -p "$$HOME/src"
	./$(BIN) doctor || true
	./$(BIN) exec --cwd "$$HOME/src" -- 'echo "hello from $$(id -un) in $$PWD"; ls ~/.ssh; touch /etc/gatehouse-demo; exit 0'

# test: install what the tests need when missing, then run every test: the
# whole suite (with -race) as the invoking user, the sandbox and escape
# tests again as an unprivileged user when invoked as root, and the
# packages' test.
test: deps lint test-root test-user test-readme test-package

deps:
	@.ci/test-deps.sh

run-deps:
	@.ci/test-deps.sh run

# The suite runs inside a private desktop session (.ci/with-desktop-session.sh:
# D-Bus session bus, Xvfb, dunst, an unlocked GNOME Keyring), so that the
# keychain and notification tests run against the real thing instead of
# skipping; the dashboard's test fails instead of skipping without
# Chromium (REQUIRE_BROWSER).
test-root:
	.ci/with-desktop-session.sh env REQUIRE_SANDBOX=1 REQUIRE_KEYRING=1 REQUIRE_NOTIFY=1 REQUIRE_BROWSER=1 \
		$(GO) test -race -count=1 $(PKGS)
	# Bounded runs are counted in executions (Nx), about 10-20 s each here,
	# never in seconds: Go 1.26's fuzzing coordinator can report its own
	# -fuzztime deadline as a failure ("context deadline exceeded", no
	# input; go.dev/issue/75804, fixed in Go 1.27). A short minimisation:
	# the default (60 s) spends a run on its first new input.
	$(GO) test -count=1 -run='^$$' -fuzz=FuzzPolicyLoad -fuzztime=6000x -fuzzminimizetime=2s ./service/policy
	$(GO) test -count=1 -run='^$$' -fuzz=FuzzSettingsFile -fuzztime=150000x -fuzzminimizetime=2s ./service/policy
	$(GO) test -count=1 -run='^$$' -fuzz=FuzzAnalyze -fuzztime=50000x -fuzzminimizetime=2s ./service/analysis
	$(GO) test -count=1 -run='^$$' -fuzz=FuzzDecide -fuzztime=6000x -fuzzminimizetime=2s ./service/pipeline
	$(GO) test -count=1 -run='^$$' -fuzz=FuzzMCPArgs -fuzztime=25000x -fuzzminimizetime=2s ./app/cli
	$(GO) test -count=1 -run='^$$' -fuzz=FuzzProfilePath -fuzztime=50000x -fuzzminimizetime=2s ./sandbox/seatbelt
	$(GO) test -count=1 -run='^$$' -fuzz=FuzzReadResponse -fuzztime=100000x -fuzzminimizetime=2s ./service/localapi

test-user: build
	@.ci/test-as-user.sh $(TEST_USER) $(SANDBOX_PKGS)
	@GATEHOUSE_TEST_WARM=1 .ci/test-as-user.sh $(TEST_USER) $(PIPELINE_PKGS)
	@GATEHOUSE_E2E_BIN=build .ci/test-as-user.sh $(TEST_USER) -run '$(AGENT_E2E_USER)' $(AGENT_E2E_PKGS)

# test-readme: the README's install lines, run as written by a fresh
# unprivileged account (.ci/readme-install-test.sh), on this tree's build,
# up to a governed command and a routed call of the real claude against a
# fake API; as root only (it makes the account's home and runs the sudo
# lines).
test-readme: build
	@if [ "$$(id -u)" -eq 0 ]; then GATEHOUSE_README_PREBUILT=1 .ci/readme-install-test.sh $(TEST_USER); \
	else echo "test-readme: skipped (run make test as root to run the README's install lines as a fresh account)"; fi

# package: the .deb and .rpm for amd64 and arm64 in dist/ (nfpm, a Go
# tool dependency; packaging/nfpm.yaml says what goes where).
package:
	@.ci/package.sh $(PACKAGE_ARCHES)

# test-package builds the packages and checks their contents against
# packaging/gatehouse.deb.contents; as root it also installs the .deb on
# this machine with dpkg -i, checks it works, and removes it with dpkg -r
# (.ci/package-test.sh). It refuses to run over an installed gatehouse.
test-package:
	@.ci/package-test.sh

# staticcheck for the host, then for macOS and Windows: the tool built for
# this machine, checking the other platforms' files.
lint: fmt-check vet
	$(GO) tool staticcheck $(PKGS)
	sc=$$($(GO) tool -n staticcheck) && GOOS=darwin $$sc $(PKGS) && GOOS=windows $$sc $(PKGS)

vet:
	GOOS=linux $(GO) vet $(PKGS)
	GOOS=darwin $(GO) vet $(PKGS)
	GOOS=windows $(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

cross:
	GOOS=linux GOARCH=amd64 $(GO) build ./...
	GOOS=linux GOARCH=arm64 $(GO) build ./...
	GOOS=darwin GOARCH=arm64 $(GO) build ./...
	GOOS=darwin GOARCH=amd64 $(GO) build ./...
	GOOS=windows GOARCH=amd64 $(GO) build ./...

# bench: the figures of docs/executor.md. What starts sandboxes runs as
# $(TEST_USER) when invoked as root (.ci/bench-as-user.sh): root needs no
# user namespace, so its figures are not a user's.
bench: build
	.ci/bench-as-user.sh $(TEST_USER) -- gatehouse-bench
	.ci/bench-as-user.sh $(TEST_USER) -- go test -run='^$$' -bench='^Benchmark(Hook|RoutedTrue|BashTrue)$$' -benchtime=200x ./hook/claude/e2e
	.ci/bench-as-user.sh $(TEST_USER) -- go test -run='^$$' -bench=ClaudeSession -benchtime=1x -v ./hook/claude/e2e -args -session.rounds=6
	.ci/bench-as-user.sh $(TEST_USER) -- go test -run='^$$' -bench=ClaudeHookKinds -benchtime=1x -v ./hook/claude/e2e -args -session.rounds=6
	.ci/bench-as-user.sh $(TEST_USER) -- go test -run='^$$' -bench=ClaudeRoutedFloor -benchtime=1x -v ./hook/claude/e2e -args -session.rounds=6
	$(GO) test -run='^$$' -bench=Decide -count=5 ./service/pipeline
	.ci/bench-as-user.sh $(TEST_USER) -- go test -run='^$$' -bench=SessionNetListening -benchtime=200x -count=3 ./sandbox/bwrap
	$(GO) test -run='^$$' -bench=Redact -benchtime=3x ./service/dlp
	$(GO) test -run='^$$' -bench=Mask -benchtime=5x -count=3 ./sandbox/egress
	REQUIRE_SANDBOX=1 .ci/bench-as-user.sh $(TEST_USER) -- go test -run='^$$' -bench=MaskedCurl -benchtime=10x -count=3 ./service/pipeline
	$(GO) test -run='^$$' -bench=Analyze -count=5 ./service/analysis
	$(GO) test -run='^$$' -bench=Pages -benchtime=200x ./service/dashboard
	$(GO) test -run='^$$' -bench=GoBuildCached -benchtime=20x ./app/cli/workflow -args -gatehouse $(CURDIR)/$(BIN)

fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzPolicyLoad -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s ./service/policy
	$(GO) test -run='^$$' -fuzz=FuzzSettingsFile -fuzztime=$(FUZZTIME) ./service/policy
	$(GO) test -run='^$$' -fuzz=FuzzHookDecode -fuzztime=$(FUZZTIME) ./hook/claude
	$(GO) test -run='^$$' -fuzz=FuzzWriter -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s ./service/dlp
	$(GO) test -run='^$$' -fuzz=FuzzCredentialInArgv -fuzztime=$(FUZZTIME) ./service/analysis
	$(GO) test -run='^$$' -fuzz=FuzzAnalyze -fuzztime=$(FUZZTIME) ./service/analysis
	$(GO) test -run='^$$' -fuzz=FuzzDecide -fuzztime=$(FUZZTIME) ./service/pipeline
	$(GO) test -run='^$$' -fuzz=FuzzMCPArgs -fuzztime=$(FUZZTIME) ./app/cli
	$(GO) test -run='^$$' -fuzz=FuzzProfilePath -fuzztime=$(FUZZTIME) ./sandbox/seatbelt
	$(GO) test -run='^$$' -fuzz=FuzzReadResponse -fuzztime=$(FUZZTIME) ./service/localapi

tidy-check:
	$(GO) mod tidy && git diff --exit-code go.mod go.sum

clean:
	rm -rf bin dist
