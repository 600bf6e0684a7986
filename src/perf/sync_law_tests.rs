//! Unit tests of `perf::sync_law`.

use super::*;

#[test]
fn the_saturation_fit_takes_one_point_exactly_and_balances_several() {
    // One point: 4 clients at 800 µs each over a 320 µs round trip is 160 µs per further client.
    let d = fit_saturation(320e-6, &[(4.0, 800e-6)]);
    assert!((d - 160e-6).abs() < 1e-12, "{d}");
    // Points on the law come back.
    let pts: Vec<(f64, f64)> = [4.0, 16.0, 64.0]
        .iter()
        .map(|&c| (c, 300e-6 + 50e-6 * (c - 1.0)))
        .collect();
    assert!((fit_saturation(300e-6, &pts) - 50e-6).abs() < 1e-9);
}

fn law(curve: &[(f64, f64)], saturation_s: Option<f64>) -> SyncLaw {
    SyncLaw {
        op: SyncOp::Publish,
        replicas: 3,
        round_trip_s: curve[0].1,
        round_trip_min_s: curve[0].1,
        saturation_s,
        bytes: 128.0,
        clients_fewest: curve[0].0,
        clients_max: curve[curve.len() - 1].0,
        curve: curve.to_vec(),
        leader_cpu_s: None,
        client_cpu_s: None,
        rows: curve.len(),
        spread_log: 0.0,
        under_always: true,
    }
}

/// Issue 37: with three or more counts D is read off the measured curve, so 160 publishers are priced from
/// the last segment's slope, not from the first few clients' larger one (which capped them at half).
#[test]
fn saturation_is_read_off_the_measured_counts_when_there_are_three_or_more() {
    let l = law(
        &[(1.0, 300e-6), (4.0, 540e-6), (16.0, 1000e-6), (64.0, 2470e-6)],
        Some(70e-6),
    );
    let at = |c: f64| l.saturation_at(c).unwrap();
    // At a measured count the curve's own point comes back: t(c) = τ + D·(c − 1).
    for (c, t) in [(4.0, 540e-6), (16.0, 1000e-6), (64.0, 2470e-6)] {
        assert!((300e-6 + at(c) * (c - 1.0) - t).abs() < 1e-12, "{c}");
    }
    // Between counts: on the straight line between them.
    assert!((300e-6 + at(40.0) * 39.0 - (1000e-6 + 24.0 * (1470e-6 / 48.0))).abs() < 1e-12);
    // Beyond the most measured: what the clients add grows as the power of their number the measured counts
    // follow (least squares of the logarithms through x = c − 1: 3, 15, 63 → 240, 700, 2170 µs), from the
    // last count on; so D keeps falling and the rate keeps rising (the leader's ceiling caps it elsewhere).
    let (lx, ly) = (
        [3f64.ln(), 15f64.ln(), 63f64.ln()],
        [240f64.ln(), 700f64.ln(), 2170f64.ln()],
    );
    let (mx, my) = (lx.iter().sum::<f64>() / 3.0, ly.iter().sum::<f64>() / 3.0);
    let alpha =
        (0..3).map(|i| (lx[i] - mx) * (ly[i] - my)).sum::<f64>() / (0..3).map(|i| (lx[i] - mx).powi(2)).sum::<f64>();
    assert!(
        (l.beyond_exponent().unwrap() - alpha).abs() < 1e-12 && alpha > 0.7 && alpha < 0.75,
        "{alpha}"
    );
    let t160 = 300e-6 + 2170e-6 * (159.0f64 / 63.0).powf(alpha);
    assert!((300e-6 + at(160.0) * 159.0 - t160).abs() < 1e-12);
    // Below the straight line through the last two counts (which priced many clients low, runs 5-7).
    let slope = 1470e-6 / 48.0;
    assert!(t160 < 2470e-6 + 96.0 * slope);
    assert!(at(160.0) < at(64.0) && at(64.0) < at(16.0) && at(16.0) < at(4.0));
    let rate = |c: f64| c / (300e-6 + at(c) * (c - 1.0));
    assert!(rate(160.0) > rate(64.0) && rate(1000.0) > rate(160.0));
    // A delayed law: the last slope carries on beyond the most measured (run 8: the power law priced
    // delayed clients there 38-40 % high).
    let delayed = SyncLaw {
        under_always: false,
        ..l.clone()
    };
    let d = |c: f64| delayed.saturation_at(c).unwrap();
    assert!((300e-6 + d(160.0) * 159.0 - (2470e-6 + 96.0 * slope)).abs() < 1e-12);
    assert_eq!(d(16.0), at(16.0));
    // One client, or fewer counts: the single fitted D as before.
    assert!((at(1.0) - 80e-6).abs() < 1e-12);
    let two = law(&[(1.0, 300e-6), (4.0, 540e-6)], Some(80e-6));
    assert_eq!(two.saturation_at(160.0), Some(80e-6));
}

