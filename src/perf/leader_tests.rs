//! Unit tests of `perf::leader` (moved out of leader.rs, which was past 800 lines).

use super::*;

fn inp(r: u8, always: bool, publishers: f64, window: f64) -> StreamInput {
    StreamInput {
        replicas: r,
        bytes: 128.0,
        always,
        publish: Publish {
            publishers,
            window,
            saturation_s: 0.0,
        },
        fsync_s: 0.4e-3,
        commit_s: None,
        fsync_byte_s: 0.0,
        sync_copies: 2.0,
        write_s: 3e-6,
        round_trip_s: 0.2e-3,
        async_base_s: None,
        subjects: 1.0,
        readers_s: 0.0,
    }
}

#[test]
fn delayed_sync_is_the_lower_of_the_leader_and_the_clients_in_flight() {
    let t_l = 10e-6;
    let big = stream_rate(t_l, &inp(3, false, 2.0, 500.0));
    assert_eq!(big.binding, Binding::LeaderCpu);
    assert!((big.per_s - 1.0 / t_l).abs() < 1e-6);
    let one = stream_rate(t_l, &inp(3, false, 1.0, 1.0));
    assert_eq!(one.binding, Binding::SyncRoundTrips);
    assert!((one.per_s - 1.0 / 0.2e-3).abs() < 1e-6);
    let small = stream_rate(t_l, &inp(3, false, 1.0, 4.0));
    assert_eq!(small.binding, Binding::AsyncWindow);
}

#[test]
fn always_puts_two_fsyncs_in_series_for_one_sync_publisher_and_amortises_them_in_batches() {
    let t_l = 10e-6;
    let one = stream_rate(t_l, &inp(3, true, 1.0, 1.0));
    // τ + leader WAL fsync + follower WAL fsync, give or take one message of leader time.
    let want = 1.0 / (0.2e-3 + 2.0 * 0.4e-3);
    assert!((one.per_s / want - 1.0).abs() < 0.02, "{} vs {want}", one.per_s);
    assert_eq!(one.binding, Binding::Fsync);
    // Many in flight: one fsync per append entry, so the rate stays near the leader's.
    let many = stream_rate(t_l, &inp(3, true, 2.0, 500.0));
    assert!(many.per_s > 0.6 / t_l && many.per_s < 1.0 / t_l, "{}", many.per_s);
    // R1 fsyncs every message.
    let r1 = stream_rate(t_l, &inp(1, true, 2.0, 500.0));
    assert!((r1.per_s - 1.0 / (t_l + 0.4e-3)).abs() < 1e-6);
    assert_eq!(r1.binding, Binding::Fsync);
}

#[test]
fn a_class_reproduces_the_rates_it_was_fitted_from_on_its_own_host() {
    let host = HostClass {
        server_model: "lab".into(),
        cores: 2.0,
        cpu_speed: 1.0,
        co_located: 4,
    };
    for (r, rate) in [(3u8, 120_000.0), (1, 150_000.0)] {
        let u = unit_for(&host, r, false, 3e-6, rate);
        let class = LeaderClass {
            id: "t".into(),
            host: host.clone(),
            host_assumed: false,
            unit_s: u,
            unit_byte_s: 0.0,
            shape: None,
            write_s: 3e-6,
            write_source: String::new(),
            always_write_s: 3e-6,
            always_write_source: String::new(),
            r1_measured: false,
            leader_remote: false,
            probe: None,
            async_base_s: None,
            subjects: crate::perf::subjects::SubjectsTerm::assumed(0.0),
            always_replicas: Vec::new(),
            rms_log: 0.0,
            rows: 1,
        };
        let mut i = inp(r, false, 2.0, 500.0);
        i.write_s = 3e-6;
        let t = leader_time_s(&class, &host, &i);
        assert!((1.0 / t / rate - 1.0).abs() < 1e-9, "R{r}: {}", 1.0 / t);
    }
}

#[test]
fn distance_is_zero_only_on_the_named_host_and_grows_with_speed_and_cores() {
    let lab = HostClass {
        server_model: "lab".into(),
        cores: 2.0,
        cpu_speed: 1.0,
        co_located: 4,
    };
    let class = LeaderClass {
        id: "t".into(),
        host: lab.clone(),
        host_assumed: false,
        unit_s: 4e-6,
        unit_byte_s: 0.0,
        shape: None,
        write_s: 3e-6,
        write_source: String::new(),
        always_write_s: 3e-6,
        always_write_source: String::new(),
        r1_measured: false,
        leader_remote: false,
        probe: None,
        async_base_s: None,
        subjects: crate::perf::subjects::SubjectsTerm::assumed(0.0),
        always_replicas: Vec::new(),
        rms_log: 0.0,
        rows: 3,
    };
    assert_eq!(class.distance(&lab, 3), 0.0);
    let mut big = lab.clone();
    big.server_model = "big".into();
    big.cores = 16.0;
    big.co_located = 1;
    let mut fast = big.clone();
    fast.cpu_speed = 2.0;
    assert!(class.distance(&big, 3) > 0.3);
    assert!(class.distance(&fast, 3) > class.distance(&big, 3));
    assert!(width(&class, class.distance(&fast, 3), 1024.0) > width(&class, 0.0, 1024.0));
}

/// Issue 37: with a measured base latency a window of async publishes is a closed loop, `n ÷ (a + n·t_l)`:
/// a small window is bound by it, a large one approaches the leader's ceiling; without one, as before.
#[test]
fn an_async_window_is_a_closed_loop_when_the_base_latency_was_measured() {
    let t_l = 12.5e-6;
    let mut i = inp(3, false, 2.0, 16.0);
    i.async_base_s = Some(0.6e-3);
    let small = stream_rate(t_l, &i);
    assert!((small.per_s - 32.0 / (0.6e-3 + 32.0 * t_l)).abs() < 1e-6);
    assert_eq!(small.binding, Binding::AsyncWindow);
    i.publish.window = 256.0;
    let big = stream_rate(t_l, &i);
    assert!(big.per_s > 2.0 * small.per_s && big.per_s < 1.0 / t_l);
    assert_eq!(big.binding, Binding::LeaderCpu);
    i.async_base_s = None;
    i.publish.window = 16.0;
    assert_eq!(
        stream_rate(t_l, &i).per_s,
        1.0 / t_l,
        "without a base latency: n ÷ τ against the ceiling"
    );
}
