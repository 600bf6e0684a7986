//! The model tests, one binary (each links the whole crate, so fewer binaries build and link faster):
//! site parsing and its errors, layouts and the optimiser, survival, performance and calibration, and the
//! HTML reports, through the library's public API (property tests with fixed seeds). One module per area.

mod calibration_writer;
mod catch_up;
mod design_props;
mod design_seeds;
mod function_size;
mod hetero_optimise;
mod hetero_perf;
mod hetero_pool;
mod hetero_props;
mod inputs_fuzz;
mod layers;
mod optimize_props;
mod perf_calibration;
mod perf_consumers;
mod perf_holdout;
mod perf_layout;
mod perf_leader;
mod perf_loo;
mod perf_matrix;
mod perf_model;
mod perf_sync;
mod report_html;
mod report_render;
mod rust_version;
mod server_needs;
mod site_errors;
mod site_props;
mod stats;
mod survival_review;
mod whatif_tolerates;
