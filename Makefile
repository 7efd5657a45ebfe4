# cpistack: the two commands a new user needs are `make demo` and `make verify`.
SHELL := /bin/bash
CARGO ?= cargo
BIN   := target/release/cpistack
# The shared ChampSim traces live beside the repository.
TRACES ?= ../shared/traces

.PHONY: test-deps all build release demo verify lint fmt test smoke bench clean waves screenshot stacks-smoke paper sweep report-screenshot fuzz

all: build

build:
	$(CARGO) build --workspace --all-targets

release:
	$(CARGO) build --release --bin cpistack

## demo: the main job on a built-in default: the core simulator on the `server`
## mixture, FMT and sFMT attached, golden model in lock step.
demo: release
	$(BIN) run --workload server --instructions 1000000 --check

## verify: the regression (what CI runs).
verify: test-deps lint test smoke stacks-smoke
	@echo "make verify: all checks passed"
	@awk '/^test result:/ { p += $$4; f += $$6 } END { printf "tests: %d passed, %d failed\n", p, f }' target/test.log

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

## test-deps: what the tests need beyond cargo: GTKWave and Xvfb for the test that
## loads every `.gtkw` layout in GTKWave itself (installed from Debian if missing;
## if that fails the test says SKIPPED loudly).
TEST_PKGS := gtkwave xvfb xauth
test-deps:
	@missing=""; for c in gtkwave xvfb-run xauth; do command -v $$c >/dev/null || missing="$$missing $$c"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing $(TEST_PKGS) for the GTKWave test (missing:$$missing)"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  { $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(TEST_PKGS) >/dev/null; } \
	  || echo "*** WARNING: could not install $(TEST_PKGS): the GTKWave test will be SKIPPED ***"; \
	fi

## test: every test of the workspace; the log feeds the summary line of `verify`.
test:
	@mkdir -p target
	set -o pipefail; $(CARGO) test --workspace 2>&1 | tee target/test.log

## smoke: the CLI end to end, release build, including its error paths.
smoke: release
	$(BIN) check --random --seed 7 --cycles 300000 --variant both --mix stress
	$(BIN) check --random --seed 8 --cycles 100000 --variant both --mix stress --set fmt_rows=4 --set local_bits=3 --set global_bits=8
	$(BIN) check --random --seed 9 --cycles 100000 --variant both --mix fill --set fmt_rows=256 --set rob_entries=512 --set fetch_width=8 --set dispatch_width=8 --set retire_width=8
	$(BIN) gen --seed 3 --cycles 20000 -o target/smoke.bin
	$(BIN) replay target/smoke.bin --variant both --check
	$(BIN) replay target/smoke.bin --census | grep -q '^cycle census: 20000 cycles counted'
	$(BIN) gen --seed 3 --cycles 2000 -o target/smoke.jsonl
	$(BIN) replay target/smoke.jsonl --check --json > /dev/null
	$(BIN) cost
	$(BIN) run --workload branchy --instructions 50000 --warmup 10000 --check --json > /dev/null
	! $(BIN) run --workload no-such-workload 2>/dev/null
	$(BIN) run --trace $(TRACES)/xz6_x86_skip50M_13M.champsimtrace.xz --warmup 100000 --instructions 1000000 --check
	$(BIN) run --trace $(TRACES)/sqlite3_x86_skip100M_13M.champsimtrace.xz --warmup 100000 --instructions 1000000 --check
	! $(BIN) run --trace Makefile.champsimtrace 2>/dev/null
	@# a trace run that never looked up a wrong path shows no fraction (it printed NaN)
	for i in $$(seq 100); do printf '\100\0\0\0\0\0\0\0'; head -c 56 /dev/zero; done > target/one-pc.champsimtrace
	$(BIN) run --trace target/one-pc.champsimtrace --warmup 0 --instructions 50 > target/one-pc.txt
	grep -q 'code image 0 / 0 (-)' target/one-pc.txt && ! grep -q NaN target/one-pc.txt
	! grep -q 'code image is full' target/one-pc.txt
	@# `run`'s report names the machine's changes, and each unit's stack says when nothing is pending
	$(BIN) run --workload branchy --instructions 20000 --warmup 1000 --set core.rob_entries=64 --variant both > target/run.txt
	grep -qx '  machine: the default with core.rob_entries=64' target/run.txt
	test "$$(grep -cx '  pending (in rows, not charged): none' target/run.txt)" = 2
	@# a waveform window inside the warm-up is pointed out (its counters never move)
	$(BIN) run --workload balanced --instructions 2000 --warmup 1000 --variant fmt --vcd target/warm.vcd --window 0:20 > target/warm.txt
	grep -q "note: the waveform's window 0:20 lies in the warm-up" target/warm.txt
	@# `--census` prints its 15 classes after the stacks
	$(BIN) run --workload fpmix --instructions 20000 --warmup 1000 --variant fmt --census > target/census.txt
	grep -q '^cycle census: ' target/census.txt && test "$$(grep -cE '^  (full|open) ' target/census.txt)" = 15
	! $(BIN) check --random --set fmt_rows=48 2>/dev/null
	! $(BIN) replay Makefile 2>/dev/null
	@# a closed pipe (`cpistack ... | head`) ends the program quietly, not with a panic
	( sleep 0.5; $(BIN) workloads 2>target/sigpipe.err ) | true; test ! -s target/sigpipe.err
	@# a standard output that cannot be written is an error (exit 1, its message), not a panic
	if [ -w /dev/full ]; then $(BIN) workloads > /dev/full 2>target/full.err; test $$? = 1 && grep -q '^error: failed printing to stdout' target/full.err; fi
	if [ -w /dev/full ]; then $(BIN) check --help > /dev/full 2>target/full.err; test $$? = 1 && grep -q '^error: failed printing to stdout' target/full.err; fi
	@# a stream or waveform on standard output is whole: the report goes to stderr then
	set -o pipefail; $(BIN) run --workload mlp --instructions 20000 --warmup 1000 --variant sfmt --events /dev/stdout 2>/dev/null | $(BIN) replay /dev/stdin > target/pipe.txt
	grep -q "^sFMT (" target/pipe.txt
	$(BIN) check --random --cycles 500 --variant fmt --vcd /dev/stdout 2>/dev/null | tail -1 | grep -q '^#'
	@# ... but a report silenced with > /dev/null stays silenced, whatever else goes there
	$(BIN) check --random --cycles 500 --variant fmt --vcd /dev/null > /dev/null 2>target/devnull.err; ! grep -q agreed target/devnull.err

