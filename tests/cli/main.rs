//! The CLI tests, one binary (each links the whole crate, so fewer binaries build and link faster): every
//! command run as a user runs it, with no cluster or with a lab of its own. One module per area; the
//! harness is `tests/common`. The few that run nats-server (a lab, `nats-server -t`) are ignored unless
//! the `live` feature is on (`cargo test --features live`, as scripts/test runs them).

#[path = "../common/mod.rs"]
mod common;

mod agents_cli;
mod bench_flags_cli;
mod bench_natscli_cli;
mod bench_ordered_cli;
mod bounds_cli;
mod busy_host_cli;
mod calibrate_cli;
mod check_cli;
mod conn_context_cli;
mod csv_cli;
mod design_cli;
mod durability_cli;
mod emit_auth_cli;
mod emit_cli;
mod emit_helm_cli;
mod emit_limits_cli;
mod emit_monitoring_cli;
mod html_fit_cli;
mod import_omb;
mod inputs_hostile;
mod interchange_cli;
mod lab_cli;
mod new_user_cli;
mod perf_design_site;
mod plan_inputs;
mod predict_cli;
mod report_completions;
mod report_words_cli;
mod scale_layouts_cli;
mod scale_omb_rate;
mod seams_cli;
mod site_cli;
mod size_cli;
mod size_have_cli;
mod snapshots;
mod survival_simulate_cli;
mod verify_cli;
mod whatif_cli;
