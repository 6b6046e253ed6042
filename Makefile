# SPDX-License-Identifier: MIT
# The two commands of README.md:
#   make run   installs missing Debian packages (as root; else prints the
#              apt-get line) and speedscope from npm into .deps/npm, builds,
#              and shows pmon working
#   make test  builds and runs the whole suite: plain -Werror build, the
#              ASan+UBSan build, and the fuzz harnesses (ctest's summary last)
# Quiet by default; VERBOSE=1 shows the full commands.

BUILD      ?= build
BUILD_SAN  ?= build-asan
BUILD_FUZZ ?= build-fuzz
BUILD_TSAN ?= build-tsan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
# make install: where (PREFIX, LIBDIR: the GNU default for PREFIX when
# empty, lib/x86_64-linux-gnu under /usr) and under which root (DESTDIR).
PREFIX     ?= /usr/local
LIBDIR     ?=
DESTDIR    ?=

# Debian 12 packages the build and the tests need.
DEB_DEPS := cmake make gcc clang pkg-config python3 libcmocka-dev libpfm4-dev libcairo2-dev librsvg2-bin \
	libjansson-dev libncurses-dev libdw-dev libelf-dev zlib1g-dev libcapstone-dev \
	libprotobuf-c-dev libtraceevent-dev protobuf-c-compiler protobuf-compiler golang-github-google-pprof-dev \
	tmux cpuid clang-format cppcheck locales valgrind llvm \
	libmicrohttpd-dev prometheus golang-go prometheus-node-exporter python3-prometheus-client \
	chromium abigail-tools universal-ctags \
	pandoc mandoc bash-completion zsh \
	dpkg-dev debhelper fakeroot lintian debootstrap systemd

# A real trace viewer for the Chrome JSON test (t1840): speedscope, pinned,
# from npm into a folder of the work tree (git-ignored), never globally.
SPEEDSCOPE_VERSION := 1.25.0
NPM_DIR            := .deps/npm

ifeq ($(VERBOSE),1)
Q :=
CMAKE_VERBOSE := -DCMAKE_VERBOSE_MAKEFILE=ON
else
Q := @
CMAKE_VERBOSE := -DCMAKE_TARGET_MESSAGES=OFF
endif

.PHONY: all deps build run test test-plain test-asan test-fuzz test-tsan install deb abi-baseline format lint clean

all: build

