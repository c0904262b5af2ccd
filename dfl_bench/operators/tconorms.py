"""Placeholder: filled by the operator-library work (issue 2)."""