## bench: throughput figures (release).
bench: release
	$(BIN) bench --json

## fuzz: coverage-guided fuzzing of the targets in src/fuzz.rs under libFuzzer
## (cargo-fuzz, installed if missing, and the nightly toolchain; not part of
## `verify`, whose test replays fuzz/seeds and fuzz/regressions on stable).
## FUZZ_SECONDS per target; FUZZ_TARGETS to pick; docs/fuzzing.md.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= stream_bin stream_jsonl unit trace config config_file report
fuzz:
	@rustup run nightly rustc --version >/dev/null 2>&1 || { echo "make fuzz: needs the nightly toolchain (rustup toolchain install nightly)" >&2; exit 1; }
	@command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
	cd fuzz && for t in $(FUZZ_TARGETS); do \
	  mkdir -p corpus/$$t; \
	  case $$t in config) len=160;; config_file) len=2048;; report) len=16384;; *) len=4096;; esac; \
	  cargo +nightly fuzz run -O -a $$t corpus/$$t seeds/$$t -- \
	    -max_total_time=$(FUZZ_SECONDS) -max_len=$$len -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
	    || { echo "make fuzz: $$t failed; the input is in fuzz/artifacts/$$t/ (docs/fuzzing.md)" >&2; exit 1; }; \
	done
	@echo "make fuzz: $(words $(FUZZ_TARGETS)) targets, $(FUZZ_SECONDS) s each, no failure"

## waves: one VCD per scenario (FMT and sFMT) plus the GTKWave layout, in waves/.
waves: release
	$(BIN) waves --out waves

## screenshot: render SCENARIO in GTKWave under Xvfb to waves/$(SCENARIO).png.
SCENARIO ?= mispredict
SHOT_PKGS := gtkwave xvfb xauth imagemagick
screenshot: waves
	@missing=""; for c in gtkwave xvfb-run xauth import; do command -v $$c >/dev/null || missing="$$missing $$c"; done; \
	if [ -n "$$missing" ]; then echo "installing $(SHOT_PKGS) (missing:$$missing)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y --no-install-recommends $(SHOT_PKGS); fi
	@test -f waves/$(SCENARIO).vcd || { echo "no scenario $(SCENARIO) (see: ls waves/*.vcd)"; exit 1; }
	@# the scenario's own layout (it opens on the whole scenario), in a taller
	@# window than a user's (1000 pixels) so that the counters are in the picture
	cd waves && rm -f $(SCENARIO).png && sed 's/^\[size\] .*/[size] 1600 1900/' $(SCENARIO).gtkw > screenshot.gtkw && \
	  timeout 120 xvfb-run -a -s "-screen 0 1600x1900x24" sh -c \
	  'gtkwave $(SCENARIO).vcd screenshot.gtkw > gtkwave-screenshot.log 2>&1 & pid=$$!; \
	   sleep 6; import -window root $(SCENARIO).png; kill $$pid'; \
	  status=$$?; rm -f screenshot.gtkw; exit $$status
	@test -s waves/$(SCENARIO).png && echo "screenshot: waves/$(SCENARIO).png"