/// Beyond the most clients measured, the power law only where the counts grow more slowly than a straight
/// line, and never more slowly than a square root (`BEYOND_EXPONENT_MIN`).
#[test]
fn the_power_beyond_the_rows_holds_only_for_counts_that_bend_and_not_below_a_square_root() {
    // Straight (α = 1) or bending up: the last segment's slope carries on, as before.
    for curve in [
        [(1.0, 100e-6), (4.0, 400e-6), (16.0, 1600e-6)],
        [(1.0, 100e-6), (4.0, 300e-6), (16.0, 2000e-6)],
    ] {
        let l = law(&curve, None);
        assert_eq!(l.beyond_exponent(), None, "{curve:?}");
        let slope = (curve[2].1 - curve[1].1) / 12.0;
        let t = 100e-6 + l.saturation_at(64.0).unwrap() * 63.0;
        assert!((t - (curve[2].1 + 48.0 * slope)).abs() < 1e-12);
    }
    // Almost flat (α ≈ 0.13): held to 0.5.
    let flat = law(&[(1.0, 100e-6), (4.0, 1000e-6), (16.0, 1200e-6)], None);
    assert_eq!(flat.beyond_exponent(), Some(0.5));
    let t = 100e-6 + flat.saturation_at(61.0).unwrap() * 60.0;
    assert!((t - (100e-6 + 1100e-6 * 4f64.sqrt())).abs() < 1e-12, "{t}");
    // A count at or below τ (noise) leaves fewer than two points: the straight line.
    let noisy = law(&[(1.0, 100e-6), (4.0, 90e-6), (16.0, 1200e-6)], None);
    assert_eq!(noisy.beyond_exponent(), None);
}

fn lab_host(name: &str) -> HostClass {
    HostClass {
        server_model: name.into(),
        cores: 2.0,
        cpu_speed: 1.0,
        co_located: 4,
    }
}

fn class(host: &HostClass, unit_byte_s: f64) -> LeaderClass {
    LeaderClass {
        unit_byte_s,
        ..LeaderClass::for_tests(&host.server_model, host, 10e-6, 1e-6, 1)
    }
}

fn target<'a>(host: &'a HostClass, leader: &'a LeaderClass, bytes: f64, always: bool) -> PriceTarget<'a> {
    PriceTarget {
        host,
        replicas: 3,
        bytes,
        per_byte_s: 0.0,
        servers: 3,
        clients: 16.0,
        leader,
        leader_time_s: 40e-6,
        always,
    }
}

