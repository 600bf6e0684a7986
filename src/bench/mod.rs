//! See DESIGN.md: module `bench`.
