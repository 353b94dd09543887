"""Scoring profiles: ``official`` reproduces the reference scripts, ``fixed`` corrects their quirks."""

from __future__ import annotations

OFFICIAL = "official"
FIXED = "fixed"
PROFILES = (OFFICIAL, FIXED)

# LV-Eval calls its corrected variant the "paper" profile (the metric as its
# paper describes it); app-wide it is simply the fixed profile.
PROFILE_ALIASES = {"paper": FIXED, "code": OFFICIAL}


def resolve_profile(profile: str) -> str:
    """Return the canonical profile name, accepting the known aliases."""
    name = PROFILE_ALIASES.get(profile, profile)
    if name not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; expected one of {PROFILES} or {tuple(PROFILE_ALIASES)}")
    return name