/// Issue 37: rows measured under `always` (a cluster calibrated as it runs) price an `always` target on
/// their own host as measured, and nothing else: a delayed target, or another host, keeps the delayed law.
#[test]
fn always_rows_price_only_an_always_target_on_their_own_host() {
    let host = lab_host("lab");
    let leader = class(&host, 0.0);
    let delayed = law(&[(1.0, 300e-6), (4.0, 540e-6), (16.0, 1000e-6)], Some(50e-6));
    let mut always = law(&[(1.0, 1000e-6), (4.0, 1500e-6), (16.0, 3000e-6)], Some(130e-6));
    always.round_trip_min_s = 900e-6;
    let hosts = vec![SyncHost {
        id: "lab".into(),
        host: host.clone(),
        host_assumed: false,
        laws: vec![delayed],
        always_laws: vec![always],
    }];
    let p = price(
        &hosts,
        std::slice::from_ref(&leader),
        &target(&host, &leader, 128.0, true),
        SyncOp::Publish,
    )
    .unwrap();
    assert!(p.under_always && p.measured);
    assert!((p.round_trip_s - 1000e-6).abs() < 1e-12, "{}", p.round_trip_s);
    // D at 16 clients read off the always curve: (3000 − 1000) ÷ 15 µs.
    assert!((p.saturation_s.unwrap() - 2000e-6 / 15.0).abs() < 1e-12);
    let d = price(
        &hosts,
        std::slice::from_ref(&leader),
        &target(&host, &leader, 128.0, false),
        SyncOp::Publish,
    )
    .unwrap();
    assert!(!d.under_always && (d.round_trip_s - 300e-6).abs() < 1e-12);
    let other = lab_host("elsewhere");
    let o = price(
        &hosts,
        std::slice::from_ref(&leader),
        &target(&other, &leader, 128.0, true),
        SyncOp::Publish,
    )
    .unwrap();
    assert!(!o.under_always, "another host's always rows priced this one");
    // Another replica count: the R3 always law does not price R1.
    let r1 = PriceTarget {
        replicas: 1,
        ..target(&host, &leader, 128.0, true)
    };
    let p1 = price(&hosts, std::slice::from_ref(&leader), &r1, SyncOp::Publish).unwrap();
    assert!(!p1.under_always, "an R3 always law priced an R1 target");
    // No always rows for KV puts: none is made up.
    assert!(price(
        &hosts,
        std::slice::from_ref(&leader),
        &target(&host, &leader, 128.0, true),
        SyncOp::KvPut
    )
    .is_none());
}

/// Issue 37 (after run 6): a price measured under `always` on the target's own host says how far it reached
/// beyond its rows, and its band grows with that alone: nothing at the rows' size and counts, the share
/// the leader class priced for larger messages, the clients beyond the most measured, the rows' spread.
#[test]
fn a_price_measured_under_always_widens_only_for_what_it_carried_beyond_its_rows() {
    let host = lab_host("lab");
    let leader = class(&host, 20e-9);
    let mut always = law(&[(1.0, 1000e-6), (4.0, 1500e-6), (16.0, 3000e-6)], Some(130e-6));
    always.spread_log = 0.03;
    let hosts = vec![SyncHost {
        id: "lab".into(),
        host: host.clone(),
        host_assumed: false,
        laws: Vec::new(),
        always_laws: vec![always],
    }];
    let at = |bytes: f64, clients: f64| {
        let t = PriceTarget {
            clients,
            ..target(&host, &leader, bytes, true)
        };
        price(&hosts, std::slice::from_ref(&leader), &t, SyncOp::Publish).unwrap()
    };
    let inside = at(128.0, 16.0);
    assert_eq!(inside.beyond.byte_share, 0.0);
    assert_eq!(inside.beyond.clients_ratio, 1.0);
    // Base, and the two measurements' noise at the rows' spread: independent, added in quadrature.
    let w = inside.beyond.width(0.15, 0.5, 0.0);
    assert!((w - 0.15f64.hypot(1.645 * 2f64.sqrt() * 0.03)).abs() < 1e-12, "{w}");
    // 16 KiB: the class prices what each further client's bytes add; its residuals count on that share.
    let big = at(16384.0, 16.0);
    assert!(
        big.beyond.byte_share > 0.0 && big.beyond.byte_share < 1.0,
        "{:?}",
        big.beyond
    );
    assert!(big.beyond.width(0.15, 0.5, 0.0) > w);
    assert_eq!(
        big.beyond.width(0.15, 0.0, 0.0),
        w,
        "a class that fits exactly adds nothing"
    );
    // 64 clients, beyond the 16 measured: 0.15 per e-fold, and the price says it assumed.
    let many = at(128.0, 64.0);
    assert_eq!(many.beyond.clients_ratio, 4.0);
    assert!((many.beyond.width(0.15, 0.5, 0.0) - w.hypot(0.15 * 4f64.ln())).abs() < 1e-12);
    assert!(
        many.notes.iter().any(|n| n.contains("beyond the 16 the rows measured")),
        "{:?}",
        many.notes
    );
    assert!(!inside.notes.iter().any(|n| n.contains("beyond")), "{:?}", inside.notes);
    // Rows at one client count measure no D: what further clients add is priced elsewhere, all of it
    // carried (the class's whole width), though one client alone is as measured.
    let one_count = vec![SyncHost {
        always_laws: vec![law(&[(1.0, 1000e-6)], None)],
        ..hosts[0].clone()
    }];
    let at1 = |clients: f64| {
        let t = PriceTarget {
            clients,
            ..target(&host, &leader, 128.0, true)
        };
        price(&one_count, std::slice::from_ref(&leader), &t, SyncOp::Publish).unwrap()
    };
    assert_eq!(at1(8.0).beyond.byte_share, 1.0);
    assert_eq!(at1(1.0).beyond.byte_share, 0.0);
}

