"""Reproduction of the paper's analytical results (Sections 5-8): `python -m dfl_bench.theory`.

fractions (MC fraction of inputs with a nonvanishing derivative), closed_forms (the paper's
formulas and exact ones), gradient_ascent (Section 7 examples), surfaces (operator and derivative
plots), theory_plots (Fig. ratio_2_yager), theory_report (results/theory/README.md),
family_theory (the t-norm families beyond the paper), carry_gradients (MNIST addition's learning
signal at the untrained network).
"""
