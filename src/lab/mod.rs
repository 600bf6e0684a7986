//! See DESIGN.md: module `lab`.
