//! Distributed load generation: `natsplan agent` processes on several client hosts, coordinated over NATS
//! itself (subjects `natsplan.agents.>`), so one report measures what many clients together do.
//!
//! Layout: `protocol` (subjects and JSON messages, V2 histograms), `clock` (NTP-style offset estimation),
//! `split` (which agent runs which worker), `merge` (agents' parts → the result one large client would
//! have measured), `coordinator` (discovery, clock probes, a row's life: share → ready → agreed start →
//! heartbeats → results), `worker` (the agent process). The workload itself is bench's engine
//! (`bench::run_share`), unchanged: agents run exactly what `natsplan bench` runs in-process.

pub mod clock;
pub mod coordinator;
pub mod merge;
pub mod protocol;
pub mod report;
pub mod split;
pub mod worker;

pub use coordinator::{
    AgentUnavailable, AgentsOptions, AgentsRun, AgentsSummary, Coordinator, Distributed, ShareStatus,
};
