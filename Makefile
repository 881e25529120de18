# The two commands of the README. Both install what is missing first (scripts/setup).
# `make docs` builds the guide (docs/guide) with mdBook into docs/guide/book.
CARGO ?= cargo
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: demo test setup docs

setup:
	@scripts/setup

# A quick S0 comparison, MyISAM vs InnoDB, each durable and relaxed, on throwaway servers:
# each set-up first crashed both ways (process kill, simulated power loss) and checked, then
# its cells repeated until decided; ending in the verdict and tables, stored in
# enginebench.db, and an HTML report.
demo: setup
	$(CARGO) run --release --quiet -- run s0 --rows 100000 --threads 1,5,20 --loops 200 --profile durable --profile relaxed --crash process,power --json enginebench-demo.json
	$(CARGO) run --release --quiet -- report latest --html enginebench-demo.html
	@echo "report: $(CURDIR)/enginebench-demo.html"

# Every test: unit, CLI and integration tests against real throwaway servers, and the HTML
# report rendered in headless chromium.
# FRESH=1 (and CI=true, as CI sets it): with an empty private build cache and TMPDIR.
test:
	@scripts/test $(if $(FRESH),--fresh)

# The guide, with mdBook (installed from crates.io into ~/.cargo/bin when missing; Debian has
# no package of it). Its reference pages are generated and its commands run by the test
# suite (tests/it/guide.rs, tests/it/guide_reference.rs); scripts/regen-guide writes them anew.
docs:
	@command -v mdbook >/dev/null 2>&1 || $(CARGO) install mdbook --locked --version "^0.5"
	mdbook build docs/guide
	@echo "guide: $(CURDIR)/docs/guide/book/index.html"
