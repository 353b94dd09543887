"""The app's version, stamped on exports."""

__version__ = "0.1.0"