## report-screenshot: render REPORT/index.html (default report/, from `make paper`)
## in headless Chromium to REPORT/index.png, to see the page as a reader does
## (installs Debian's chromium-headless-shell if no Chromium is found).
REPORT ?= report
report-screenshot:
	@test -f $(REPORT)/index.html || { echo "no $(REPORT)/index.html (run: make paper)"; exit 1; }
	@browser=$$(command -v chromium-headless-shell chromium chromium-browser google-chrome | head -1); \
	if [ -z "$$browser" ]; then echo "installing chromium-headless-shell"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y --no-install-recommends chromium-headless-shell; \
	  browser=$$(command -v chromium-headless-shell); fi; \
	rm -f $(REPORT)/index.png; \
	headless=$$(case $$browser in *headless-shell) ;; *) echo --headless ;; esac); \
	timeout 120 $$browser $$headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,4400 \
	  --screenshot=$(abspath $(REPORT))/index.png file://$(abspath $(REPORT))/index.html > target/chromium.log 2>&1 || { cat target/chromium.log; exit 1; }
	@test -s $(REPORT)/index.png && echo "screenshot: $(REPORT)/index.png"

## clean: the build directories (target/ and the fuzz workspace's fuzz/target/);
## outputs (report/, waves/*.vcd) and the fuzz corpus stay.
clean:
	$(CARGO) clean
	rm -rf fuzz/target

## stacks-smoke: `cpistack stacks` end to end on a few workloads and few
## instructions, then the output checker (CSV columns, JSON summary, SVG XML, HTML,
## and the numbers of the files agreeing with each other); `cpistack sweep` and
## `cpistack phases` and `cpistack multiplex` end to end, and their refusals.
stacks-smoke: release
	$(BIN) stacks --workloads balanced,icache,mlp,branchy --traces $(TRACES)/xz6_x86_skip50M_13M.champsimtrace.xz --instructions 40000 --warmup 20000 --out target/stacks-smoke > /dev/null
	$(BIN) stacks --check-only --out target/stacks-smoke
	! $(BIN) stacks --workloads nosuch --out target/stacks-smoke 2>/dev/null
	rm -rf target/sweep-smoke
	$(BIN) sweep --workloads balanced,mlp --instructions 20000 --warmup 10000 --vary core.rob_entries=64,128 --vary memory_latency=100 --out target/sweep-smoke > /dev/null
	$(BIN) sweep --check-only --out target/sweep-smoke
	! $(BIN) sweep --vary core.rob_entries=0 --out target/sweep-bad 2>/dev/null
	@# a sweep that fails in its runs (a trace of 10 instructions) leaves no directory behind
	rm -rf target/sweep-bad; head -c 640 /dev/zero > target/ten.champsimtrace
	! $(BIN) sweep --workloads none --traces target/ten.champsimtrace --instructions 1000 --vary core.rob_entries=64 --out target/sweep-bad/deep 2>/dev/null
	test ! -e target/sweep-bad
	@# stacks over time: a partial last interval, then an interval the run cannot be cut into
	rm -rf target/phases-smoke
	$(BIN) phases --workload mlp --instructions 45000 --warmup 5000 --interval 10000 --out target/phases-smoke > target/phases-smoke.txt
	grep -q '^phases of workload mlp (seed 1): 45000 instructions after 5000 of warm-up, 5 intervals of 10000 (the last 5000)$$' target/phases-smoke.txt
	test "$$(wc -l < target/phases-smoke/phases.csv)" = 26
	grep -q '<object data="phases.svg"' target/phases-smoke/index.html
	! $(BIN) phases --workload mlp --instructions 45000 --interval 999 --out target/phases-bad 2>/dev/null
	test ! -e target/phases-bad
	@# multiplexed counters: two workloads (2 bases x 2 slices x 3 counts x 2 orders = 24 set-ups, 3 methods), then a count the unit cannot have
	rm -rf target/multiplex-smoke
	$(BIN) multiplex --workloads mlp,chase --instructions 40000 --warmup 5000 --slices 1000,2000 --schedules 4 --out target/multiplex-smoke > target/multiplex-smoke.txt
	grep -q '^workloads (2): mlp, chase$$' target/multiplex-smoke.txt
	test "$$(wc -l < target/multiplex-smoke/multiplex.csv)" = 145
	test "$$(wc -l < target/multiplex-smoke/multiplex-summary.csv)" = 73
	grep -q '<object data="multiplex.svg"' target/multiplex-smoke/index.html
	! $(BIN) multiplex --workloads mlp --counters 9 --out target/multiplex-bad 2>/dev/null
	test ! -e target/multiplex-bad

