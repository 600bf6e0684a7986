//! See DESIGN.md: module `emit`.
