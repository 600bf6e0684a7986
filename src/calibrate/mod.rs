//! See DESIGN.md: module `calibrate`.