/// The rows' spread: each row against its count's median, one degree of freedom per count measured more
/// than once; a count measured once adds nothing.
#[test]
fn the_rows_spread_spends_a_degree_of_freedom_per_repeated_count() {
    let row = |clients: f64, t: f64| Row {
        op: SyncOp::Publish,
        replicas: 3,
        clients,
        t,
        bytes: 128.0,
        leader_cpu_s: None,
        client_cpu_s: None,
    };
    let e = 0.1f64.exp();
    let rows = [row(1.0, 1.0), row(1.0, e), row(1.0, 1.0 / e), row(4.0, 2.0)];
    let of: Vec<&Row> = rows.iter().collect();
    let curve = [(1.0, 1.0), (4.0, 2.0)];
    // Three rows about their median 1.0: 0.1² twice over 3 − 1 degrees of freedom.
    assert!(
        (spread_log(&of, &curve) - 0.1).abs() < 1e-12,
        "{}",
        spread_log(&of, &curve)
    );
    assert_eq!(spread_log(&of[3..], &curve), 0.0);
}

/// Issue 37: what each further client adds grows with the message's per-byte work beyond the rows' size
/// (4 R3 publishers at 16 KiB were priced 24.5 % high with the 128 B rows' D); no growth at or below it.
#[test]
fn saturation_grows_with_the_per_byte_work_of_larger_messages() {
    let host = lab_host("lab");
    let leader = class(&host, 1e-9);
    let l = law(&[(1.0, 300e-6), (4.0, 540e-6), (16.0, 1000e-6)], Some(50e-6));
    let hosts = vec![SyncHost {
        id: "lab".into(),
        host: host.clone(),
        host_assumed: false,
        laws: vec![l.clone()],
        always_laws: vec![],
    }];
    let d_at = |bytes: f64| {
        price(
            &hosts,
            std::slice::from_ref(&leader),
            &target(&host, &leader, bytes, false),
            SyncOp::Publish,
        )
        .unwrap()
        .saturation_s
        .unwrap()
    };
    let rows = l.saturation_at(16.0).unwrap();
    assert!((d_at(64.0) - rows).abs() < 1e-15 && (d_at(128.0) - rows).abs() < 1e-15);
    // 16 KiB: the leader's time per message (40 µs at the target size) less its share at 128 B.
    let u = |b: f64| 10e-6 + 1e-9 * b;
    let want = rows + 40e-6 * (1.0 - u(128.0) / u(16384.0));
    assert!((d_at(16384.0) - want).abs() < 1e-15, "{} vs {want}", d_at(16384.0));
    assert!(d_at(16384.0) > d_at(1024.0) && d_at(1024.0) > rows);
}
