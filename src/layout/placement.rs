//! Replica placement under the emitted configuration.
