//! See DESIGN.md: module `verify`.
