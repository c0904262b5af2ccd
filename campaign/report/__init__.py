"""The paper's report (`python -m campaign` passes it to the framework's rendering as its
`Report`): the paper's claims decided on each profile's tables and put in words.

paper_report.py      the report's hooks: the claims under each table, in the index, in
                     tables/verdicts.md and the write-up's blocks
profile_verdicts.py  one profile's rendering with the claims decided on it (four views)
claims/              the paper's claims as checks (framework.py the views and rules,
                     deciding.py what a check reads and decides with, one module per part)
sensitivity.py       the sensitivity table's variations, each decided as the rules decide
verdict_report.py    tables/verdicts.md and the write-up's verdict blocks, the rules in words
baseline_rows.py     each row of a table against the supervised baseline (verdicts.md)
beyond_words.py      the write-up's words on the tables beyond the paper
budget_runs.py       the paper budget's runs, each once (the index, the write-up)
writeup.py           the campaign's blocks of the write-up and the searches' pages
"""
