//! `TestCluster`: an RAII lab in a temporary folder for tests.

use super::*;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// An RAII lab for tests: a temporary directory and a running cluster, both gone when it drops; its
/// servers die with the test process even if the test is killed.
pub struct TestCluster {
    // Field order matters: the lab (servers) drops before the directory it writes to.
    pub lab: Lab,
    _dir: tempfile::TempDir,
}

impl TestCluster {
    /// `nodes` untagged servers `n1`..`nN`.
    pub fn start(nodes: usize) -> Result<TestCluster> {
        TestCluster::start_spec(|dir| LabSpec::plain(nodes, dir))
    }

    /// A cluster from a spec built for the temporary directory it is given. With
    /// `NATSPLAN_KEEP_TEST_LABS` set, the directory (configurations, stores, server logs) is left behind
    /// for a look after a failed test; its path goes to stderr.
    pub fn start_spec(make: impl FnOnce(PathBuf) -> LabSpec) -> Result<TestCluster> {
        let mut dir = tempfile::Builder::new()
            .prefix("natsplan-lab-")
            .tempdir()
            .context("cannot create a temporary lab dir")?;
        if std::env::var_os("NATSPLAN_KEEP_TEST_LABS").is_some() {
            dir.disable_cleanup(true);
            eprintln!("test lab kept in {}", dir.path().display());
        }
        let bin = find_nats_server(None)?;
        let lab = Lab::start(make(dir.path().to_path_buf()), &bin)?;
        Ok(TestCluster { lab, _dir: dir })
    }

    /// Client URLs joined with commas (the `NATS_URL` / `nats --server` form).
    pub fn url(&self) -> String {
        self.lab.client_urls().join(",")
    }
}

impl std::ops::Deref for TestCluster {
    type Target = Lab;
    fn deref(&self) -> &Lab {
        &self.lab
    }
}

impl std::ops::DerefMut for TestCluster {
    fn deref_mut(&mut self) -> &mut Lab {
        &mut self.lab
    }
}
