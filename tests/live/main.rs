//! The live tests, one binary (each links the whole crate, so fewer binaries build and link faster):
//! real nats-server clusters on loopback (lab, bench, verify, calibrate, agents, emit, import, faults). They
//! take `common::serial` (or `serial_async`), so one cluster runs at a time across all of them. Need
//! nats-server: `scripts/install-nats-server` (CI's `scripts/test` installs it and fails without it).

#[path = "../common/mod.rs"]
mod common;

mod agents_live;
mod auth_live;
mod bench_consumers_live;
mod bench_integrity_live;
mod bench_leader_live;
mod bench_live;
mod bench_natscli_live;
mod bench_ordered_live;
mod calibrate_live;
mod check_live;
mod emit_helm_live;
mod emit_live;
mod faults_cli_live;
mod faults_live;
mod faults_meta_live;
mod faults_power_live;
mod faults_recover_live;
mod import_live;
mod interchange_live;
mod interrupt_live;
mod lab_leftovers_live;
mod lab_live;
mod pinned_sets_live;
mod powerfs_live;
mod readme_walkthrough_live;
mod report_verify_live;
mod system_account_live;
mod verify_consumers_live;
mod verify_lab_live;
mod verify_live;