## paper: the paper's evaluation (section 5.2, Figures 4, 6, 9, 11, 12, Table 1)
## on the whole synthetic suite and both shared ChampSim traces into report/:
## 3 M instructions after 1 M of warm-up per run, 18 runs per workload or trace
## (about 2 minutes on a 2-vCPU AMD EPYC, after the release build; 3.5 with the
## studies below on the 2-vCPU Xeon of 2026-11-28); then,
## beyond the paper, each trace's stacks over time, in intervals of 100 k
## instructions, into report/phases/xz/ and report/phases/sqlite3/; and the
## global counters multiplexed over fewer physical counters (Azimi et al.), on
## the suite and both traces, into report/multiplex/.
paper: release
	$(BIN) stacks --workloads all --traces $(TRACES)/xz6_x86_skip50M_13M.champsimtrace.xz,$(TRACES)/sqlite3_x86_skip100M_13M.champsimtrace.xz --instructions 3000000 --warmup 1000000 --out report
	$(BIN) stacks --workloads limits --instructions 3000000 --warmup 1000000 --out report/limits
	$(BIN) phases --trace $(TRACES)/xz6_x86_skip50M_13M.champsimtrace.xz --instructions 3000000 --warmup 1000000 --interval 100000 --out report/phases/xz
	$(BIN) phases --trace $(TRACES)/sqlite3_x86_skip100M_13M.champsimtrace.xz --instructions 3000000 --warmup 1000000 --interval 100000 --out report/phases/sqlite3
	$(BIN) multiplex --workloads all --traces $(TRACES)/xz6_x86_skip50M_13M.champsimtrace.xz,$(TRACES)/sqlite3_x86_skip100M_13M.champsimtrace.xz --instructions 3000000 --warmup 1000000 --out report/multiplex

## sweep: beyond the paper: the stacks study on variants of the machine, one key
## varied at a time (ROB, load/store queue, frontend depth, memory latency, a
## stride prefetcher), 1 M instructions per run, into report/sweep/; then the
## machines whose load/store queue or branch limit fills first again with the
## paper's unit (no backend_full) into report/sweep-paper-unit/; then the
## unit's own size (local counter width, rows) on the suite and both traces
## into report/sweep-unit/; then the memory system of Chen and Aamodt (MSHRs,
## the three prefetchers) on the suite and both traces into
## report/sweep-memory/; then twelve random layouts of the programs in memory
## (layout.seed, Weaver and McKee) into report/sweep-layout/ (about 37 minutes
## in all on this 2-vCPU Xeon, the last two about 12 each; docs/accuracy.md
## discusses the results).
sweep: release
	$(BIN) sweep --instructions 1000000 --vary core.rob_entries=64,256 --vary core.lsq_entries=32,128 --vary core.frontend_stages=10 --vary memory_latency=100,500 --vary prefetch.kind=stride --out report/sweep
	$(BIN) sweep --instructions 1000000 --set core.report_backend_full=false --vary core.rob_entries=256 --vary core.lsq_entries=32 --vary core.fmt_rows=8,16 --out report/sweep-paper-unit
	$(BIN) sweep --instructions 1000000 --vary unit.local_bits=6,8,9,10,12 --vary core.fmt_rows=8,16,32 --traces $(TRACES)/xz6_x86_skip50M_13M.champsimtrace.xz,$(TRACES)/sqlite3_x86_skip100M_13M.champsimtrace.xz --out report/sweep-unit
	$(BIN) sweep --instructions 1000000 --vary l1d.mshrs=1,2,4 --vary l2.mshrs=2,4 --vary prefetch.kind=next_line,tagged,stride --traces $(TRACES)/xz6_x86_skip50M_13M.champsimtrace.xz,$(TRACES)/sqlite3_x86_skip100M_13M.champsimtrace.xz --out report/sweep-memory
	$(BIN) sweep --instructions 1000000 --vary layout.seed=1,2,3,4,5,6,7,8,9,10,11,12 --traces $(TRACES)/xz6_x86_skip50M_13M.champsimtrace.xz,$(TRACES)/sqlite3_x86_skip100M_13M.champsimtrace.xz --out report/sweep-layout
