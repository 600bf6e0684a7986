//! Reports: pure functions from a Plan (or another result) to bytes. Nothing here computes.