deps:
	$(Q)missing=$$(for p in $(DEB_DEPS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing: $$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
		else \
			echo "pmon needs these Debian packages; run as root:"; \
			echo "  apt-get install -y $$missing"; \
			exit 1; \
		fi; \
	fi
	$(Q)# The tests run a program in a German locale (decimal commas).
	$(Q)if ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$$' && [ "$$(id -u)" = 0 ]; then \
		localedef -i de_DE -f UTF-8 de_DE.UTF-8 || echo "cannot generate de_DE.UTF-8: its tests skip"; \
	fi
	$(Q)# speedscope $(SPEEDSCOPE_VERSION) for the viewer test (t1840): its release page and
	$(Q)# files, no browser download. npm comes with nodejs (NodeSource's) or
	$(Q)# as Debian's npm. Where it cannot be installed, that test skips.
	$(Q)want='"version": "$(SPEEDSCOPE_VERSION)"'; \
	if ! grep -qF "$$want" $(NPM_DIR)/node_modules/speedscope/package.json 2>/dev/null; then \
		if ! command -v npm >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
			echo "installing: npm"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null; \
		fi; \
		echo "installing: speedscope@$(SPEEDSCOPE_VERSION) (npm, into $(NPM_DIR))"; \
		mkdir -p $(NPM_DIR) && \
		npm install --prefix $(NPM_DIR) --no-save --no-audit --no-fund --ignore-scripts \
			--loglevel=error speedscope@$(SPEEDSCOPE_VERSION) >/dev/null || \
		echo "cannot install speedscope (npm): the trace viewer test skips"; \
	fi

$(BUILD)/build.ninja $(BUILD)/Makefile:
	$(Q)cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPMON_WERROR=ON $(CMAKE_VERBOSE) >/dev/null

build: deps $(BUILD)/Makefile
	$(Q)cmake --build $(BUILD) -j$(JOBS) $(if $(Q),-- --no-print-directory -s,)

run: build
	$(Q)echo '$$ pmon info'; ./$(BUILD)/pmon info
	$(Q)echo; echo '$$ pmon stat -e task-clock,page-faults,context-switches -- ls -R /usr/include'
	$(Q)./$(BUILD)/pmon stat -e task-clock,page-faults,context-switches -- ls -R /usr/include >/dev/null
	$(Q)echo '$$ pmon rdpmc --gp 0        (executed, and explained when it faults)'
	$(Q)./$(BUILD)/pmon rdpmc --gp 0 || true
	$(Q)if [ -f ../shared/data/cpuid/intel-core-ultra9-288v-lunarlake-ecore.txt ]; then \
		echo; echo '$$ pmon info --cpuid-file ../shared/data/cpuid/intel-core-ultra9-288v-lunarlake-ecore.txt  (another machine)'; \
		./$(BUILD)/pmon info --cpuid-file ../shared/data/cpuid/intel-core-ultra9-288v-lunarlake-ecore.txt | sed -n '/^Performance/,/^Time/p'; \
	fi
	$(Q)echo '$$ pmon bench --asm "imul rax, rbx"'; ./$(BUILD)/pmon bench --asm 'imul rax, rbx' | tail -2

test-plain: build
	$(Q)cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-asan: deps
	$(Q)cmake -S . -B $(BUILD_SAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPMON_WERROR=ON -DPMON_SANITIZE=ON $(CMAKE_VERBOSE) >/dev/null
	$(Q)cmake --build $(BUILD_SAN) -j$(JOBS) $(if $(Q),-- --no-print-directory -s,)
	$(Q)cd $(BUILD_SAN) && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
		UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j$(JOBS)

test-fuzz: deps
	$(Q)CC=clang cmake -S . -B $(BUILD_FUZZ) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPMON_FUZZ=ON -DPMON_SANITIZE=ON $(CMAKE_VERBOSE) >/dev/null
	$(Q)cmake --build $(BUILD_FUZZ) -j$(JOBS) $(if $(Q),-- --no-print-directory -s,)
	$(Q)cd $(BUILD_FUZZ) && ctest --output-on-failure -R '^fuzz/'

# The region runtime under ThreadSanitizer: 16 threads counting while others
# start and exit, 2,000 short-lived threads, fork. Fewer pairs than the plain
# run (TSan is ~10x slower); the library and the tests only are built. And
# the trace hooks called from a signal handler (TSan also checks that the
# handler calls nothing signal-unsafe).
test-tsan: deps
	$(Q)CC=clang cmake -S . -B $(BUILD_TSAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_C_FLAGS=-fsanitize=thread -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
		-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread $(CMAKE_VERBOSE) >/dev/null
	$(Q)cmake --build $(BUILD_TSAN) -j$(JOBS) --target test-region test-region-setup wl-sigstorm \
		$(if $(Q),-- --no-print-directory -s,)
	$(Q)cd $(BUILD_TSAN) && TSAN_OPTIONS=halt_on_error=1:exitcode=66 PMON_TEST_PAIRS=20002 \
		PMON_TEST_THREADS=2000 ctest --output-on-failure -R '^unit/region|^workload/trace-sigstorm'

# The plain suite runs last so that the final line is its ctest summary.
test: test-asan test-fuzz test-tsan test-plain

# The prefix and library folder are configured, not only given to the
# install: pmon finds its modules and libpmon relative to itself, and the
# .pc files name them.
install: deps
	$(Q)cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPMON_WERROR=ON $(CMAKE_VERBOSE) \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX) \
		$(if $(LIBDIR),-DCMAKE_INSTALL_LIBDIR=$(LIBDIR),-UCMAKE_INSTALL_LIBDIR) >/dev/null
	$(Q)cmake --build $(BUILD) -j$(JOBS) $(if $(Q),-- --no-print-directory -s,)
	$(Q)DESTDIR=$(DESTDIR) cmake --install $(BUILD) $(if $(Q),>/dev/null,)

# The Debian packages (docs/packaging.md): the tree's files (git's list
# when it is a checkout) are copied to $(DEB_OUT)/src and built there with
# dpkg-buildpackage, binary only and unsigned, so that the .debs, .buildinfo
# and .changes land in $(DEB_OUT), inside the work tree, and the tree itself
# gets no debian/tmp or obj-* folders. The test suite is not run inside
# (debian/rules). lintian checks the result unless LINTIAN=0.
DEB_OUT  ?= $(BUILD)/deb
DEB_JOBS ?= $(JOBS)
LINTIAN  ?= 1
# The packages built, then checked and installed into a clean Debian 12
# root (tests/cli/t0180-deb.sh; the root needs root and a mirror).
test-deb: deb
	$(Q)PMON_SRC=$(CURDIR) PMON=$(CURDIR)/$(BUILD)/pmon PMON_CPUID_DIR=$(CURDIR)/../shared/data/cpuid \
		PMON_DEB_DIR=$(abspath $(DEB_OUT)) PMON_DEB_CLEAN_ROOT=1 sh tests/cli/t0180-deb.sh

deb:
	$(Q)rm -rf $(DEB_OUT) && mkdir -p $(DEB_OUT)/src
	$(Q)if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files -z --cached --others --exclude-standard | \
			tar --null --no-recursion -T - -cf - | tar -C $(DEB_OUT)/src -xf - || exit 1; \
	else \
		tar --exclude='./build*' --exclude=./.deps --exclude=./.git -cf - . | tar -C $(DEB_OUT)/src -xf - || exit 1; \
	fi
	$(Q)cd $(DEB_OUT)/src && DEB_BUILD_OPTIONS="nocheck parallel=$(DEB_JOBS) $(DEB_BUILD_OPTIONS)" \
		dpkg-buildpackage -b -uc -us $(if $(Q),>../build.log 2>&1 || { tail -40 ../build.log; exit 1; },)
	$(Q)rm -rf $(DEB_OUT)/src
	$(Q)ls $(DEB_OUT)/*.deb
	$(Q)if [ "$(LINTIAN)" = 1 ]; then lintian --fail-on error,warning $(DEB_OUT)/*.changes; fi

# The ABI baselines abi/*.abi that tests abi/<library> compare the build with
# (docs/architecture.md, "ABI"): run with a change that alters the ABI on
# purpose, which after a release means one that moves the version, never
# just to silence a failing abi/ test. From the plain build (gcc,
# RelWithDebInfo); the same sources give the same files wherever the tree
# and the build are.
abi-baseline: build
	$(Q)for l in libpmon libpmon-report libpmon-plot; do \
		sh abi/abi.sh dump $(BUILD)/$$l.so abi/$$l.abi || exit 1; \
	done; git status --short abi/

format:
	$(Q)clang-format -i $$(git ls-files --cached --others --exclude-standard '*.c' '*.h')

lint:
	$(Q)clang-format --dry-run --Werror $$(git ls-files --cached --others --exclude-standard '*.c' '*.h')
	$(Q)cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
		--suppress=missingIncludeSystem --inline-suppr -I include -I lib lib cli

clean:
	$(Q)rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_FUZZ) $(BUILD_TSAN)
