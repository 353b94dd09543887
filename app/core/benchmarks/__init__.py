"""The benchmarks the app knows: the seam's two halves (spec.py) and the registry of their pure halves (registry.py).

Nothing is imported here: a benchmark's own package imports spec.py, and registry.py imports every benchmark's
package, so loading one must never load the other through this package.
"""
